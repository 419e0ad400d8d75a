//! The program's side of routing (issue 14): a request the library sees is
//! posted to the device in `cinterrupts exec` through this process's slot
//! of the shared region, and the calling thread sleeps until the device's
//! interrupt handler leaves the completion there and wakes it.
//!
//! The data moves here, in the program, before the command is posted: with
//! a `--device` profile through a second descriptor of the same file
//! without O_DIRECT (the page cache; the profile times the command), else
//! with the program's own O_DIRECT call (this VM's disk is the device and
//! the command completes at once). A call that fails in the kernel returns
//! at once with its errno: no command is posted for it. A command the device
//! fails returns EIO.
//!
//! Waiters: a thread for the blocking calls (its slot claimed at its first
//! routed call; a forked child's thread claims its own), a libaio context
//! for `io_submit`/`io_getevents` (any thread may reap it, as in the
//! kernel). All slots of a process are given back at its exit.

use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::{c_int, c_long};
use std::sync::{Arc, Mutex, OnceLock};

use policy::Marks;
use shm::{Cmd, Done, Region, RING};

use crate::intercept::config;

/// The region, mapped once per process image (a forked child shares it).
static REGION: OnceLock<Option<Region>> = OnceLock::new();

/// Set once the device's process is found gone: nothing is routed after.
static GONE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The region, while the device is there to serve it.
pub(crate) fn region() -> Option<&'static Region> {
    if GONE.load(std::sync::atomic::Ordering::Relaxed) {
        return None;
    }
    mapped()
}

/// The region, even after the device is gone (for what is in flight).
fn mapped() -> Option<&'static Region> {
    REGION
        .get_or_init(|| {
            let r = config()?.route.as_ref()?;
            match Region::open(&r.shm) {
                Ok(region) => Some(region),
                Err(e) => {
                    say(&format!("cannot map {}: {e}; not routed", r.shm));
                    None
                }
            }
        })
        .as_ref()
}

/// Whether the data moves through the page cache (a modelled device).
pub(crate) fn modelled() -> bool {
    config()
        .and_then(|c| c.route.as_ref())
        .is_some_and(|r| r.modelled)
}

/// One line on stderr, once per process per message kind.
pub(crate) fn say(msg: &str) {
    let line = format!("cinterrupts exec: {msg}\n");
    // SAFETY: writing our own buffer to fd 2 (not through the interposed
    // `write`, which would count it).
    unsafe { libc::syscall(libc::SYS_write, 2, line.as_ptr(), line.len()) };
}

thread_local! {
    /// This thread's slot and its next cookie.
    static MINE: Mine = const { Mine(Cell::new(None)) };
}

/// A thread's slot and its next cookie; the slot goes back (if quiet) when
/// the thread exits.
struct Mine(Cell<Option<(usize, u32)>>);

impl Drop for Mine {
    fn drop(&mut self) {
        if let (Some((slot, _)), Some(r)) = (self.0.take(), mapped()) {
            r.slot(slot).release();
        }
    }
}

/// This thread's slot, if it has one (none once its storage is gone, at
/// the thread's very end).
fn mine() -> Option<(usize, u32)> {
    MINE.try_with(|m| m.0.get()).ok().flatten()
}

fn set_mine(v: Option<(usize, u32)>) {
    let _ = MINE.try_with(|m| m.0.set(v));
}

/// Said once per process: the program set up an io_uring, whose requests
/// go through rings the library does not see (issue 14: reported, never
/// silently changed).
static IO_URING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub(crate) fn say_once_io_uring() {
    if config().is_some() && !IO_URING.swap(true, std::sync::atomic::Ordering::Relaxed) {
        say("io_uring set up: its requests are not routed (nor counted)");
    }
}

/// Said once per process: no slot was free.
static FULL: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn pid() -> u32 {
    std::process::id()
}

fn claim() -> Option<usize> {
    let r = region()?;
    let got = r.claim(pid());
    if got.is_none() && !FULL.swap(true, std::sync::atomic::Ordering::Relaxed) {
        say("every shared slot is taken; this thread's I/O goes to the kernel unrouted");
    }
    got
}

/// A forked child's thread starts without a slot (its parent's stays the
/// parent's).
pub(crate) fn forget_in_child() {
    set_mine(None);
    FULL.store(false, std::sync::atomic::Ordering::Relaxed);
    // Its parent's libaio contexts are not the child's (the kernel does
    // not share them across fork); the twin descriptors are inherited.
    if let Ok(mut a) = AIO.lock() {
        *a = None;
    }
}

/// At the process's exit: the exiting thread's slot goes back if quiet.
/// Not the other threads' slots: they may still be running (a program's
/// `exit` does not stop its threads before the atexit handlers), and a
/// slot given back under a running thread could be claimed by another
/// process while that thread still uses it. They are taken again once the
/// process is gone and nothing of theirs is in flight (`Region::claim`).
pub(crate) fn release_mine() {
    let Some(r) = mapped() else { return };
    if let Some((slot, _)) = mine() {
        set_mine(None);
        r.slot(slot).release();
    }
}

