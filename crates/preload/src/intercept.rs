//! The interposed C symbols. Each one classifies the call (direct or not,
//! its kind and marks), counts it, and calls the next definition of the
//! same symbol (libc's) with the same arguments (libaio's functions and
//! the aio system calls are answered by `crate::aio`), RWF_URGENT and RWF_BARRIER taken out: the authors' kernel
//! (Linux 5.0.8, `cinterrupts-01-basis.patch`) gave 0x20 and 0x40 these
//! meanings; a kernel of today reads them as RWF_NOAPPEND and RWF_ATOMIC.
//!
//! x86_64 Linux with glibc only (the symbol names and the iocb layout).

use std::ffi::{c_char, c_int, c_long, c_void};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use libc::{iovec, off_t, size_t, ssize_t};

use wire::{Family, Kind};

use crate::aio;
use crate::blocking::{at_offset, blocking, flush, positioned_at};
use crate::classify::keep;
use crate::route;

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

/// The calls at the file offset: each one the program's own call, routed
/// (`at_offset`).
macro_rules! at_file_offset {
    ($($name:ident, $sym:literal, $kind:expr, $buf:ty, $n:ty);*) => {$(
        #[no_mangle]
        pub extern "C" fn $name(fd: c_int, buf: $buf, n: $n) -> ssize_t {
            let call = || forward!($sym, fn(c_int, $buf, $n) -> ssize_t, -1, fd, buf, n);
            if crate::uring::is_ring(fd) {
                // A routed ring's memfd reads and writes as the ring would
                // not (`uring::is_ring`).
                route::set_errno(libc::EINVAL);
                return -1;
            }
            if let Some(m) = blocking(fd, $kind, Family::Plain, 0) {
                if let Some(r) = at_offset(fd, m, $kind == Kind::Write, 0, call) {
                    return r;
                }
            }
            call()
        }
    )*};
}

at_file_offset!(
    read, "read", Kind::Read, *mut c_void, size_t;
    write, "write", Kind::Write, *const c_void, size_t;
    readv, "readv", Kind::Read, *const iovec, c_int;
    writev, "writev", Kind::Write, *const iovec, c_int
);

