//! The interposed C symbols. Each one classifies the call (direct or not,
//! its kind and marks), counts it, and calls the next definition of the
//! same symbol (libc's, or libaio's for `io_submit`) with the same
//! arguments, RWF_URGENT and RWF_BARRIER taken out: the authors' kernel
//! (Linux 5.0.8, `cinterrupts-01-basis.patch`) gave 0x20 and 0x40 these
//! meanings; a kernel of today reads them as RWF_NOAPPEND and RWF_ATOMIC.
//!
//! x86_64 Linux with glibc only (the symbol names and the iocb layout).

use std::ffi::{c_char, c_int, c_long, c_void};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::OnceLock;

use jobs::{Call, RwfFlags};
use libc::{iovec, off_t, size_t, ssize_t};
use policy::Marks;

use exec::{Config, Family, Kind, Live, Target};

/// RWF_NOWAIT (Linux uapi fs.h).
const RWF_NOWAIT: c_int = 0x08;
/// The authors' kernel's flags (TOS 4.1.2; their RocksDB patch passes them
/// to preadv2/pwritev2 through the raw system call).
const RWF_URGENT: c_int = 0x20;
const RWF_BARRIER: c_int = 0x40;

pub(crate) static LIVE: Live = Live::new();
pub(crate) static CONFIG: OnceLock<Option<Config>> = OnceLock::new();

pub(crate) fn config() -> Option<&'static Config> {
    CONFIG.get_or_init(Config::from_env).as_ref()
}

/// The next definition of `name` (NUL-terminated), looked up once.
fn next(slot: &AtomicUsize, name: &[u8]) -> usize {
    let mut p = slot.load(Relaxed);
    if p == 0 {
        // SAFETY: dlsym with RTLD_NEXT and a NUL-terminated name.
        p = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr() as *const c_char) } as usize;
        slot.store(p, Relaxed);
    }
    p
}

/// Calls the next definition of the symbol, or fails with ENOSYS if there
/// is none.
macro_rules! forward {
    ($name:literal, fn($($t:ty),*) -> $r:ty, $fail:expr, $($arg:expr),*) => {{
        static SLOT: AtomicUsize = AtomicUsize::new(0);
        let p = next(&SLOT, concat!($name, "\0").as_bytes());
        if p == 0 {
            // SAFETY: errno is thread-local.
            unsafe { *libc::__errno_location() = libc::ENOSYS };
            $fail
        } else {
            // SAFETY: p is the address of the C function `$name`, whose
            // signature this is.
            let f: unsafe extern "C" fn($($t),*) -> $r = unsafe { std::mem::transmute(p) };
            unsafe { f($($arg),*) }
        }
    }};
}

fn is_direct(fd: c_int) -> bool {
    // SAFETY: F_GETFL takes no pointer; a bad fd returns -1.
    let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    fl != -1 && fl & libc::O_DIRECT != 0
}

