//! Each process's record, written once when it exits (by `exit`'s atexit
//! handlers or by `_exit`) to `$CINTERRUPTS_EXEC_OUT/PID.json`, whole or
//! not at all (a temporary file renamed). A forked child starts from zero
//! and writes its own.

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};

use wire::Record;

use crate::state::{config, BOOSTS, LIVE};

static WRITTEN: AtomicBool = AtomicBool::new(false);

/// Files on a disk mapped shared and writable by this process: their
/// dirty pages reach the disk by the kernel's write-back, never through a
/// call the library sees (issue 38 item 5, named in `not_routed`).
static MMAP_WRITE_BACK: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// `mmap(.., prot, flags, fd, ..)` as the program made it: counted when
/// it maps a regular file on a disk's file system shared and writable
/// (tmpfs, ramfs and hugetlbfs, a memfd's among them, have no write-back
/// to a disk: statfs(2)'s magic numbers).
pub(crate) fn mapped(prot: libc::c_int, flags: libc::c_int, fd: libc::c_int) {
    const TMPFS_MAGIC: i64 = 0x0102_1994;
    const RAMFS_MAGIC: i64 = 0x8584_58f6;
    const HUGETLBFS_MAGIC: i64 = 0x9584_58f6;
    if fd < 0
        || prot & libc::PROT_WRITE == 0
        || flags & libc::MAP_SHARED == 0
        || flags & libc::MAP_ANONYMOUS != 0
    {
        return;
    }
    // SAFETY: fstat and fstatfs fill structs of ours.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd, &mut st) } != 0 || st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return;
    }
    let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatfs(fd, &mut fs) } != 0
        || [TMPFS_MAGIC, RAMFS_MAGIC, HUGETLBFS_MAGIC].contains(&(fs.f_type as i64))
    {
        return;
    }
    MMAP_WRITE_BACK.fetch_add(1, SeqCst);
}

/// The program this image ran without the library, if it did.
static UNLOADED: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// The process this image's counts belong to: a `vfork` child shares
/// them (no fork handler runs for it), and must not write them as its own.
static OWNER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// Writes this process's record, once.
pub(crate) fn write_once() {
    let Some(c) = config() else { return };
    if WRITTEN.swap(true, SeqCst) {
        return;
    }
    crate::route::release_mine();
    write(c, &format!("{}.json", std::process::id()));
}

/// Before an `execve`: this image's counts written as a record of their
/// own (`PID.NS.json`, NS of CLOCK_MONOTONIC: the next image writes
/// `PID.json` or its own), then started again from zero, so that a failed
/// `execve` counts nothing twice (issue 38 item 5: the I/O a program did
/// before it ran another was missing from the report).
///
/// `path` and `envp` are the call's (`envp` null: this process's
/// `environ`): a program run with an environment whose `LD_PRELOAD` does
/// not name the library (`env -u LD_PRELOAD`) is recorded, so that exec
/// says its I/O went unseen.
pub(crate) fn before_exec(path: *const libc::c_char, envp: *const *const libc::c_char) {
    let Some(c) = config() else { return };
    if WRITTEN.load(SeqCst) || OWNER.load(SeqCst) != std::process::id() {
        return;
    }
    extern "C" {
        static environ: *const *const libc::c_char;
    }
    // SAFETY: `environ` is glibc's; the strings are the caller's,
    // NUL-terminated, the array null-terminated.
    let envp = if envp.is_null() {
        unsafe { environ }
    } else {
        envp
    };
    let mut loaded = false;
    let mut k = 0;
    while !envp.is_null() {
        let e = unsafe { *envp.add(k) };
        if e.is_null() {
            break;
        }
        let e = unsafe { std::ffi::CStr::from_ptr(e) }.to_bytes();
        if let Some(v) = e.strip_prefix(b"LD_PRELOAD=") {
            // This cdylib's own file name, as cargo names it.
            let me = concat!("lib", env!("CARGO_CRATE_NAME"), ".so").as_bytes();
            loaded = v.windows(me.len()).any(|w| w == me);
        }
        k += 1;
    }
    if !loaded && !path.is_null() {
        // SAFETY: the caller's NUL-terminated path.
        let p = unsafe { std::ffi::CStr::from_ptr(path) };
        if let Ok(mut u) = UNLOADED.lock() {
            *u = Some(p.to_string_lossy().into_owned());
        }
    }
    // An image with nothing to say (bash's fork child before it runs the
    // command) writes nothing: the next image's record is the process's.
    let quiet = LIVE.snapshot() == wire::Counts::default()
        && MMAP_WRITE_BACK.load(SeqCst) == 0
        && UNLOADED.lock().map_or(true, |u| u.is_none())
        && !crate::route::saw_io_uring()
        && crate::route::io_uring_refused() == 0
        && crate::uring::refusals().is_empty();
    if quiet {
        return;
    }
    // SAFETY: clock_gettime fills the struct.
    let mut t: libc::timespec = unsafe { std::mem::zeroed() };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    let ns = t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64;
    write(c, &format!("{}.{ns}.json", std::process::id()));
    LIVE.reset();
    MMAP_WRITE_BACK.store(0, SeqCst);
}

