//! What the marking rules ask of a request (`wire::marks::Facts`), learnt
//! inside the program without allocating: the calling thread's name, the
//! descriptor's path, the process's title. Each is looked up only when a
//! rule asks for it (`wire::marks::Needs`).

use std::cell::UnsafeCell;
use std::ffi::c_int;
use std::sync::atomic::{
    compiler_fence, AtomicBool, AtomicU32, Ordering::Relaxed, Ordering::SeqCst,
};

/// A name read into a buffer on the caller's stack.
pub(crate) struct Text<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> Text<N> {
    fn empty() -> Self {
        Text {
            buf: [0; N],
            len: 0,
        }
    }

    /// The text, if it is UTF-8 (thread names and paths are bytes; one that
    /// is not UTF-8 is unknown to the rules, so no glob matches it).
    pub(crate) fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.buf[..self.len]).ok()
    }
}

/// The calling thread's name, cached per thread as the title is (a
/// thread names itself once, at its start, before its I/O: RocksDB's pool
/// threads, `pthread_setname_np`): ~1.2 us per `prctl` on this VM, loaded,
/// against ~15 ns cached (`title_cost` below).
pub(crate) fn thread_name() -> Option<Text<16>> {
    let now = coarse_now_ns();
    // As `with_title`: a signal handler on this thread reads afresh.
    if IN_NAME.with(|b| b.swap(true, Relaxed)) {
        return read_thread_name();
    }
    compiler_fence(SeqCst);
    let r = NAME.with(|c| {
        // SAFETY: this thread's own copy; IN_NAME keeps a signal handler
        // on this thread out of it.
        let c = unsafe { &mut *c.get() };
        if c.empty || now.saturating_sub(c.read_ns) >= TITLE_TTL_NS {
            c.name = read_thread_name();
            c.read_ns = now;
            c.empty = false;
        }
        c.name.as_ref().map(|t| Text {
            buf: t.buf,
            len: t.len,
        })
    });
    compiler_fence(SeqCst);
    IN_NAME.with(|b| b.store(false, Relaxed));
    r
}

struct CachedName {
    read_ns: u64,
    empty: bool,
    name: Option<Text<16>>,
}

thread_local! {
    static IN_NAME: AtomicBool = const { AtomicBool::new(false) };
    static IN_TITLE: AtomicBool = const { AtomicBool::new(false) };
    static NAME: UnsafeCell<CachedName> = const {
        UnsafeCell::new(CachedName { read_ns: 0, empty: true, name: None })
    };
}

/// The calling thread's name now (`comm`: at most 15 bytes, as
/// `prctl(PR_SET_NAME)` and `pthread_setname_np` set it).
fn read_thread_name() -> Option<Text<16>> {
    let mut t = Text::<16>::empty();
    // SAFETY: PR_GET_NAME writes at most 16 bytes, NUL-terminated.
    let r = unsafe { libc::prctl(libc::PR_GET_NAME, t.buf.as_mut_ptr()) };
    if r != 0 {
        return None;
    }
    t.len = t.buf.iter().position(|&b| b == 0).unwrap_or(16);
    Some(t)
}

/// PATH_MAX (linux/limits.h): the longest path `readlink` gives.
const PATH_MAX: usize = 4096;

/// What the kernel appends to `/proc/PID/fd/N`'s link when the file was
/// unlinked while open (fs/d_path.c, `d_path`: " (deleted)").
const DELETED: &[u8] = b" (deleted)";

/// The descriptor's path (`/proc/self/fd/N`); a file unlinked while open
/// gives the path it had, so that a rule on it still applies (a file whose
/// own name ends in " (deleted)" is taken for such a one: the link cannot
/// tell them apart without an fstat per request).
pub(crate) fn file_path(fd: c_int) -> Option<Text<PATH_MAX>> {
    let mut link = [0u8; 32];
    let n = fd_link(fd, &mut link)?;
    let mut t = Text::<PATH_MAX>::empty();
    // SAFETY: a NUL-terminated path; readlink writes at most PATH_MAX bytes
    // and does not terminate them.
    let r = unsafe {
        libc::readlink(
            link[..=n].as_ptr() as *const libc::c_char,
            t.buf.as_mut_ptr() as *mut libc::c_char,
            PATH_MAX,
        )
    };
    if r <= 0 {
        return None;
    }
    t.len = r as usize;
    if t.buf[..t.len].ends_with(DELETED) {
        t.len -= DELETED.len();
    }
    Some(t)
}