fn bits(m: Marks) -> u8 {
    exec::marks_bits(m)
}

/// A blocking call routed: `io` moves the data (returns bytes or -1 with
/// errno set), then the command goes to the device and the thread sleeps
/// until its completion is delivered. `None`: not routed (no region, no
/// slot); the caller does the call itself.
pub(crate) fn blocking(
    marks: Marks,
    write: bool,
    offset: u64,
    io: impl FnOnce() -> isize,
) -> Option<isize> {
    let r = region()?;
    let (slot, cookie) = match mine() {
        Some(m) => m,
        None => (claim()?, 0),
    };
    // A thread at its very end (no storage left) is not routed.
    if MINE
        .try_with(|m| m.0.set(Some((slot, cookie.wrapping_add(1)))))
        .is_err()
    {
        r.slot(slot).release();
        return None;
    }
    let res = io();
    // A failed call posts nothing; nor does a read at the end of the file,
    // for which the kernel sends no command either.
    if res < 0 || (res == 0 && !write) {
        return Some(res);
    }
    let s = r.slot(slot);
    let cmd = Cmd {
        cookie,
        write,
        marks: bits(marks),
        len: res as u32,
        offset,
    };
    if !s.post(cmd) {
        return Some(res);
    }
    let mut out = Vec::with_capacity(1);
    while out.is_empty() {
        if !s.wait(1, Some(WATCH)) && !device_alive() {
            // The data moved already: the call's own result stands.
            return Some(res);
        }
        s.take(1, &mut out);
    }
    debug_assert_eq!(out[0].cookie, cookie, "one request in flight per thread");
    if out[0].error {
        set_errno(libc::EIO);
        return Some(-1);
    }
    Some(res)
}

pub(crate) fn set_errno(e: c_int) {
    // SAFETY: errno is thread-local.
    unsafe { *libc::__errno_location() = e };
}

pub(crate) fn errno() -> c_int {
    // SAFETY: errno is thread-local.
    unsafe { *libc::__errno_location() }
}

/// The page-cache twin of each O_DIRECT descriptor, by descriptor, with the
/// file and access mode it was opened for: a descriptor number reused for
/// another file, or for the same file opened another way (RocksDB writes
/// an SST write-only, then reads it back read-only, often under the same
/// number), gets a new twin.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Opened {
    dev: u64,
    ino: u64,
    access: c_int,
}

type Twins = HashMap<c_int, (Opened, c_int)>;

static TWINS: Mutex<Option<Twins>> = Mutex::new(None);

/// The descriptor the data moves through: `fd` itself, or with a modelled
/// device its twin without O_DIRECT (the page cache: this VM's disk takes
/// ~170 us per 4 KiB, the profile's device ~7 us). `fd` itself when no
/// twin can be opened.
pub(crate) fn data_fd(fd: c_int) -> c_int {
    if !modelled() {
        return fd;
    }
    // SAFETY: fstat fills the struct; a bad fd returns -1. F_GETFL takes
    // no pointer.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return fd;
    }
    let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if fl == -1 {
        return fd;
    }
    let now = Opened {
        dev: st.st_dev,
        ino: st.st_ino,
        access: fl & libc::O_ACCMODE,
    };
    let Ok(mut guard) = TWINS.lock() else {
        return fd;
    };
    let map = guard.get_or_insert_with(HashMap::new);
    if let Some(&(was, twin)) = map.get(&fd) {
        if was == now {
            return twin;
        }
        // SAFETY: our own descriptor, for what this fd no longer is.
        unsafe { libc::close(twin) };
        map.remove(&fd);
    }
    let path = std::ffi::CString::new(format!("/proc/self/fd/{fd}")).expect("no NUL");
    // SAFETY: a NUL-terminated path; `open` is not interposed.
    let twin = unsafe { libc::open(path.as_ptr(), now.access | libc::O_CLOEXEC) };
    if twin < 0 {
        return fd;
    }
    map.insert(fd, (now, twin));
    twin
}

/// A libaio context this process routes: its slot, and the iocbs in flight
/// by cookie.
pub(crate) struct AioCtx {
    pub(crate) slot: usize,
    pub(crate) pend: Mutex<AioPend>,
    /// One reaper at a time (the slot's completion ring has one consumer).
    pub(crate) reaper: Mutex<()>,
}

#[derive(Default)]
pub(crate) struct AioPend {
    pub(crate) next: u32,
    /// cookie -> (aio_data, iocb address, result of the data transfer).
    pub(crate) map: HashMap<u32, (u64, u64, i64)>,
    /// iocbs of this context the kernel has (not routed) and not returned.
    pub(crate) kernel: i64,
}

static AIO: Mutex<Option<HashMap<c_long, Arc<AioCtx>>>> = Mutex::new(None);

/// The routed context `ctx`, made at its first `io_submit`.
pub(crate) fn aio_ctx(ctx: c_long, create: bool) -> Option<Arc<AioCtx>> {
    if create {
        region()?;
    } else {
        mapped()?;
    }
    let mut guard = AIO.lock().ok()?;
    let map = guard.get_or_insert_with(HashMap::new);
    if let Some(a) = map.get(&ctx) {
        return Some(a.clone());
    }
    if !create {
        return None;
    }
    let a = Arc::new(AioCtx {
        slot: claim()?,
        pend: Mutex::default(),
        reaper: Mutex::new(()),
    });
    map.insert(ctx, a.clone());
    Some(a)
}