fn thread_name() -> Option<String> {
    let mut buf = [0u8; 16];
    // SAFETY: PR_GET_NAME writes at most 16 bytes, NUL-terminated.
    let r = unsafe { libc::prctl(libc::PR_GET_NAME, buf.as_mut_ptr()) };
    if r != 0 {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Some(String::from_utf8_lossy(&buf[..end]).into_owned())
}

fn file_path(fd: c_int) -> Option<String> {
    std::fs::read_link(format!("/proc/self/fd/{fd}"))
        .ok()
        .map(|p| p.to_string_lossy().into_owned())
}

/// A request's marks: `exec`'s rules first (they stand for the
/// application patches the paper made, TOS 5.4), then the application's
/// flags, then the kernel's defaults.
fn marks_of(c: &Config, fd: c_int, flags: RwfFlags, call: Call) -> Marks {
    let thread = c.has(Target::Thread).then(thread_name).flatten();
    let file = c.has(Target::File).then(|| file_path(fd)).flatten();
    if let Some(m) = c.rule_for(thread.as_deref(), file.as_deref()) {
        return m.marks();
    }
    flags.to_marks().unwrap_or_else(|| c.default_marks.of(call))
}

fn rwf(flags: c_int) -> RwfFlags {
    RwfFlags {
        urgent: flags & RWF_URGENT != 0,
        barrier: flags & RWF_BARRIER != 0,
    }
}

/// Counts one blocking call on `fd` if it is direct.
fn blocking(fd: c_int, kind: Kind, family: Family, flags: c_int) {
    let Some(c) = config() else { return };
    if !is_direct(fd) {
        return;
    }
    let call = Call::Blocking {
        nowait: flags & RWF_NOWAIT != 0,
    };
    LIVE.call(family);
    LIVE.request(kind, marks_of(c, fd, rwf(flags), call));
}

fn flush(fd: c_int) {
    let Some(c) = config() else { return };
    if !is_direct(fd) {
        return;
    }
    LIVE.call(Family::Flush);
    LIVE.request(Kind::Flush, marks_of(c, fd, RwfFlags::NONE, Call::Flush));
}

const KEEP: c_int = !(RWF_URGENT | RWF_BARRIER);

#[no_mangle]
pub extern "C" fn read(fd: c_int, buf: *mut c_void, n: size_t) -> ssize_t {
    blocking(fd, Kind::Read, Family::Plain, 0);
    forward!(
        "read",
        fn(c_int, *mut c_void, size_t) -> ssize_t,
        -1,
        fd,
        buf,
        n
    )
}

#[no_mangle]
pub extern "C" fn write(fd: c_int, buf: *const c_void, n: size_t) -> ssize_t {
    blocking(fd, Kind::Write, Family::Plain, 0);
    forward!(
        "write",
        fn(c_int, *const c_void, size_t) -> ssize_t,
        -1,
        fd,
        buf,
        n
    )
}

#[no_mangle]
pub extern "C" fn readv(fd: c_int, iov: *const iovec, cnt: c_int) -> ssize_t {
    blocking(fd, Kind::Read, Family::Plain, 0);
    forward!(
        "readv",
        fn(c_int, *const iovec, c_int) -> ssize_t,
        -1,
        fd,
        iov,
        cnt
    )
}

#[no_mangle]
pub extern "C" fn writev(fd: c_int, iov: *const iovec, cnt: c_int) -> ssize_t {
    blocking(fd, Kind::Write, Family::Plain, 0);
    forward!(
        "writev",
        fn(c_int, *const iovec, c_int) -> ssize_t,
        -1,
        fd,
        iov,
        cnt
    )
}

macro_rules! positioned {
    ($($name:ident, $sym:literal, $kind:expr, $buf:ty);*) => {$(
        #[no_mangle]
        pub extern "C" fn $name(fd: c_int, buf: $buf, n: size_t, off: off_t) -> ssize_t {
            blocking(fd, $kind, Family::Positioned, 0);
            forward!($sym, fn(c_int, $buf, size_t, off_t) -> ssize_t, -1, fd, buf, n, off)
        }
    )*};
}

positioned!(
    pread, "pread", Kind::Read, *mut c_void;
    pread64, "pread64", Kind::Read, *mut c_void;
    pwrite, "pwrite", Kind::Write, *const c_void;
    pwrite64, "pwrite64", Kind::Write, *const c_void
);

macro_rules! vectored {
    ($($name:ident, $sym:literal, $kind:expr);*) => {$(
        #[no_mangle]
        pub extern "C" fn $name(fd: c_int, iov: *const iovec, cnt: c_int, off: off_t) -> ssize_t {
            blocking(fd, $kind, Family::Positioned, 0);
            forward!($sym, fn(c_int, *const iovec, c_int, off_t) -> ssize_t, -1, fd, iov, cnt, off)
        }
    )*};
}

vectored!(
    preadv, "preadv", Kind::Read;
    preadv64, "preadv64", Kind::Read;
    pwritev, "pwritev", Kind::Write;
    pwritev64, "pwritev64", Kind::Write
);

macro_rules! vectored2 {
    ($($name:ident, $sym:literal, $kind:expr);*) => {$(
        #[no_mangle]
        pub extern "C" fn $name(
            fd: c_int,
            iov: *const iovec,
            cnt: c_int,
            off: off_t,
            flags: c_int,
        ) -> ssize_t {
            blocking(fd, $kind, Family::Positioned, flags);
            let flags = flags & KEEP;
            forward!($sym, fn(c_int, *const iovec, c_int, off_t, c_int) -> ssize_t, -1,
                fd, iov, cnt, off, flags)
        }
    )*};
}

vectored2!(
    preadv2, "preadv2", Kind::Read;
    preadv64v2, "preadv64v2", Kind::Read;
    pwritev2, "pwritev2", Kind::Write;
    pwritev64v2, "pwritev64v2", Kind::Write
);

#[no_mangle]
pub extern "C" fn fsync(fd: c_int) -> c_int {
    flush(fd);
    forward!("fsync", fn(c_int) -> c_int, -1, fd)
}

#[no_mangle]
pub extern "C" fn fdatasync(fd: c_int) -> c_int {
    flush(fd);
    forward!("fdatasync", fn(c_int) -> c_int, -1, fd)
}

/// glibc's `syscall()`: the raw form of `preadv2`/`pwritev2` (the authors'
/// RocksDB patch calls them so, with RWF_URGENT and RWF_BARRIER) is seen
/// like the wrappers; every other number passes straight through.
///
/// `syscall` is variadic; on x86_64 a variadic call passes its integer
/// arguments in the same registers and stack slots as a plain one, so the
/// seven-argument form reads them all (a slot the caller did not fill is
/// read but never used) and passes them on unchanged.
#[cfg(target_arch = "x86_64")]
#[no_mangle]
pub extern "C" fn syscall(
    n: c_long,
    a1: c_long,
    a2: c_long,
    a3: c_long,
    a4: c_long,
    a5: c_long,
    a6: c_long,
) -> c_long {
    // preadv2(fd, iov, vlen, pos_l, pos_h, flags): flags is the sixth.
    let mut a6 = a6;
    if n == libc::SYS_preadv2 || n == libc::SYS_pwritev2 {
        let kind = if n == libc::SYS_preadv2 {
            Kind::Read
        } else {
            Kind::Write
        };
        let flags = a6 as c_int;
        blocking(a1 as c_int, kind, Family::Positioned, flags);
        a6 = (flags & KEEP) as c_long;
    }
    forward!(
        "syscall",
        fn(c_long, c_long, c_long, c_long, c_long, c_long, c_long) -> c_long,
        -1,
        n,
        a1,
        a2,
        a3,
        a4,
        a5,
        a6
    )
}

/// The kernel's `struct iocb` (uapi linux/aio_abi.h, little endian), which
/// libaio passes through unchanged.
#[repr(C)]
#[allow(dead_code)] // the layout is the kernel's; not every field is read
pub struct Iocb {
    aio_data: u64,
    aio_key: u32,
    aio_rw_flags: c_int,
    aio_lio_opcode: u16,
    aio_reqprio: i16,
    aio_fildes: u32,
    aio_buf: u64,
    aio_nbytes: u64,
    aio_offset: i64,
    aio_reserved2: u64,
    aio_flags: u32,
    aio_resfd: u32,
}

/// IOCB_CMD_PREAD, PWRITE, FSYNC, FDSYNC, PREADV, PWRITEV.
fn iocb_kind(op: u16) -> Option<Kind> {
    match op {
        0 | 7 => Some(Kind::Read),
        1 | 8 => Some(Kind::Write),
        2 | 3 => Some(Kind::Flush),
        _ => None,
    }
}

/// libaio's `io_submit`: every iocb of the call is a request; under TOS
/// Table 1 the last one is Barrier. The flags the kernel must not see are
/// taken out for the call and put back after it (the iocbs are the
/// program's).
#[no_mangle]
pub extern "C" fn io_submit(ctx: c_long, nr: c_long, iocbs: *mut *mut Iocb) -> c_int {
    let n = if iocbs.is_null() {
        0
    } else {
        nr.max(0) as usize
    };
    let mut saved: Vec<(usize, c_int)> = Vec::new();
    if let Some(c) = config() {
        let mut counted = false;
        for i in 0..n {
            // SAFETY: the program passes nr valid iocb pointers (io_submit's
            // contract); a null one is skipped as the kernel would fault it.
            let cb = unsafe { *iocbs.add(i) };
            if cb.is_null() {
                continue;
            }
            let cb = unsafe { &mut *cb };
            let fd = cb.aio_fildes as c_int;
            let Some(kind) = iocb_kind(cb.aio_lio_opcode) else {
                continue;
            };
            if !is_direct(fd) {
                continue;
            }
            let call = if kind == Kind::Flush {
                Call::Flush
            } else {
                Call::Submit { last: i + 1 == n }
            };
            LIVE.request(kind, marks_of(c, fd, rwf(cb.aio_rw_flags), call));
            counted = true;
            if cb.aio_rw_flags & !KEEP != 0 {
                saved.push((i, cb.aio_rw_flags));
                cb.aio_rw_flags &= KEEP;
            }
        }
        if counted {
            LIVE.call(Family::IoSubmit);
        }
    }
    let r = forward!(
        "io_submit",
        fn(c_long, c_long, *mut *mut Iocb) -> c_int,
        -libc::ENOSYS,
        ctx,
        nr,
        iocbs
    );
    for (i, flags) in saved {
        // SAFETY: the same pointers as above.
        unsafe { (**iocbs.add(i)).aio_rw_flags = flags };
    }
    r
}

/// `_exit` ends a process without its atexit handlers (fio's forked jobs
/// end so): the report is written first.
#[no_mangle]
pub extern "C" fn _exit(status: c_int) -> ! {
    crate::report::write_once();
    forward!(
        "_exit",
        fn(c_int) -> !,
        unsafe {
            libc::syscall(libc::SYS_exit_group, status);
            std::process::abort()
        },
        status
    )
}