/// This image's record, written as `dst` in the counts directory.
fn write(c: &wire::Config, dst: &str) {
    // A ring set up without glibc's `syscall()` (liburing's own system
    // call stubs) is still seen here, once, if it is open at the exit.
    let ring = std::fs::read_dir("/proc/self/fd").is_ok_and(|d| {
        d.flatten().any(|e| {
            let ours = e
                .file_name()
                .to_str()
                .and_then(|n| n.parse().ok())
                .is_some_and(crate::uring::is_shadow);
            !ours
                && std::fs::read_link(e.path())
                    .is_ok_and(|l| l.as_os_str() == "anon_inode:[io_uring]")
        })
    });
    if ring {
        crate::route::say_once_io_uring();
    }
    let rec = Record {
        pid: std::process::id(),
        // SAFETY: getppid cannot fail.
        ppid: unsafe { libc::getppid() } as u32,
        exe: std::fs::read_link("/proc/self/exe")
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default(),
        title: crate::facts::read_title()
            .as_str()
            .unwrap_or_default()
            .to_string(),
        counts: LIVE.snapshot(),
        boosted: BOOSTS.lock().map(|b| b.clone()).unwrap_or_default(),
        comm: std::fs::read_to_string("/proc/self/comm")
            .map(|c| c.trim_end().to_string())
            .unwrap_or_default(),
        // SAFETY: getuid cannot fail.
        uid: unsafe { libc::getuid() },
        unmapped: crate::route::unmapped(),
        io_uring: crate::route::saw_io_uring(),
        io_uring_refused: crate::route::io_uring_refused(),
        io_uring_features_refused: crate::uring::refusals(),
        io_uring_untrapped: crate::uring::UNTRAPPED.get().cloned(),
        mmap_write_back: MMAP_WRITE_BACK.load(SeqCst),
        ran_unseen: UNLOADED.lock().ok().and_then(|mut u| u.take()),
    };
    let Ok(text) = serde_json::to_vec(&rec) else {
        return;
    };
    let tmp = format!(".{}.tmp", rec.pid);
    if let Some(dir) = c.out_fd.filter(|&(fd, ino)| is_dir(fd, ino)) {
        if write_at(dir.0, &tmp, dst, &text).is_ok() {
            return;
        }
    }
    if std::fs::write(c.out.join(&tmp), text).is_ok() {
        let _ = std::fs::rename(c.out.join(&tmp), c.out.join(dst));
    } else {
        crate::route::say(&format!(
            "process {} ({}) could not write its counts to {}: they are missing from the report",
            rec.pid,
            rec.comm,
            c.out.display()
        ));
    }
}

/// Whether `fd` is still exec's counts directory (the program may have
/// closed the inherited descriptor and reused its number).
fn is_dir(fd: libc::c_int, ino: u64) -> bool {
    // SAFETY: fstat fills the struct; a closed descriptor returns -1.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::fstat(fd, &mut st) } == 0;
    ok && st.st_ino == ino && st.st_mode & libc::S_IFMT == libc::S_IFDIR
}

/// `text` written to `tmp` in the directory `dir`, renamed to `dst`:
/// through the descriptor, whatever user this process has become.
fn write_at(dir: libc::c_int, tmp: &str, dst: &str, text: &[u8]) -> std::io::Result<()> {
    use std::ffi::CString;
    use std::io::Write;
    use std::os::fd::FromRawFd;
    let (t, d) = (
        CString::new(tmp).expect("no NUL"),
        CString::new(dst).expect("no NUL"),
    );
    // SAFETY: NUL-terminated names relative to an open directory.
    let fd = unsafe {
        libc::openat(
            dir,
            t.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_CLOEXEC,
            0o644,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the descriptor just opened, ours to close.
    let mut f = unsafe { std::fs::File::from_raw_fd(fd) };
    f.write_all(text)?;
    drop(f);
    // SAFETY: as above.
    if unsafe { libc::renameat(dir, t.as_ptr(), dir, d.as_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

extern "C" fn at_exit() {
    write_once();
}

extern "C" fn in_child() {
    OWNER.store(std::process::id(), SeqCst);
    LIVE.reset();
    crate::facts::forked();
    WRITTEN.store(false, SeqCst);
    // A child's mappings are its parent's (the parent named them).
    MMAP_WRITE_BACK.store(0, SeqCst);
    crate::uring::forget_in_child();
    crate::route::forget_in_child();
    // Its parent's libaio contexts are not the child's (the kernel does
    // not share them across fork); the twin descriptors are inherited.
    crate::aio::forget_in_child();
    if let Ok(mut b) = BOOSTS.lock() {
        b.clear();
    }
}

extern "C" fn init() {
    if config().is_none() {
        return;
    }
    OWNER.store(std::process::id(), SeqCst);
    // SAFETY: registering plain extern "C" functions.
    unsafe {
        libc::atexit(at_exit);
        libc::pthread_atfork(None, None, Some(in_child));
    }
    if crate::uring::routing() {
        // Not said here: most processes that cannot install it (one that
        // became another user: `runuser -u postgres`) never make a ring;
        // exec names it for those that did (issue 38 item 5).
        if let Err(why) = crate::uring::trap::install() {
            let _ = crate::uring::UNTRAPPED.set(why);
        }
    }
}

/// Runs [`init`] when the library is loaded (before the program's main).
#[used]
#[link_section = ".init_array"]
static INIT: extern "C" fn() = init;
