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

use exec::marks::{Facts, Op};
use exec::{Config, Family, Fr, Kind, Live, Target};

use crate::facts;
use crate::route::{self, Tag};

/// RWF_HIPRI and RWF_NOWAIT (Linux uapi fs.h).
const RWF_HIPRI: c_int = 0x01;
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
    route::is_direct(fd)
}

/// A request's marks: the application's own RWF_URGENT/RWF_BARRIER
/// flags first (it said what it meant), then `exec`'s marking rules (they
/// stand for the application patches the paper made, TOS 5.4;
/// `exec::marks`), then the kernel's defaults. With them, FastResponse's
/// critical tag (`--critical-thread`, `--critical-file`), counted; a
/// thread's first critical request gives it `--critical-boost`. The facts
/// a rule asks for are learnt on the stack (`facts`), nothing allocated.
fn tag_of(c: &Config, fd: c_int, flags: c_int, call: Call, kind: Kind) -> Tag {
    // The program's flags decide alone: no fact is learnt for the rules
    // then (a file's path is a readlink, ~5-7 us).
    let explicit = rwf(flags).to_marks();
    let ruled = explicit.is_none();
    let thread = (ruled && c.needs.thread || c.critical_on(Target::Thread))
        .then(facts::thread_name)
        .flatten();
    let file = (ruled && c.needs.file || c.critical_on(Target::File))
        .then(|| facts::file_path(fd))
        .flatten();
    let (thread, file) = (
        thread.as_ref().and_then(|t| t.as_str()),
        file.as_ref().and_then(|t| t.as_str()),
    );
    let rule_for = |title: Option<&str>| {
        let f = Facts {
            op: match kind {
                Kind::Read => Op::Read,
                Kind::Write => Op::Write,
                Kind::Flush => Op::Flush,
            },
            thread,
            file,
            title,
        };
        c.rule_for(&f).map(|r| r.mark)
    };
    let marks = explicit.unwrap_or_else(|| {
        let rule = if c.needs.title {
            facts::with_title(rule_for)
        } else {
            rule_for(None)
        };
        match rule {
            Some(Some(m)) => m.marks(),
            // No rule, or `=> default`.
            _ => c.default_marks.of(call),
        }
    });
    let critical = c.is_critical(thread, file);
    if critical {
        LIVE.fr(Fr::Critical);
        route::boost_me();
    }
    let hipri = flags & RWF_HIPRI != 0;
    if hipri {
        LIVE.fr(Fr::Hipri);
    }
    Tag {
        marks,
        critical,
        hipri,
    }
}

fn rwf(flags: c_int) -> RwfFlags {
    RwfFlags {
        urgent: flags & RWF_URGENT != 0,
        barrier: flags & RWF_BARRIER != 0,
    }
}

/// Counts one blocking call on `fd` if it is direct, and returns its
/// request's tag then.
fn blocking(fd: c_int, kind: Kind, family: Family, flags: c_int) -> Option<Tag> {
    let c = config()?;
    if !is_direct(fd) {
        return None;
    }
    let call = Call::Blocking {
        nowait: flags & RWF_NOWAIT != 0,
    };
    LIVE.call(family);
    let tag = tag_of(c, fd, flags, call, kind);
    LIVE.request(kind, tag.marks);
    Some(tag)
}

fn flush(fd: c_int) -> Option<Tag> {
    let c = config()?;
    if !is_direct(fd) {
        return None;
    }
    LIVE.call(Family::Flush);
    let tag = tag_of(c, fd, 0, Call::Flush, Kind::Flush);
    LIVE.request(Kind::Flush, tag.marks);
    Some(tag)
}

/// The file offset of `fd` (for `read`/`write`, which use it).
fn offset_of(fd: c_int) -> i64 {
    // SAFETY: lseek takes no pointer; `lseek` is not interposed.
    unsafe { libc::lseek(fd, 0, libc::SEEK_CUR) }
}

/// A call at the file offset, routed: the program's own call on its own
/// descriptor moves the data (issue 24), so the kernel keeps the file
/// offset (serialised between threads and processes sharing it), O_APPEND,
/// O_DSYNC, the alignment's EINVAL and the end of the file; the device
/// times the completion. The command's offset is the file offset before
/// the call.
fn at_offset(
    fd: c_int,
    tag: Tag,
    write: bool,
    rwf: c_int,
    direct: impl Fn() -> isize,
) -> Option<isize> {
    let off = offset_of(fd);
    let r = route::blocking(tag, write, off.max(0) as u64, direct)?;
    Some(synced(fd, write, rwf, r))
}