macro_rules! positioned {
    ($($name:ident, $sym:literal, $kind:expr, $buf:ty);*) => {$(
        #[no_mangle]
        pub extern "C" fn $name(fd: c_int, buf: $buf, n: size_t, off: off_t) -> ssize_t {
            let call = |d| forward!($sym, fn(c_int, $buf, size_t, off_t) -> ssize_t, -1, d, buf, n, off);
            if let Some(m) = blocking(fd, $kind, Family::Positioned, 0) {
                let write = $kind == Kind::Write;
                let bufs = crate::fd::Bufs::One(buf as usize, n);
                if let Some(r) = positioned_at(fd, m, write, off, bufs, 0, call) {
                    return r;
                }
            }
            call(fd)
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
            let call = |d| forward!($sym, fn(c_int, *const iovec, c_int, off_t) -> ssize_t, -1, d, iov, cnt, off);
            if let Some(m) = blocking(fd, $kind, Family::Positioned, 0) {
                let write = $kind == Kind::Write;
                let bufs = crate::fd::Bufs::Vec(iov, cnt);
                if let Some(r) = positioned_at(fd, m, write, off, bufs, 0, call) {
                    return r;
                }
            }
            call(fd)
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
            let marks = blocking(fd, $kind, Family::Positioned, flags);
            let flags = flags & keep();
            let call = |d, off| forward!($sym, fn(c_int, *const iovec, c_int, off_t, c_int) -> ssize_t, -1,
                d, iov, cnt, off, flags);
            if let Some(m) = marks {
                let write = $kind == Kind::Write;
                // Offset -1: the file offset, as preadv2 reads it.
                let r = if off == -1 {
                    at_offset(fd, m, write, flags, || call(fd, -1))
                } else {
                    let bufs = crate::fd::Bufs::Vec(iov, cnt);
                    positioned_at(fd, m, write, off, bufs, flags, |d| call(d, off))
                };
                if let Some(r) = r {
                    return r;
                }
            }
            call(fd, off)
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
    let call = || forward!("fsync", fn(c_int) -> c_int, -1, fd);
    flushed(fd, call)
}

/// A flush routed: the data is made durable by the program's own call,
/// then a flush command (a zero-length write, Urgent under Table 1) goes
/// through the device.
fn flushed(fd: c_int, call: impl Fn() -> c_int) -> c_int {
    if let Some(m) = flush(fd) {
        if let Some(r) = route::flush_blocking(m, || call() as isize) {
            return r as c_int;
        }
    }
    call()
}

#[no_mangle]
pub extern "C" fn fdatasync(fd: c_int) -> c_int {
    let call = || forward!("fdatasync", fn(c_int) -> c_int, -1, fd);
    flushed(fd, call)
}

/// glibc's `syscall()`: the raw form of `preadv2`/`pwritev2` (the authors'
/// RocksDB patch calls them so, with RWF_URGENT and RWF_BARRIER) is seen
/// like the wrappers; the io_uring calls fail with ENOSYS under
/// `--io-uring refuse`; every other number passes straight through.
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
    let call = |a1, a6| {
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
    };
    // --io-uring refuse: the kernel is not called (issue 25 item 1).
    let io_uring = [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ];
    if io_uring.contains(&n) && route::refuse_io_uring(n) {
        route::set_errno(wire::IO_URING_REFUSED_ERRNO);
        return -1;
    }
    if io_uring.contains(&n) && a6 != shm::OWN_CALL as c_long {
        let a = [a1, a2, a3, a4, a5, a6].map(|x| x as u64);
        if let Some(r) = crate::uring::dispatch(n, a) {
            if r < 0 {
                route::set_errno(-r as c_int);
                return -1;
            }
            return r as c_long;
        }
        if n == libc::SYS_io_uring_setup {
            route::say_once_io_uring();
        }
    }
    if let Some(r) = aio_syscall(n, [a1, a2, a3, a4, a5, a6]) {
        return r;
    }
    // The raw forms of close, close_range, dup2 and dup3: as the wrappers
    // (the library's knowledge of the descriptors they close goes first).
    match n {
        libc::SYS_close => closing(a1 as c_int),
        libc::SYS_close_range => closing_range(a1 as u32, a2 as u32, a3 as c_int),
        libc::SYS_dup2 | libc::SYS_dup3 if a1 != a2 => closing(a2 as c_int),
        _ => {}
    }
    if n != libc::SYS_preadv2 && n != libc::SYS_pwritev2 {
        return call(a1, a6);
    }
    let kind = if n == libc::SYS_preadv2 {
        Kind::Read
    } else {
        Kind::Write
    };
    let flags = a6 as c_int;
    let marks = blocking(a1 as c_int, kind, Family::Positioned, flags);
    let a6 = (flags & keep()) as c_long;
    // Routed at an explicit offset (pos_h is 0 on 64-bit); offset -1 (the
    // file offset) goes to the kernel, counted.
    if let Some(m) = marks.filter(|_| a4 >= 0) {
        let write = kind == Kind::Write;
        let bufs = crate::fd::Bufs::Vec(a2 as *const iovec, a3 as c_int);
        let io = |d: c_int| call(d as c_long, a6) as isize;
        if let Some(r) = positioned_at(a1 as c_int, m, write, a4, bufs, a6 as c_int, io) {
            return r as c_long;
        }
    }
    call(a1, a6)
}

/// libaio's exported functions, interposed (a program linked to libaio
/// calls them through the PLT): each one is `crate::aio`'s, with libaio's
/// convention (a negative errno returned). Never forwarded to libaio,
/// whose functions make their system calls inline.
#[no_mangle]
pub extern "C" fn io_setup(nr: c_int, ctxp: *mut u64) -> c_int {
    aio::setup(nr as u32, ctxp) as c_int
}

#[no_mangle]
pub extern "C" fn io_destroy(ctx: u64) -> c_int {
    aio::destroy(ctx) as c_int
}

#[no_mangle]
pub extern "C" fn io_submit(ctx: u64, nr: c_long, iocbs: *mut *mut aio::Iocb) -> c_int {
    aio::submit(ctx, nr, iocbs) as c_int
}

#[no_mangle]
pub extern "C" fn io_cancel(ctx: u64, iocb: *mut aio::Iocb, ev: *mut aio::IoEvent) -> c_int {
    aio::cancel(ctx, iocb, ev) as c_int
}

#[no_mangle]
pub extern "C" fn io_getevents(
    ctx: u64,
    min_nr: c_long,
    nr: c_long,
    events: *mut aio::IoEvent,
    timeout: *mut libc::timespec,
) -> c_int {
    aio::get_events(ctx, min_nr, nr, events, timeout) as c_int
}

/// libaio's `io_pgetevents` (libaio 0.3.111) takes a plain signal set and
/// passes the kernel `{ sigmask, _NSIG / 8 }` (its io_pgetevents.c).
#[no_mangle]
pub extern "C" fn io_pgetevents(
    ctx: u64,
    min_nr: c_long,
    nr: c_long,
    events: *mut aio::IoEvent,
    timeout: *mut libc::timespec,
    sigmask: *const libc::sigset_t,
) -> c_int {
    let usig = aio::AioSigset::new(sigmask);
    let r = aio::pget_events(ctx, min_nr, nr, events, timeout, &usig).unwrap_or_else(|| {
        // A context not ours: the kernel's own call, as libaio makes it.
        // SAFETY: the program's arguments, passed on.
        let r = unsafe {
            libc::syscall(
                aio::SYS_IO_PGETEVENTS,
                ctx,
                min_nr,
                nr,
                events,
                timeout,
                &usig as *const aio::AioSigset,
            )
        };
        if r < 0 {
            -i64::from(route::errno())
        } else {
            r
        }
    });
    r as c_int
}

/// The aio system calls made through glibc's `syscall()` (MariaDB's
/// tpool, ioping): `crate::aio`'s, with `syscall()`'s convention (-1 and
/// errno). `None`: not an aio call (or the library's own, marked
/// OWN_CALL), for the kernel.
fn aio_syscall(n: c_long, a: [c_long; 6]) -> Option<c_long> {
    if a[5] == shm::OWN_CALL as c_long {
        return None;
    }
    let r = match n {
        libc::SYS_io_setup => aio::setup(a[0] as u32, a[1] as *mut u64),
        libc::SYS_io_destroy => aio::destroy(a[0] as u64),
        libc::SYS_io_submit => aio::submit(a[0] as u64, a[1], a[2] as *mut *mut aio::Iocb),
        libc::SYS_io_cancel => aio::cancel(
            a[0] as u64,
            a[1] as *mut aio::Iocb,
            a[2] as *mut aio::IoEvent,
        ),
        libc::SYS_io_getevents => aio::get_events(
            a[0] as u64,
            a[1],
            a[2],
            a[3] as *mut aio::IoEvent,
            a[4] as *const libc::timespec,
        ),
        aio::SYS_IO_PGETEVENTS => aio::pget_events(
            a[0] as u64,
            a[1],
            a[2],
            a[3] as *mut aio::IoEvent,
            a[4] as *const libc::timespec,
            a[5] as *const aio::AioSigset,
        )?,
        _ => return None,
    };
    if r < 0 {
        route::set_errno(-r as c_int);
        Some(-1)
    } else {
        Some(r as c_long)
    }
}

/// `posix_fadvise(POSIX_FADV_DONTNEED)` on a routed O_DIRECT descriptor
/// with a modelled device does nothing: the data of such a descriptor
/// lives in the page cache (its twin's), which is the modelled device's
/// medium here, not a cache a kernel's O_DIRECT would bypass. fio calls it
/// at every job's start (invalidate=1, its default); passed on, the first
/// reads of the run missed the cache and went to this VM's disk (~30 us
/// each): the data transfer took 7.6-9.4 us per 4 KiB read instead of
/// 1.9-2.0 us with invalidate=0 (CINTERRUPTS_PRELOAD_TIMING=1, fio psync,
/// examples/crossval/psync-qd1.fio).
#[no_mangle]
pub extern "C" fn posix_fadvise(fd: c_int, off: off_t, len: off_t, advice: c_int) -> c_int {
    if advice == libc::POSIX_FADV_DONTNEED && route::cache_is_the_device(fd) {
        return 0;
    }
    forward!(
        "posix_fadvise",
        fn(c_int, off_t, off_t, c_int) -> c_int,
        libc::ENOSYS,
        fd,
        off,
        len,
        advice
    )
}

#[no_mangle]
pub extern "C" fn posix_fadvise64(fd: c_int, off: off_t, len: off_t, advice: c_int) -> c_int {
    if advice == libc::POSIX_FADV_DONTNEED && route::cache_is_the_device(fd) {
        return 0;
    }
    forward!(
        "posix_fadvise64",
        fn(c_int, off_t, off_t, c_int) -> c_int,
        libc::ENOSYS,
        fd,
        off,
        len,
        advice
    )
}

/// `mmap` of a routed io_uring ring's descriptor maps what the kernel's
/// offsets name (`uring::mmap_target`: IORING_OFF_CQ_RING is the SQ
/// ring's pages, as in the kernel's single `struct io_rings`); any other
/// mapping is the program's own call.
#[no_mangle]
pub extern "C" fn mmap(
    addr: *mut c_void,
    len: size_t,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    off: off_t,
) -> *mut c_void {
    let (fd, off) = if fd >= 0 {
        match crate::uring::mmap_target(fd, off) {
            Some(t) => t,
            None => {
                crate::report::mapped(prot, flags, fd);
                (fd, off)
            }
        }
    } else {
        (fd, off)
    };
    forward!(
        "mmap",
        fn(*mut c_void, size_t, c_int, c_int, c_int, off_t) -> *mut c_void,
        libc::MAP_FAILED,
        addr,
        len,
        prot,
        flags,
        fd,
        off
    )
}

#[no_mangle]
pub extern "C" fn mmap64(
    addr: *mut c_void,
    len: size_t,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    off: off_t,
) -> *mut c_void {
    mmap(addr, len, prot, flags, fd, off)
}

/// The `exec` family that a program calls through the PLT (glibc's own
/// `execl*`, `posix_spawn` and `system` call its internal `__execve`, which
/// is not seen): this image's record is written first (`report::
/// before_exec`), as at an exit.
type Argv = *const *const c_char;

#[no_mangle]
pub extern "C" fn execve(path: *const c_char, argv: Argv, envp: Argv) -> c_int {
    crate::report::before_exec(path, envp);
    forward!(
        "execve",
        fn(*const c_char, Argv, Argv) -> c_int,
        -1,
        path,
        argv,
        envp
    )
}

#[no_mangle]
pub extern "C" fn execv(path: *const c_char, argv: Argv) -> c_int {
    crate::report::before_exec(path, std::ptr::null());
    forward!("execv", fn(*const c_char, Argv) -> c_int, -1, path, argv)
}

#[no_mangle]
pub extern "C" fn execvp(file: *const c_char, argv: Argv) -> c_int {
    crate::report::before_exec(file, std::ptr::null());
    forward!("execvp", fn(*const c_char, Argv) -> c_int, -1, file, argv)
}

#[no_mangle]
pub extern "C" fn execvpe(file: *const c_char, argv: Argv, envp: Argv) -> c_int {
    crate::report::before_exec(file, envp);
    forward!(
        "execvpe",
        fn(*const c_char, Argv, Argv) -> c_int,
        -1,
        file,
        argv,
        envp
    )
}

#[no_mangle]
pub extern "C" fn fexecve(fd: c_int, argv: Argv, envp: Argv) -> c_int {
    crate::report::before_exec(c"(a descriptor)".as_ptr(), envp);
    forward!(
        "fexecve",
        fn(c_int, Argv, Argv) -> c_int,
        -1,
        fd,
        argv,
        envp
    )
}

/// The program closes `fd` (or `dup2`/`dup3` replace it): a routed
/// ring's descriptor leaves the rings' table, then the descriptor's entry
/// goes, with its twin.
fn closing(fd: c_int) {
    crate::uring::closing(fd);
    crate::fd::closing(fd);
}

/// `close`: the library's knowledge of the descriptor goes first (a
/// number reused for another file is looked up again; its page-cache twin
/// is closed).
#[no_mangle]
pub extern "C" fn close(fd: c_int) -> c_int {
    closing(fd);
    forward!("close", fn(c_int) -> c_int, -1, fd)
}

/// `fclose` closes its descriptor with glibc's internal close, which the
/// library does not see: as `close` (the check of the cached state at
/// each call would find it too, but the twin would stay open until then).
#[no_mangle]
pub extern "C" fn fclose(f: *mut libc::FILE) -> c_int {
    if !f.is_null() {
        // SAFETY: the program's stream, which fclose takes.
        let fd = unsafe { libc::fileno(f) };
        if fd >= 0 {
            closing(fd);
        }
    }
    forward!("fclose", fn(*mut libc::FILE) -> c_int, libc::EOF, f)
}

/// `fcntl(F_SETFL)` can turn O_APPEND or O_DIRECT on or off: the
/// library's knowledge of the descriptor follows (`route::flags_changed`). `fcntl` is variadic; on
/// x86_64 its third argument, an integer or a pointer, is passed in the
/// same register as a plain one's, and passed on unchanged.
#[cfg(target_arch = "x86_64")]
#[no_mangle]
pub extern "C" fn fcntl(fd: c_int, cmd: c_int, arg: c_long) -> c_int {
    let r = forward!("fcntl", fn(c_int, c_int, c_long) -> c_int, -1, fd, cmd, arg);
    if cmd == libc::F_SETFL && r == 0 {
        crate::fd::flags_changed(fd);
    }
    r
}

#[cfg(target_arch = "x86_64")]
#[no_mangle]
pub extern "C" fn fcntl64(fd: c_int, cmd: c_int, arg: c_long) -> c_int {
    let r = forward!(
        "fcntl64",
        fn(c_int, c_int, c_long) -> c_int,
        -1,
        fd,
        cmd,
        arg
    );
    if cmd == libc::F_SETFL && r == 0 {
        crate::fd::flags_changed(fd);
    }
    r
}

/// `dup2`/`dup3` close `new` when it is open: as `close`.
#[no_mangle]
pub extern "C" fn dup2(old: c_int, new: c_int) -> c_int {
    if old != new {
        closing(new);
    }
    forward!("dup2", fn(c_int, c_int) -> c_int, -1, old, new)
}

#[no_mangle]
pub extern "C" fn dup3(old: c_int, new: c_int, flags: c_int) -> c_int {
    if old != new {
        closing(new);
    }
    forward!(
        "dup3",
        fn(c_int, c_int, c_int) -> c_int,
        -1,
        old,
        new,
        flags
    )
}

/// `close_range` (glibc 2.34): every descriptor of the range, as `close`
/// (with CLOSE_RANGE_CLOEXEC nothing closes now; an exec starts the
/// library afresh).
#[no_mangle]
pub extern "C" fn close_range(first: u32, last: u32, flags: c_int) -> c_int {
    closing_range(first, last, flags);
    forward!(
        "close_range",
        fn(u32, u32, c_int) -> c_int,
        -1,
        first,
        last,
        flags
    )
}

fn closing_range(first: u32, last: u32, flags: c_int) {
    const CLOSE_RANGE_CLOEXEC: c_int = 1 << 2;
    if flags & CLOSE_RANGE_CLOEXEC == 0 {
        for fd in first..=last.min(4095) {
            closing(fd as c_int);
        }
    }
}

/// `closefrom` (glibc 2.34) closes through glibc's internal close_range,
/// which the library does not see: as `close_range(lowfd, ~0U, 0)`.
#[no_mangle]
pub extern "C" fn closefrom(lowfd: c_int) {
    if lowfd >= 0 {
        closing_range(lowfd as u32, u32::MAX, 0);
    }
    forward!("closefrom", fn(c_int) -> (), (), lowfd)
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