/// `io_destroy`: the context's slot goes back if quiet.
pub(crate) fn aio_forget(ctx: c_long) {
    let Some(r) = mapped() else { return };
    let Ok(mut guard) = AIO.lock() else { return };
    if let Some(a) = guard.as_mut().and_then(|m| m.remove(&ctx)) {
        r.slot(a.slot).release();
    }
}

/// How many more commands the context's slot has room for.
pub(crate) fn aio_room(a: &AioCtx) -> usize {
    region().map_or(0, |r| {
        u64::from(RING).saturating_sub(r.slot(a.slot).in_flight()) as usize
    })
}

/// Posts one iocb's command (its data already moved, `res` its result).
pub(crate) fn aio_post(
    a: &AioCtx,
    data: u64,
    obj: u64,
    res: i64,
    marks: Marks,
    write: bool,
    offset: u64,
) -> bool {
    let Some(r) = region() else { return false };
    let mut p = a.pend.lock().expect("aio lock");
    let cookie = p.next;
    p.next = p.next.wrapping_add(1);
    p.map.insert(cookie, (data, obj, res));
    let cmd = Cmd {
        cookie,
        write,
        marks: bits(marks),
        len: res.max(0) as u32,
        offset,
    };
    if r.slot(a.slot).post(cmd) {
        true
    } else {
        p.map.remove(&cookie);
        false
    }
}

/// The kernel's `struct io_event` (uapi linux/aio_abi.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct IoEvent {
    pub data: u64,
    pub obj: u64,
    pub res: i64,
    pub res2: i64,
}

/// Moves up to `max` delivered completions of `a` into `out` as events.
pub(crate) fn aio_take(a: &AioCtx, max: usize, out: &mut [IoEvent]) -> usize {
    let Some(r) = mapped() else { return 0 };
    let mut done: Vec<Done> = Vec::with_capacity(max);
    r.slot(a.slot).take(max, &mut done);
    let mut p = a.pend.lock().expect("aio lock");
    let mut n = 0;
    for d in done {
        let Some((data, obj, res)) = p.map.remove(&d.cookie) else {
            continue;
        };
        out[n] = IoEvent {
            data,
            obj,
            res: if d.error { -i64::from(libc::EIO) } else { res },
            res2: 0,
        };
        n += 1;
    }
    n
}

/// Sleeps until `min` completions of `a` are delivered or `timeout` ends.
pub(crate) fn aio_wait(a: &AioCtx, min: u32, timeout: Option<std::time::Duration>) -> bool {
    let Some(r) = mapped() else { return false };
    if GONE.load(std::sync::atomic::Ordering::Relaxed) {
        aio_abandon(a);
        return true;
    }
    let slice = timeout.map_or(WATCH, |t| t.min(WATCH));
    let ready = r.slot(a.slot).wait(min, Some(slice));
    if !ready && !device_alive() {
        // Nothing more will come: what is in flight is given back as it
        // moved (the data did), so no waiter sleeps forever.
        aio_abandon(a);
    }
    ready
}

/// With the device gone, the context's commands in flight complete with
/// their data transfer's result, delivered into the slot as the handler
/// would have.
fn aio_abandon(a: &AioCtx) {
    let Some(r) = mapped() else { return };
    let p = a.pend.lock().expect("aio lock");
    let done: Vec<Done> = p
        .map
        .iter()
        .map(|(&cookie, &(_, _, res))| Done {
            cookie,
            result: res.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32,
            error: false,
        })
        .collect();
    drop(p);
    // Some may be in the ring already: `aio_take` drops a cookie it meets
    // twice. Never more than the ring has room for; the next watch
    // delivers the rest.
    let s = r.slot(a.slot);
    let room = (RING - s.ready().min(RING)) as usize;
    s.deliver(&done[..done.len().min(room)]);
}

/// How long a waiter sleeps before it checks that `cinterrupts exec` (the
/// device) still exists: a program must not hang because exec was killed.
const WATCH: std::time::Duration = std::time::Duration::from_secs(1);

/// Whether the process holding the device (`/proc/PID/fd/N`'s PID) exists.
fn device_alive() -> bool {
    let Some(pid) = config()
        .and_then(|c| c.route.as_ref())
        .and_then(|r| r.shm.strip_prefix("/proc/"))
        .and_then(|p| p.split('/').next())
        .and_then(|p| p.parse::<libc::pid_t>().ok())
    else {
        return false;
    };
    // SAFETY: signal 0 only checks the process exists.
    let alive = unsafe { libc::kill(pid, 0) == 0 };
    if !alive && !GONE.swap(true, std::sync::atomic::Ordering::Relaxed) {
        say("the device (cinterrupts exec) is gone; the rest of the I/O goes to the kernel");
    }
    alive
}