/// RWF_DSYNC and RWF_SYNC (Linux uapi fs.h).
const RWF_DSYNC: c_int = 0x02;
const RWF_SYNC: c_int = 0x04;

/// A routed write that succeeded on a descriptor with O_DSYNC/O_SYNC, or
/// with RWF_DSYNC/RWF_SYNC: the kernel made it durable in the call (the
/// twin carries the flags); the device sees what Linux sends a drive
/// without FUA for it, a flush command (a zero-length write, Urgent under
/// Table 1) after the write, and the call returns once that completes.
fn synced(fd: c_int, write: bool, rwf: c_int, r: isize) -> isize {
    if !write || r < 0 || (rwf & (RWF_DSYNC | RWF_SYNC) == 0 && !route::syncs(fd)) {
        return r;
    }
    let Some(c) = config() else { return r };
    let tag = tag_of(c, fd, 0, Call::Flush, Kind::Flush);
    LIVE.request(Kind::Flush, tag.marks);
    match route::blocking(tag, true, 0, || 0) {
        Some(f) if f < 0 => f,
        _ => r,
    }
}

/// A positioned call routed: through the twin where it cannot change the
/// call's semantics (`route::twin_for`), its command posted as its data
/// moves; else the program's own call on its own descriptor, whose
/// command is posted only if the kernel did it.
fn positioned_at(
    fd: c_int,
    tag: Tag,
    write: bool,
    off: i64,
    bufs: route::Bufs,
    rwf: c_int,
    call: impl Fn(c_int) -> isize,
) -> Option<isize> {
    let len = match bufs {
        route::Bufs::One(_, n) => n as u64,
        route::Bufs::Vec(iov, cnt) => iov_len(iov, cnt),
    };
    let r = match route::twin_for(fd, write, off, &bufs, rwf) {
        Some(twin) => route::blocking_at(tag, write, fd, off as u64, len, || call(twin))?,
        None => route::blocking(tag, write, off.max(0) as u64, || call(fd))?,
    };
    Some(synced(fd, write, rwf, r))
}

const KEEP: c_int = !(RWF_URGENT | RWF_BARRIER);