/// `/proc/self/fd/FD` NUL-terminated in `out`; its length without the NUL.
fn fd_link(fd: c_int, out: &mut [u8; 32]) -> Option<usize> {
    if fd < 0 {
        return None;
    }
    const PREFIX: &[u8] = b"/proc/self/fd/";
    out[..PREFIX.len()].copy_from_slice(PREFIX);
    let mut digits = [0u8; 10];
    let (mut v, mut k) = (fd as u32, 0);
    loop {
        digits[k] = b'0' + (v % 10) as u8;
        k += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let mut n = PREFIX.len();
    for d in digits[..k].iter().rev() {
        out[n] = *d;
        n += 1;
    }
    out[n] = 0;
    Some(n)
}

/// A process title's longest form kept: PostgreSQL's titles are short
/// ("postgres: 15/main: checkpointer"); a longer command line is cut here
/// (a glob on it sees the first TITLE_MAX bytes).
const TITLE_MAX: usize = 256;

/// How long a thread keeps the title it read (ns): PostgreSQL sets a
/// server process's title once, just after its fork (`init_ps_display`),
/// and a backend's changes with each statement's state, which no preset
/// rule reads. Re-read at this period, or at once after a fork: ~6 us per
/// read on this VM (open, read and close of /proc/self/cmdline) against
/// ~40 ns for a cached one (`title_cost` below), so a thread making
/// requests pays it at most ten times a second.
const TITLE_TTL_NS: u64 = 100_000_000;

/// Bumped in every forked child (`report`'s `pthread_atfork` handler): a
/// title read before the fork is the parent's.
static FORKS: AtomicU32 = AtomicU32::new(0);

pub(crate) fn forked() {
    FORKS.fetch_add(1, Relaxed);
}

/// One thread's copy of its process's title.
struct Cached {
    forks: u32,
    read_ns: u64,
    /// Never read yet.
    empty: bool,
    title: Text<TITLE_MAX>,
}

thread_local! {
    // Per thread: no lock (a lock held across a fork by another thread
    // would stay held in the child), no allocation (a const initialiser,
    // nothing to drop).
    static TITLE: UnsafeCell<Cached> = const {
        UnsafeCell::new(Cached {
            forks: 0,
            read_ns: 0,
            empty: true,
            title: Text { buf: [0; TITLE_MAX], len: 0 },
        })
    };
}

/// CLOCK_MONOTONIC_COARSE (a vDSO read, no system call; its resolution, a
/// tick, is far finer than [`TITLE_TTL_NS`]).
fn coarse_now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime fills the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Calls `f` with the process's title (`/proc/self/cmdline`, its NULs as
/// spaces, trailing ones dropped), cached per thread (above).
pub(crate) fn with_title<R>(f: impl FnOnce(Option<&str>) -> R) -> R {
    let now = coarse_now_ns();
    let forks = FORKS.load(Relaxed);
    // A signal handler's I/O on this thread while it is in here (issue 24:
    // I/O from signal handlers is routed) reads the title afresh instead
    // of touching the copy being used.
    if IN_TITLE.with(|b| b.swap(true, Relaxed)) {
        return f(read_title().as_str());
    }
    compiler_fence(SeqCst);
    let r = TITLE.with(|c| {
        // SAFETY: this thread's own copy, and IN_TITLE keeps a signal
        // handler on this thread out of it.
        let c = unsafe { &mut *c.get() };
        if c.empty || c.forks != forks || now.saturating_sub(c.read_ns) >= TITLE_TTL_NS {
            c.title = read_title();
            c.forks = forks;
            c.read_ns = now;
            c.empty = false;
        }
        f(c.title.as_str())
    });
    compiler_fence(SeqCst);
    IN_TITLE.with(|b| b.store(false, Relaxed));
    r
}

/// The title now: the command line as the process set it (PostgreSQL
/// writes its title over argv; the kernel reads the area back), NULs as
/// spaces, trailing NULs and spaces dropped. Empty when it cannot be read.
pub(crate) fn read_title() -> Text<TITLE_MAX> {
    let mut t = Text::<TITLE_MAX>::empty();
    // SAFETY: a NUL-terminated path; the descriptor is ours and closed.
    // `read` through the raw system call: the library's own `read` would
    // classify the call first.
    unsafe {
        let fd = libc::open(
            c"/proc/self/cmdline".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return t;
        }
        let r = libc::syscall(
            libc::SYS_read,
            fd,
            t.buf.as_mut_ptr(),
            TITLE_MAX as libc::c_long,
        );
        libc::syscall(libc::SYS_close, fd);
        if r <= 0 {
            return t;
        }
        t.len = r as usize;
    }
    for b in &mut t.buf[..t.len] {
        if *b == 0 {
            *b = b' ';
        }
    }
    while t.len > 0 && t.buf[t.len - 1] == b' ' {
        t.len -= 1;
    }
    // A cut in the middle of a character: drop the partial one.
    while t.len > 0 && std::str::from_utf8(&t.buf[..t.len]).is_err() {
        t.len -= 1;
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_descriptors_link_is_spelled_out() {
        let mut b = [0u8; 32];
        let n = fd_link(1234, &mut b).unwrap();
        assert_eq!(&b[..n], b"/proc/self/fd/1234");
        assert_eq!(b[n], 0);
        let n = fd_link(0, &mut b).unwrap();
        assert_eq!(&b[..n], b"/proc/self/fd/0");
        assert!(fd_link(-1, &mut b).is_none());
    }

    #[test]
    fn an_unlinked_file_keeps_its_path() {
        let dir = std::env::temp_dir().join(format!("cint-facts-{}", std::process::id()));
        std::fs::write(&dir, b"x").unwrap();
        let f = std::fs::File::open(&dir).unwrap();
        use std::os::fd::AsRawFd;
        let before = file_path(f.as_raw_fd()).unwrap();
        std::fs::remove_file(&dir).unwrap();
        let after = file_path(f.as_raw_fd()).unwrap();
        assert_eq!(before.as_str(), dir.to_str());
        assert_eq!(after.as_str(), dir.to_str());
    }

    #[test]
    fn the_title_is_the_command_line_and_is_cached() {
        let t = read_title();
        let t = t.as_str().unwrap();
        let exe = std::env::args().next().unwrap();
        assert!(t.starts_with(&exe), "{t}");
        assert_eq!(with_title(|x| x.map(str::to_string)).as_deref(), Some(t));
    }

    /// Prints what a title costs, read and cached (`cargo test -p
    /// cinterrupts-preload --release title_cost -- --nocapture`).
    #[test]
    fn title_cost() {
        let n = 2_000;
        let t = std::time::Instant::now();
        for _ in 0..n {
            std::hint::black_box(read_title());
        }
        let read = t.elapsed().as_nanos() as f64 / n as f64;
        let n = 200_000;
        let t = std::time::Instant::now();
        for _ in 0..n {
            with_title(|x| std::hint::black_box(x.map(str::len)));
        }
        let cached = t.elapsed().as_nanos() as f64 / n as f64;
        let n = 20_000;
        let t = std::time::Instant::now();
        for _ in 0..n {
            std::hint::black_box(read_thread_name());
        }
        let thread = t.elapsed().as_nanos() as f64 / n as f64;
        let t = std::time::Instant::now();
        for _ in 0..n {
            std::hint::black_box(thread_name());
        }
        let thread_cached = t.elapsed().as_nanos() as f64 / n as f64;
        let t = std::time::Instant::now();
        for _ in 0..n {
            std::hint::black_box(file_path(1));
        }
        let file = t.elapsed().as_nanos() as f64 / n as f64;
        eprintln!(
            "title: {read:.0} ns read, {cached:.0} ns cached; thread name {thread:.0} ns read, {thread_cached:.0} ns cached; file path {file:.0} ns"
        );
    }
}