/// The calls at the file offset: each one the program's own call, routed
/// (`at_offset`).
macro_rules! at_file_offset {
    ($($name:ident, $sym:literal, $kind:expr, $buf:ty, $n:ty);*) => {$(
        #[no_mangle]
        pub extern "C" fn $name(fd: c_int, buf: $buf, n: $n) -> ssize_t {
            let call = || forward!($sym, fn(c_int, $buf, $n) -> ssize_t, -1, fd, buf, n);
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
                let bufs = route::Bufs::One(buf as usize, n);
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

/// The bytes of `cnt` iovecs (0 for a bad count: routed as before).
fn iov_len(iov: *const iovec, cnt: c_int) -> u64 {
    if iov.is_null() || !(1..=1024).contains(&cnt) {
        return 0;
    }
    // SAFETY: the program's array of cnt iovecs (the call's contract).
    (0..cnt as usize)
        .map(|k| unsafe { (*iov.add(k)).iov_len as u64 })
        .sum()
}

macro_rules! vectored {
    ($($name:ident, $sym:literal, $kind:expr);*) => {$(
        #[no_mangle]
        pub extern "C" fn $name(fd: c_int, iov: *const iovec, cnt: c_int, off: off_t) -> ssize_t {
            let call = |d| forward!($sym, fn(c_int, *const iovec, c_int, off_t) -> ssize_t, -1, d, iov, cnt, off);
            if let Some(m) = blocking(fd, $kind, Family::Positioned, 0) {
                let write = $kind == Kind::Write;
                let bufs = route::Bufs::Vec(iov, cnt);
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
            let flags = flags & KEEP;
            let call = |d, off| forward!($sym, fn(c_int, *const iovec, c_int, off_t, c_int) -> ssize_t, -1,
                d, iov, cnt, off, flags);
            if let Some(m) = marks {
                let write = $kind == Kind::Write;
                // Offset -1: the file offset, as preadv2 reads it.
                let r = if off == -1 {
                    at_offset(fd, m, write, flags, || call(fd, -1))
                } else {
                    let bufs = route::Bufs::Vec(iov, cnt);
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
        if let Some(r) = route::blocking(m, true, 0, || call() as isize) {
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
    if n == libc::SYS_io_uring_setup {
        route::say_once_io_uring();
    }
    // The raw forms of close, close_range, dup2 and dup3: as the wrappers
    // (the library's knowledge of the descriptors they close goes first).
    match n {
        libc::SYS_close => route::closing(a1 as c_int),
        libc::SYS_close_range => closing_range(a1 as u32, a2 as u32, a3 as c_int),
        libc::SYS_dup2 | libc::SYS_dup3 if a1 != a2 => route::closing(a2 as c_int),
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
    let a6 = (flags & KEEP) as c_long;
    // Routed at an explicit offset (pos_h is 0 on 64-bit); offset -1 (the
    // file offset) goes to the kernel, counted.
    if let Some(m) = marks.filter(|_| a4 >= 0) {
        let write = kind == Kind::Write;
        let bufs = route::Bufs::Vec(a2 as *const iovec, a3 as c_int);
        let io = |d: c_int| call(d as c_long, a6) as isize;
        if let Some(r) = positioned_at(a1 as c_int, m, write, a4, bufs, a6 as c_int, io) {
            return r as c_long;
        }
    }
    call(a1, a6)
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

/// The twin an iocb's data may move through (`route::twin_for`: only
/// where that cannot change its result); `None`: the program's own
/// descriptor (a flush always).
fn iocb_twin(cb: &Iocb) -> Option<c_int> {
    let (write, bufs) = match cb.aio_lio_opcode {
        0 | 1 => (
            cb.aio_lio_opcode == 1,
            route::Bufs::One(cb.aio_buf as usize, cb.aio_nbytes as usize),
        ),
        7 | 8 => (
            cb.aio_lio_opcode == 8,
            route::Bufs::Vec(cb.aio_buf as *const iovec, cb.aio_nbytes as c_int),
        ),
        _ => return None,
    };
    route::twin_for(
        cb.aio_fildes as c_int,
        write,
        cb.aio_offset,
        &bufs,
        iocb_rwf(cb),
    )
}

/// The iocb's RWF flags the kernel is given: RWF_DSYNC, RWF_SYNC,
/// RWF_NOWAIT and RWF_APPEND.
fn iocb_rwf(cb: &Iocb) -> c_int {
    cb.aio_rw_flags & KEEP & (RWF_DSYNC | RWF_SYNC | RWF_NOWAIT | 0x10)
}

/// What one iocb asks, done as a blocking call would do it on `d` (the
/// iocb's descriptor or its twin), with the iocb's RWF flags: bytes, or a
/// negative errno.
fn iocb_io(cb: &Iocb, d: c_int) -> i64 {
    let fd = cb.aio_fildes as c_int;
    let (buf, n, off) = (cb.aio_buf as usize, cb.aio_nbytes as usize, cb.aio_offset);
    let rwf = iocb_rwf(cb);
    let one = iovec {
        iov_base: buf as *mut c_void,
        iov_len: n,
    };
    let (iov, cnt) = match cb.aio_lio_opcode {
        0 | 1 => (&one as *const iovec, 1),
        7 | 8 => (buf as *const iovec, n as c_int),
        2 => return errno_or(forward!("fsync", fn(c_int) -> c_int, -1, fd) as isize),
        _ => return errno_or(forward!("fdatasync", fn(c_int) -> c_int, -1, fd) as isize),
    };
    let r = if matches!(cb.aio_lio_opcode, 1 | 8) {
        forward!(
            "pwritev2",
            fn(c_int, *const iovec, c_int, off_t, c_int) -> ssize_t,
            -1,
            d,
            iov,
            cnt,
            off,
            rwf
        )
    } else {
        forward!(
            "preadv2",
            fn(c_int, *const iovec, c_int, off_t, c_int) -> ssize_t,
            -1,
            d,
            iov,
            cnt,
            off,
            rwf
        )
    };
    errno_or(r)
}

fn errno_or(r: isize) -> i64 {
    if r < 0 {
        -i64::from(route::errno())
    } else {
        r as i64
    }
}

/// libaio's `io_submit`: every iocb of the call is a request; under TOS
/// Table 1 the last one is Barrier. Routed (when every iocb of the call is
/// direct I/O): each iocb's data moves now and its command goes to the
/// device through the context's slot; `io_getevents` returns it once the
/// device's interrupt delivered it. Otherwise the kernel gets the call, the
/// flags it must not see taken out for the call and put back after it (the
/// iocbs are the program's).
#[no_mangle]
pub extern "C" fn io_submit(ctx: c_long, nr: c_long, iocbs: *mut *mut Iocb) -> c_int {
    let n = if iocbs.is_null() {
        0
    } else {
        nr.max(0) as usize
    };
    // SAFETY: the program passes nr valid iocb pointers (io_submit's
    // contract); a null one is skipped as the kernel would fault it.
    let cbs: Vec<*mut Iocb> = (0..n).map(|i| unsafe { *iocbs.add(i) }).collect();
    let mut saved: Vec<(usize, c_int)> = Vec::new();
    if let Some(c) = config() {
        let mut marks = Vec::with_capacity(n);
        for (i, &cb) in cbs.iter().enumerate() {
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
            let m = tag_of(c, fd, cb.aio_rw_flags, call, kind);
            LIVE.request(kind, m.marks);
            marks.push((i, kind, m));
            if cb.aio_rw_flags & !KEEP != 0 {
                saved.push((i, cb.aio_rw_flags));
                cb.aio_rw_flags &= KEEP;
            }
        }
        if !marks.is_empty() {
            LIVE.call(Family::IoSubmit);
        }
        let all = marks.len() == n && n > 0;
        if let Some(a) = all.then(|| route::aio_ctx(ctx, true)).flatten() {
            restore(iocbs, &saved);
            return submit_routed(&a, &cbs, &marks);
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
    restore(iocbs, &saved);
    if r > 0 {
        if let Some(a) = route::aio_ctx(ctx, false) {
            a.pend.lock().expect("aio lock").kernel += i64::from(r);
        }
    }
    r
}

fn restore(iocbs: *mut *mut Iocb, saved: &[(usize, c_int)]) {
    for &(i, flags) in saved {
        // SAFETY: the pointers io_submit was given.
        unsafe { (**iocbs.add(i)).aio_rw_flags = flags };
    }
}

/// The bytes an iocb asks to move: `aio_nbytes`, or for the vectored
/// opcodes the sum of its iovecs (`aio_nbytes` counts them).
fn iocb_len(cb: &Iocb) -> u32 {
    match cb.aio_lio_opcode {
        0 | 1 => cb.aio_nbytes as u32,
        7 | 8 => (0..cb.aio_nbytes as usize)
            .map(|k| {
                // SAFETY: the program's iovec array of aio_nbytes entries.
                unsafe { (*(cb.aio_buf as *const iovec).add(k)).iov_len as u32 }
            })
            .fold(0u32, u32::wrapping_add),
        _ => 0,
    }
}

/// Routed `io_submit`: how many iocbs it took (as many as the context has
/// room for; none is EAGAIN, as from a full kernel context). The commands
/// are posted together first, as blk-mq's plug hands a batch to the device
/// at one doorbell; then each iocb's data moves, while the device serves
/// the commands (a kernel builds bios here, ~0.3 us each, and the device's
/// DMA moves the data; the copy through the page cache takes ~1.5-2 us per
/// 4 KiB on this VM, and copying the batch before the doorbell held the
/// device idle for it: `cinterrupts bench exec
/// examples/crossval/libaio-qd16.fio`). No completion of the context is
/// handed to the program before its data moved (`route::AioCtx::copying`).
fn submit_routed(a: &route::AioCtx, cbs: &[*mut Iocb], marks: &[(usize, Kind, Tag)]) -> c_int {
    let room = route::aio_room(a).min(marks.len());
    let _copying = a.copying.lock().expect("copying lock");
    let mut posted = Vec::with_capacity(room);
    let mut taken = 0;
    for &(i, kind, m) in &marks[..room] {
        // SAFETY: checked non-null above; the program's iocb.
        let cb = unsafe { &*cbs[i] };
        let write = kind != Kind::Read;
        let offset = if kind == Kind::Flush {
            0
        } else {
            cb.aio_offset as u64
        };
        let (data, obj) = (cb.aio_data, cbs[i] as u64);
        let Some(twin) = iocb_twin(cb) else {
            // The program's own call on its own descriptor, made now, as a
            // blocking call's: one the kernel refuses (a misaligned iocb's
            // EINVAL), or a read at the end of the file, completes at once
            // with its result and the device sees no command for it.
            let res = iocb_io(cb, cb.aio_fildes as c_int);
            taken += 1;
            if res < 0 || (res == 0 && kind == Kind::Read) {
                route::aio_ready(a, data, obj, res);
                continue;
            }
            let len = res.min(i64::from(u32::MAX)) as u32;
            match route::aio_post(a, data, obj, len, m, write, offset) {
                Some(cookie) => route::aio_moved(a, cookie, res),
                None => route::aio_ready(a, data, obj, res),
            }
            continue;
        };
        let Some(cookie) = route::aio_post(a, data, obj, iocb_len(cb), m, write, offset) else {
            break;
        };
        taken += 1;
        posted.push((i, cookie, twin));
    }
    for &(i, cookie, twin) in &posted {
        // SAFETY: as above.
        let cb = unsafe { &*cbs[i] };
        route::aio_moved(a, cookie, iocb_io(cb, twin));
    }
    if taken == 0 {
        -libc::EAGAIN
    } else {
        taken
    }
}

/// libaio's `io_getevents`: a routed context's events come from its slot
/// (the device's interrupts), with any the kernel holds for it merged in.
#[no_mangle]
pub extern "C" fn io_getevents(
    ctx: c_long,
    min_nr: c_long,
    nr: c_long,
    events: *mut route::IoEvent,
    timeout: *mut libc::timespec,
) -> c_int {
    let call = |min, nr, ev, t| {
        forward!(
            "io_getevents",
            fn(c_long, c_long, c_long, *mut route::IoEvent, *mut libc::timespec) -> c_int,
            -libc::ENOSYS,
            ctx,
            min,
            nr,
            ev,
            t
        )
    };
    let Some(a) = route::aio_ctx(ctx, false) else {
        return call(min_nr, nr, events, timeout);
    };
    if nr <= 0 || events.is_null() {
        return call(min_nr, nr, events, timeout);
    }
    let (min, max) = (min_nr.clamp(0, nr) as usize, nr as usize);
    // SAFETY: the program gives room for nr events (io_getevents' contract).
    let out = unsafe { std::slice::from_raw_parts_mut(events, max) };
    let deadline = (!timeout.is_null()).then(|| {
        // SAFETY: non-null, the program's timespec.
        let t = unsafe { *timeout };
        std::time::Instant::now()
            + std::time::Duration::new(
                t.tv_sec.max(0) as u64,
                t.tv_nsec.clamp(0, 999_999_999) as u32,
            )
    });
    let _one = a.reaper.lock().expect("reaper lock");
    let mut got = 0;
    loop {
        got += route::aio_take(&a, max - got, &mut out[got..]);
        let kernel = a.pend.lock().expect("aio lock").kernel;
        if kernel > 0 && got < max {
            let mut zero = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            let r = call(0, (max - got) as c_long, out[got..].as_mut_ptr(), &mut zero);
            if r > 0 {
                got += r as usize;
                a.pend.lock().expect("aio lock").kernel -= i64::from(r);
            }
        }
        // min 0 asks for what is there, without waiting.
        if got >= min {
            return got as c_int;
        }
        let left = deadline.map(|d| d.saturating_duration_since(std::time::Instant::now()));
        if left.is_some_and(|l| l.is_zero()) {
            return got as c_int;
        }
        // With iocbs in the kernel too, wake now and then to look there.
        let slice = if kernel > 0 {
            Some(left.map_or(std::time::Duration::from_micros(50), |l| {
                l.min(std::time::Duration::from_micros(50))
            }))
        } else {
            left
        };
        route::aio_wait(&a, (min - got) as u32, slice);
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

/// `close`: the library's knowledge of the descriptor goes first (a
/// number reused for another file is looked up again; its page-cache twin
/// is closed).
#[no_mangle]
pub extern "C" fn close(fd: c_int) -> c_int {
    route::closing(fd);
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
            route::closing(fd);
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
        route::flags_changed(fd);
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
        route::flags_changed(fd);
    }
    r
}

/// `dup2`/`dup3` close `new` when it is open: as `close`.
#[no_mangle]
pub extern "C" fn dup2(old: c_int, new: c_int) -> c_int {
    if old != new {
        route::closing(new);
    }
    forward!("dup2", fn(c_int, c_int) -> c_int, -1, old, new)
}

#[no_mangle]
pub extern "C" fn dup3(old: c_int, new: c_int, flags: c_int) -> c_int {
    if old != new {
        route::closing(new);
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
            route::closing(fd as c_int);
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

/// libaio's `io_destroy`: a routed context's slot goes back.
#[no_mangle]
pub extern "C" fn io_destroy(ctx: c_long) -> c_int {
    route::aio_forget(ctx);
    forward!("io_destroy", fn(c_long) -> c_int, -libc::ENOSYS, ctx)
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
