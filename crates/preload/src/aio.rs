//! libaio at the kernel's ABI (issue 24 items 1 and 2): the program's aio
//! system calls, however it makes them (libaio's exported functions through
//! the PLT, or glibc's `syscall()` as MariaDB's tpool and ioping do), are
//! answered here, so that the kernel moves the data with its own semantics
//! and the emulated device decides only when each completion is visible.
//!
//! - `io_setup` makes a private *shadow* kernel context with the program's
//!   `nr` (every error is the kernel's own), then gives the program, as its
//!   context id, the address of OUR ring: anonymous memory laid out as the
//!   kernel's `struct aio_ring` (fs/aio.c), so libaio's and fio's user-space
//!   reaping (`userspace_reap=1`: head and tail read in memory) work.
//! - `io_submit` submits a copy of each iocb (our cookie as `aio_data`, the
//!   page-cache twin as the descriptor where `fd::twin_for` allows it,
//!   no `IOCB_FLAG_RESFD`, RWF_URGENT/RWF_BARRIER taken out) to the shadow
//!   in one kernel call: its return is the program's, and the data moves
//!   asynchronously with the program's own concurrency. Each accepted
//!   direct iocb's command goes to the device right after (TOS Table 1).
//! - Two threads per context publish: an event is written into the
//!   program's ring (and its eventfd signalled) only once the kernel
//!   completed the copy AND the device delivered its interrupt. The kernel's
//!   completions and the device's deliveries come through two different
//!   waits (`io_getevents` on the shadow, a futex in the shared region), so
//!   one thread blocks in each; either publishes what became complete.
//! - `io_getevents`/`io_pgetevents` consume the ring; `io_cancel` goes to
//!   the shadow with the matching copy; `io_destroy` waits for what is in
//!   flight, as the kernel does.
//!
//! Our own kernel aio calls carry `shm::OWN_CALL` as their sixth argument
//! (`exec`'s seccomp filter tells them from a program's inline calls). A
//! context made without routing (no region, the device gone) is the
//! kernel's own, and every call on it passes through.

use std::collections::HashMap;
use std::ffi::{c_int, c_long, c_void};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::*};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use libc::iovec;
use marks::Call;
use shm::{Cmd, Done};
use wire::{Family, Kind};

use crate::classify::{keep, tag_of, Tag};
use crate::fd;
use crate::kernel::{read_user, spawn, sys, wake, FUTEX_WAIT_PRIVATE};
use crate::route;
use crate::state::{config, LIVE};

/// io_pgetevents' number on x86_64 (arch/x86/entry/syscalls/syscall_64.tbl:
/// 333; the libc crate does not name it).
pub(crate) const SYS_IO_PGETEVENTS: c_long = 333;

/// IOCB_CMD_* (include/uapi/linux/aio_abi.h).
const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;
const IOCB_CMD_FSYNC: u16 = 2;
const IOCB_CMD_FDSYNC: u16 = 3;
const IOCB_CMD_POLL: u16 = 5;
const IOCB_CMD_PREADV: u16 = 7;
const IOCB_CMD_PWRITEV: u16 = 8;
/// `aio_flags` bit: signal the eventfd `aio_resfd` at completion
/// (include/uapi/linux/aio_abi.h).
const IOCB_FLAG_RESFD: u32 = 1 << 0;

/// `struct aio_ring`'s constants (fs/aio.c: AIO_RING_MAGIC,
/// AIO_RING_COMPAT_FEATURES, AIO_RING_INCOMPAT_FEATURES) and its size, the
/// `header_length` the kernel stores: eight `unsigned`s.
const AIO_RING_MAGIC: u32 = 0xa10a_10a1;
const AIO_RING_COMPAT_FEATURES: u32 = 1;
const AIO_RING_INCOMPAT_FEATURES: u32 = 0;
const RING_HEADER: usize = 32;
/// `sizeof(struct io_event)` (aio_abi.h).
const EVENT: usize = 32;
/// `sizeof(sigset_t)` the kernel accepts for io_pgetevents' mask
/// (`set_user_sigmask`: `_NSIG / 8` on x86_64).
const SIGSET_SIZE: usize = 8;
/// The kernel events the reaper takes per call (any number works; 64 is
/// four QD16 batches).
const REAP: usize = 64;
/// How often a waiter on the program's ring looks again without being
/// woken: the futex wait is timed so that a signal handler makes it
/// return EINTR (a timed FUTEX_WAIT restarts through restart_block, which
/// a handler turns into EINTR, as the kernel's io_getevents returns
/// whatever SA_RESTART says), and a device that vanished is noticed.
const SLICE: Duration = Duration::from_secs(1);
/// How long the device waiter sleeps between looks at its stop flag.
const DEVICE_SLICE: Duration = Duration::from_millis(100);

/// The kernel's `struct iocb` (include/uapi/linux/aio_abi.h, little
/// endian), which libaio passes through unchanged.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
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

/// The kernel's `struct io_event` (include/uapi/linux/aio_abi.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct IoEvent {
    pub data: u64,
    pub obj: u64,
    pub res: i64,
    pub res2: i64,
}

/// `struct __aio_sigset` (aio_abi.h): io_pgetevents' sixth argument.
#[repr(C)]
pub struct AioSigset {
    sigmask: *const libc::sigset_t,
    sigsetsize: usize,
}

impl AioSigset {
    /// libaio's form: a plain mask, its size the kernel's.
    pub(crate) fn new(sigmask: *const libc::sigset_t) -> AioSigset {
        AioSigset {
            sigmask,
            sigsetsize: SIGSET_SIZE,
        }
    }
}

/// What becomes of one iocb the shadow accepted.
struct Pend {
    /// The copy the kernel was given (its address is the shadow's `obj`,
    /// which `io_cancel` names).
    copy: Box<Iocb>,
    /// The program's `aio_data` and iocb address, for its event, and its
    /// descriptor (the copy's may be the twin).
    data: u64,
    obj: u64,
    fd: c_int,
    /// Our duplicate of the program's eventfd (`IOCB_FLAG_RESFD`), taken
    /// at submission as the kernel takes its reference; -1: none.
    resfd: c_int,
    /// A device command was posted for it.
    cmd: bool,
    /// `io_submit` has not decided yet whether to post a command.
    posting: bool,
    /// The kernel's result (res, res2) once the copy completed.
    kernel: Option<(i64, i64)>,
    /// The device delivered its command (and whether it failed it).
    delivered: bool,
    dev_error: bool,
}

#[derive(Default)]
struct State {
    next: u32,
    pend: HashMap<u32, Pend>,
    /// Iocbs the shadow holds whose completion is not reaped yet: the
    /// kernel reaper blocks in the shadow only while there are some.
    in_kernel: u32,
}

/// One context of the program's, routed.
pub(crate) struct Ctx {
    /// Our `struct aio_ring` (the program's context id) and its length.
    ring: usize,
    ring_len: usize,
    /// Events the ring holds (`ring->nr`, the shadow's: fs/aio.c rounds
    /// the program's nr up to whole pages).
    nr: u32,
    /// The shadow kernel context.
    shadow: u64,
    /// The device slot its commands go through (`None`: none was free; its
    /// events then appear at the kernel's completion).
    slot: Option<usize>,
    st: Mutex<State>,
    /// Notified when nothing is left in flight (`io_destroy` waits).
    drained: Condvar,
    /// Notified when the shadow holds iocbs to reap (or at stop).
    kernel_wait: Condvar,
    /// One consumer of the ring among our `io_getevents` callers (the
    /// kernel's `ring_lock`).
    reap: Mutex<()>,
    /// Threads waiting on the tail's futex in `io_getevents`.
    waiters: AtomicU32,
    /// The fewest events a waiter still needs (`u32::MAX`: none waits):
    /// the publisher wakes the waiters only once the ring holds as many.
    want: AtomicU32,
    /// Each waiting thread's need, `want` their least.
    needs: Mutex<Vec<u32>>,
    /// io_pgetevents' waiters (in `ppoll` on `efd` with their mask), and
    /// the eventfd, made at the first.
    pwaiters: AtomicU32,
    efd: std::sync::OnceLock<c_int>,
    dying: AtomicBool,
    stop: AtomicBool,
}

impl Ctx {
    fn head(&self) -> &AtomicU32 {
        // SAFETY: the ring's third u32 (struct aio_ring.head), in our mapping.
        unsafe { &*((self.ring + 8) as *const AtomicU32) }
    }

    fn tail(&self) -> &AtomicU32 {
        // SAFETY: struct aio_ring.tail, in our mapping.
        unsafe { &*((self.ring + 12) as *const AtomicU32) }
    }

    fn event_at(&self, i: u32) -> *mut IoEvent {
        (self.ring + RING_HEADER + i as usize * EVENT) as *mut IoEvent
    }

    /// Events published and not yet consumed (head is the program's to
    /// move: read modulo nr, as fs/aio.c does).
    fn unreaped(&self) -> u32 {
        let head = self.head().load(Acquire) % self.nr;
        let tail = self.tail().load(Acquire) % self.nr;
        (tail + self.nr - head) % self.nr
    }

    /// A waiter's need changes from `old` to `new` (`None`: none); `want`
    /// becomes the least of all (stored before the waiter re-checks the
    /// ring, so a publication after it wakes it).
    fn need(&self, old: Option<u32>, new: Option<u32>) {
        let mut n = self.needs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = old.and_then(|o| n.iter().position(|&x| x == o)) {
            n.swap_remove(i);
        }
        n.extend(new);
        self.want
            .store(n.iter().copied().min().unwrap_or(u32::MAX), SeqCst);
    }

    /// The eventfd io_pgetevents' waiters poll (`None`: none could be made;
    /// they wait on the futex with the mask set around it).
    fn eventfd(&self) -> Option<c_int> {
        let fd = *self.efd.get_or_init(|| {
            // SAFETY: a new eventfd of ours.
            unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) }
        });
        (fd >= 0).then_some(fd)
    }

    /// Wakes io_pgetevents' waiters.
    fn poke(&self) {
        if let Some(&fd) = self.efd.get().filter(|&&fd| fd >= 0) {
            let one: u64 = 1;
            // SAFETY: our eventfd and an 8-byte buffer.
            unsafe { libc::syscall(libc::SYS_write, fd, &one as *const u64, 8) };
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.st.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Ctx {
    fn drop(&mut self) {
        // SAFETY: our own mapping; the last reference is gone, so no
        // thread of ours reads it (the program's copy of the address is
        // dead since io_destroy, as the kernel's is).
        unsafe { libc::munmap(self.ring as *mut c_void, self.ring_len) };
        if let Some(&fd) = self.efd.get().filter(|&&fd| fd >= 0) {
            // SAFETY: our eventfd, closed once.
            unsafe { libc::syscall(libc::SYS_close, fd) };
        }
    }
}

/// The process's routed contexts, by the id the program holds.
static CTXS: Mutex<Option<HashMap<u64, Arc<Ctx>>>> = Mutex::new(None);

fn lookup(id: u64) -> Option<Arc<Ctx>> {
    let g = CTXS.lock().ok()?;
    g.as_ref()?.get(&id).cloned()
}

/// In a forked child: the kernel does not copy aio contexts to a child
/// (its table starts empty), so neither do we. Leaked, not dropped: the
/// child has none of the threads, and a lock its parent held at the fork
/// would never be released.
pub(crate) fn forget_in_child() {
    if let Ok(mut g) = CTXS.try_lock() {
        if let Some(m) = g.take() {
            std::mem::forget(m);
        }
    } else {
        // The lock itself was held at the fork: a fresh table is
        // impossible to install safely; the child's calls on its parent's
        // contexts then find them, as before (rare: a fork during io_setup).
        route::say("a fork during io_setup: the child keeps its parent's aio table");
    }
}

/// `io_setup(nr, ctxp)`: the shadow first (the kernel's errors: EINVAL for
/// nr 0 or `*ctxp != 0`, EAGAIN past aio-max-nr, EFAULT), written by the
/// kernel into the program's `*ctxp`, then our ring in its place. A
/// negative errno or 0.
pub(crate) fn setup(nr: u32, ctxp: *mut u64) -> i64 {
    let r = sys(libc::SYS_io_setup, nr as usize, ctxp as usize, 0, 0, 0);
    if r < 0 || route::region().is_none() || config().is_none() {
        return r;
    }
    // SAFETY: the kernel just wrote the shadow's id there.
    let shadow = unsafe { std::ptr::read_volatile(ctxp) };
    // SAFETY: a kernel context's id is the address of its ring, mapped
    // readable in this process (fs/aio.c aio_setup_ring); id and nr are its
    // first two u32s.
    let (kid, knr) = unsafe {
        let h = shadow as *const u32;
        (
            std::ptr::read_volatile(h),
            std::ptr::read_volatile(h.add(1)),
        )
    };
    match make(shadow, kid, knr) {
        Some(ring) => {
            // SAFETY: the program's pointer, which the kernel wrote through.
            unsafe { std::ptr::write_volatile(ctxp, ring) };
        }
        None => route::say("cannot set up a routed aio context; this one is the kernel's own"),
    }
    0
}

/// Our ring for `shadow`, its table entry and threads; `None` (nothing
/// left behind) when memory or a thread cannot be had.
fn make(shadow: u64, kid: u32, nr: u32) -> Option<u64> {
    if nr < 2 {
        return None;
    }
    let page = 4096;
    let len = (RING_HEADER + nr as usize * EVENT).next_multiple_of(page);
    // SAFETY: a fresh anonymous private mapping.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return None;
    }
    let h = p as *mut u32;
    // SAFETY: the header of our fresh mapping (zeroed: head = tail = 0).
    unsafe {
        h.write(kid);
        h.add(1).write(nr);
        h.add(4).write(AIO_RING_MAGIC);
        h.add(5).write(AIO_RING_COMPAT_FEATURES);
        h.add(6).write(AIO_RING_INCOMPAT_FEATURES);
        h.add(7).write(RING_HEADER as u32);
    }
    let ctx = Arc::new(Ctx {
        ring: p as usize,
        ring_len: len,
        nr,
        shadow,
        slot: route::claim(),
        st: Mutex::default(),
        drained: Condvar::new(),
        kernel_wait: Condvar::new(),
        reap: Mutex::new(()),
        waiters: AtomicU32::new(0),
        want: AtomicU32::new(u32::MAX),
        needs: Mutex::new(Vec::new()),
        pwaiters: AtomicU32::new(0),
        efd: std::sync::OnceLock::new(),
        dying: AtomicBool::new(false),
        stop: AtomicBool::new(false),
    });
    let reaper = {
        let c = ctx.clone();
        spawn("cint-aio-kernel", move || kernel_reaper(&c))
    };
    if !reaper {
        if let (Some(s), Some(r)) = (ctx.slot, route::mapped()) {
            r.slot(s).release();
        }
        return None;
    }
    if ctx.slot.is_some() {
        let c = ctx.clone();
        if !spawn("cint-aio-device", move || device_waiter(&c)) {
            // Nobody would take the device's deliveries: the kernel's
            // context, unrouted (the reaper told to stop, the slot back).
            ctx.stop.store(true, SeqCst);
            ctx.kernel_wait.notify_all();
            if let (Some(s), Some(r)) = (ctx.slot, route::mapped()) {
                r.slot(s).release();
            }
            return None;
        }
    }
    let id = ctx.ring as u64;
    if let Ok(mut g) = CTXS.lock() {
        g.get_or_insert_with(HashMap::new).insert(id, ctx);
    }
    Some(id)
}

/// The kernel's side: reaps the shadow, blocked in `io_getevents` until a
/// copy completes; ends when `io_destroy` destroys the shadow (EINVAL) or
/// stops it. It blocks in the shadow only while it holds iocbs to reap:
/// those the page-cache twin carries complete inside `io_submit` (the
/// kernel's buffered aio is synchronous) and `io_submit` reaps them
/// itself, so the reaper is not woken for each (with `--device`, a wake-up
/// per I/O on the program's CPU).
fn kernel_reaper(c: &Ctx) {
    let mut ev = [IoEvent::default(); REAP];
    loop {
        {
            let mut st = c.lock();
            while st.in_kernel == 0 && !c.stop.load(Acquire) {
                st = c.kernel_wait.wait(st).unwrap_or_else(|e| e.into_inner());
            }
            if c.stop.load(Acquire) && st.in_kernel == 0 {
                return;
            }
        }
        let r = sys(
            libc::SYS_io_getevents,
            c.shadow as usize,
            1,
            REAP,
            ev.as_mut_ptr() as usize,
            0,
        );
        if r == -i64::from(libc::EINTR) {
            continue;
        }
        if r < 0 {
            if c.stop.load(Acquire) {
                // io_destroy destroyed the shadow.
                return;
            }
            // Not expected of a live shadow; looked at again shortly rather
            // than leaving its completions unpublished.
            std::thread::sleep(Duration::from_millis(1));
            continue;
        }
        kernel_done(c, &ev[..r as usize]);
    }
}

/// The device's side: sleeps on the slot's futex until the device's
/// interrupt handler delivers; ends once stopped with nothing of the
/// slot's in flight (or the device gone), then gives the slot back.
fn device_waiter(c: &Ctx) {
    if let Some(slot) = c.slot {
        route::device_waiter(
            slot,
            &c.stop,
            DEVICE_SLICE,
            None,
            |d| delivered(c, d),
            || device_gone(c),
        );
    }
}

/// Whether `p`'s event may be published now: the kernel completed it,
/// and either its result is an error (never coalesced), it had no device
/// command, the device delivered it, or the device is gone.
fn ready(p: &Pend) -> bool {
    match p.kernel {
        None => false,
        _ if p.posting => false,
        Some((res, _)) => res < 0 || !p.cmd || p.delivered || route::region().is_none(),
    }
}

fn kernel_done(c: &Ctx, ev: &[IoEvent]) {
    {
        let mut st = c.lock();
        for e in ev {
            let cookie = e.data as u32;
            let Some(p) = st.pend.get_mut(&cookie) else {
                continue;
            };
            let first = p.kernel.is_none();
            p.kernel = Some((e.res, e.res2));
            if first {
                st.in_kernel = st.in_kernel.saturating_sub(1);
            }
            let Some(p) = st.pend.get_mut(&cookie) else {
                continue;
            };
            if ready(p) {
                publish(c, &mut st, cookie);
            }
        }
    }
}

fn delivered(c: &Ctx, done: &[Done]) {
    {
        let mut st = c.lock();
        for d in done {
            // An iocb whose error was published at once is gone: its late
            // delivery is dropped.
            let Some(p) = st.pend.get_mut(&d.cookie) else {
                continue;
            };
            p.delivered = true;
            p.dev_error = d.error;
            if ready(p) {
                publish(c, &mut st, d.cookie);
            }
        }
    }
}

fn device_gone(c: &Ctx) {
    {
        let mut st = c.lock();
        let now: Vec<u32> = st
            .pend
            .iter()
            .filter(|(_, p)| ready(p))
            .map(|(&k, _)| k)
            .collect();
        for k in now {
            publish(c, &mut st, k);
        }
    }
}

/// Writes `cookie`'s event into the program's ring as fs/aio.c's
/// `aio_complete` does (the event, then the tail, then the waiters woken)
/// and queues its eventfd's signal.
fn publish(c: &Ctx, st: &mut State, cookie: u32) {
    let Some(p) = st.pend.remove(&cookie) else {
        return;
    };
    let (mut res, res2) = p.kernel.unwrap_or((0, 0));
    if res >= 0 && p.cmd && p.delivered && p.dev_error {
        // A command the device failed: EIO, as a blocking call's.
        res = -i64::from(libc::EIO);
    }
    let tail = c.tail().load(Relaxed) % c.nr;
    // SAFETY: an event slot of our ring; io_submit's room keeps the ring
    // from overflowing (at most nr - 1 in flight or unreaped, fs/aio.c's
    // reqs_available), so this one is not the program's to read yet.
    unsafe {
        c.event_at(tail).write_volatile(IoEvent {
            data: p.data,
            obj: p.obj,
            res,
            res2,
        })
    };
    c.tail().store((tail + 1) % c.nr, SeqCst);
    // The kernel's order (fs/aio.c aio_complete): the event, its eventfd,
    // then the waiters: a program woken by the eventfd finds the event in
    // the ring, and a waiter woken by the ring finds the eventfd signalled.
    if p.resfd >= 0 {
        signal(vec![p.resfd]);
    }
    if c.waiters.load(SeqCst) > 0 && c.unreaped() >= c.want.load(SeqCst) {
        wake(c.tail());
        if c.pwaiters.load(SeqCst) > 0 {
            c.poke();
        }
    }
    if st.pend.is_empty() {
        c.drained.notify_all();
    }
}

/// Signals each eventfd once (write 1, as the kernel's `eventfd_signal`),
/// then closes our duplicate.
fn signal(fds: Vec<c_int>) {
    for fd in fds {
        let one: u64 = 1;
        // SAFETY: our own descriptor and an 8-byte buffer.
        unsafe {
            libc::syscall(libc::SYS_write, fd, &one as *const u64, 8);
            libc::syscall(libc::SYS_close, fd);
        }
    }
}

/// Reads the program's iocbs at `ptrs` into `out` in one system call (an
/// io_submit of QD16 reads sixteen): how many were read whole before the
/// first that faults.
fn read_iocbs(ptrs: &[usize], out: &mut [Iocb]) -> usize {
    const SIZE: usize = std::mem::size_of::<Iocb>();
    // IOV_MAX (include/uapi/linux/uio.h UIO_MAXIOV): the most one call takes.
    const IOV_MAX: usize = 1024;
    let mut done = 0;
    for (chunk, dst) in ptrs.chunks(IOV_MAX).zip(out.chunks_mut(IOV_MAX)) {
        let remote: Vec<iovec> = chunk
            .iter()
            .map(|&p| iovec {
                iov_base: p as *mut c_void,
                iov_len: SIZE,
            })
            .collect();
        let local = iovec {
            iov_base: dst.as_mut_ptr() as *mut c_void,
            iov_len: dst.len() * SIZE,
        };
        // SAFETY: `dst` has room for every iocb asked; the kernel checks
        // the program's addresses and stops at the first fault.
        let r = unsafe {
            libc::process_vm_readv(
                libc::getpid(),
                &local,
                1,
                remote.as_ptr(),
                remote.len() as _,
                0,
            )
        };
        let whole = if r < 0 && matches!(route::errno(), libc::ENOSYS | libc::EPERM) {
            // As in `read_user`: a sandbox refuses the call; plain reads.
            for (k, &p) in chunk.iter().enumerate() {
                // SAFETY: the program's iocb as it passed it.
                dst[k] = unsafe { (p as *const Iocb).read_unaligned() };
            }
            chunk.len()
        } else {
            r.max(0) as usize / SIZE
        };
        done += whole;
        if whole < chunk.len() {
            break;
        }
    }
    done
}

/// The kernel's own errors for an iocb it would refuse before taking it
/// (fs/aio.c io_submit_one: reserved field, overflow), or for its eventfd
/// (`eventfd_ctx_fdget`: EBADF, EINVAL); else our duplicate of the
/// eventfd (-1 without IOCB_FLAG_RESFD).
fn check(cb: &Iocb) -> Result<c_int, i64> {
    if cb.aio_reserved2 != 0 || cb.aio_nbytes > isize::MAX as u64 {
        return Err(-i64::from(libc::EINVAL));
    }
    if cb.aio_flags & IOCB_FLAG_RESFD == 0 {
        return Ok(-1);
    }
    // SAFETY: F_DUPFD_CLOEXEC takes an integer; EBADF for a closed number.
    let d = unsafe { libc::fcntl(cb.aio_resfd as c_int, libc::F_DUPFD_CLOEXEC, 0) };
    if d < 0 {
        return Err(-i64::from(libc::EBADF));
    }
    let is_eventfd = std::fs::read_link(format!("/proc/self/fd/{d}"))
        .is_ok_and(|l| l.as_os_str() == "anon_inode:[eventfd]");
    if !is_eventfd {
        // SAFETY: our duplicate.
        unsafe { libc::syscall(libc::SYS_close, d) };
        return Err(-i64::from(libc::EINVAL));
    }
    Ok(d)
}

/// The request kind of a direct iocb's command.
fn iocb_kind(op: u16) -> Option<Kind> {
    match op {
        IOCB_CMD_PREAD | IOCB_CMD_PREADV => Some(Kind::Read),
        IOCB_CMD_PWRITE | IOCB_CMD_PWRITEV => Some(Kind::Write),
        IOCB_CMD_FSYNC | IOCB_CMD_FDSYNC => Some(Kind::Flush),
        _ => None,
    }
}

/// The twin an iocb's data may move through (`fd::twin_for`: only
/// where that cannot change its result); `None`: the program's own
/// descriptor (a flush always).
fn iocb_twin(cb: &Iocb) -> Option<c_int> {
    let (write, bufs) = match cb.aio_lio_opcode {
        IOCB_CMD_PREAD | IOCB_CMD_PWRITE => (
            cb.aio_lio_opcode == IOCB_CMD_PWRITE,
            fd::Bufs::One(cb.aio_buf as usize, cb.aio_nbytes as usize),
        ),
        IOCB_CMD_PREADV | IOCB_CMD_PWRITEV => (
            cb.aio_lio_opcode == IOCB_CMD_PWRITEV,
            fd::Bufs::Vec(cb.aio_buf as *const iovec, cb.aio_nbytes as c_int),
        ),
        _ => return None,
    };
    fd::twin_for(
        cb.aio_fildes as c_int,
        write,
        cb.aio_offset,
        &bufs,
        cb.aio_rw_flags & keep(),
    )
}

/// The bytes an iocb asks to move: `aio_nbytes`, or for the vectored
/// opcodes the sum of its iovecs (`aio_nbytes` counts them).
fn iocb_len(cb: &Iocb) -> u32 {
    match cb.aio_lio_opcode {
        IOCB_CMD_PREAD | IOCB_CMD_PWRITE => cb.aio_nbytes.min(u64::from(u32::MAX)) as u32,
        IOCB_CMD_PREADV | IOCB_CMD_PWRITEV => {
            let n = (cb.aio_nbytes as usize).min(1024);
            let mut v = vec![
                iovec {
                    iov_base: std::ptr::null_mut(),
                    iov_len: 0
                };
                n
            ];
            let got = read_user(
                cb.aio_buf as usize,
                v.as_mut_ptr() as *mut u8,
                n * std::mem::size_of::<iovec>(),
            ) / std::mem::size_of::<iovec>();
            v[..got]
                .iter()
                .fold(0u32, |a, i| a.wrapping_add(i.iov_len as u32))
        }
        _ => 0,
    }
}

/// What `io_submit` keeps of each program iocb beside its copy.
struct Meta {
    /// Our duplicate of its eventfd (-1: none).
    resfd: c_int,
    /// Direct I/O (a device command, counted and marked).
    direct: bool,
    /// The program's aio_data, descriptor and RWF flags (RWF_URGENT and
    /// RWF_BARRIER included: they mark it).
    data: u64,
    fd: c_int,
    rwf: c_int,
    /// Its page-cache twin carries it: its command is posted before the
    /// kernel call ([`early_post`]), with this tag.
    twin: bool,
    early: Option<Tag>,
}

/// `io_submit(ctx, nr, iocbpp)`: the copies go to the shadow in one kernel
/// call, whose return (how many it took, or the first iocb's error) the
/// program gets; each accepted direct iocb's command then goes to the
/// device. A negative errno or the count.
pub(crate) fn submit(id: u64, nr: c_long, iocbpp: *mut *mut Iocb) -> i64 {
    let Some(c) = lookup(id) else {
        return sys(
            libc::SYS_io_submit,
            id as usize,
            nr as usize,
            iocbpp as usize,
            0,
            0,
        );
    };
    // fs/aio.c io_submit: a negative nr, a dying context: EINVAL; nr is
    // cut to the context's size.
    if nr < 0 || c.dying.load(Acquire) {
        return -i64::from(libc::EINVAL);
    }
    let n = (nr as usize).min(c.nr as usize);
    if n == 0 {
        return 0;
    }
    // The program's pointers and iocbs, read as the kernel reads them: a
    // fault stops the batch there (EFAULT if it is the first).
    let mut ptrs = vec![0usize; n];
    let readable = read_user(iocbpp as usize, ptrs.as_mut_ptr() as *mut u8, n * 8) / 8;
    let mut copies: Vec<Box<Iocb>> = Vec::with_capacity(n);
    let mut stop_err = -i64::from(libc::EFAULT);
    let mut extras: Vec<Meta> = Vec::with_capacity(n);
    let cfg = config();
    let mut st = c.lock();
    let room = (c.nr - 1).saturating_sub(st.pend.len() as u32 + c.unreaped()) as usize;
    let mut progs = vec![Iocb::default(); readable];
    let whole = read_iocbs(&ptrs[..readable], &mut progs);
    for prog in &progs[..whole] {
        let mut cb = Box::new(*prog);
        if copies.len() >= room {
            // fs/aio.c aio_get_req: no room left in the ring.
            stop_err = -i64::from(libc::EAGAIN);
            break;
        }
        let resfd = match check(&cb) {
            Ok(fd) => fd,
            Err(e) => {
                stop_err = e;
                break;
            }
        };
        let direct = cfg.is_some()
            && iocb_kind(cb.aio_lio_opcode).is_some()
            && fd::is_direct(cb.aio_fildes as c_int);
        let twin = if direct && c.slot.is_some() {
            iocb_twin(&cb)
        } else {
            None
        };
        extras.push(Meta {
            resfd,
            direct,
            data: cb.aio_data,
            fd: cb.aio_fildes as c_int,
            rwf: cb.aio_rw_flags,
            twin: false,
            early: None,
        });
        let cookie = st.next;
        st.next = st.next.wrapping_add(1);
        let mut copy = *cb;
        copy.aio_data = u64::from(cookie);
        copy.aio_flags &= !IOCB_FLAG_RESFD;
        copy.aio_resfd = 0;
        copy.aio_rw_flags &= keep();
        if let Some(t) = twin {
            copy.aio_fildes = t as u32;
            if let Some(m) = extras.last_mut() {
                m.twin = true;
            }
        }
        *cb = copy;
        copies.push(cb);
    }
    let k = copies.len();
    if k == 0 {
        return stop_err;
    }
    // The entries first: the reaper may see a completion before the
    // kernel call returns.
    let ptrs_k: Vec<*const Iocb> = copies.iter().map(|b| &**b as *const Iocb).collect();
    let mut cookies = Vec::with_capacity(k);
    for (i, copy) in copies.into_iter().enumerate() {
        let cookie = copy.aio_data as u32;
        cookies.push(cookie);
        st.pend.insert(
            cookie,
            Pend {
                copy,
                data: extras[i].data,
                obj: ptrs[i] as u64,
                fd: extras[i].fd,
                resfd: extras[i].resfd,
                cmd: false,
                posting: true,
                kernel: None,
                delivered: false,
                dev_error: false,
            },
        );
    }
    st.in_kernel += k as u32;
    early_post(&c, &mut st, &cookies, &mut extras);
    drop(st);
    let chunk = if extras.iter().any(|m| m.twin) {
        AIO_PLUG_THRESHOLD
    } else {
        k
    };
    let r = submit_copies(c.shadow, &ptrs_k, chunk);
    let taken = r.max(0) as usize;
    // Not taken: forgotten (their eventfd duplicates closed).
    {
        let mut st = c.lock();
        for &cookie in &cookies[taken..] {
            if let Some(p) = st.pend.remove(&cookie) {
                st.in_kernel = st.in_kernel.saturating_sub(1);
                if p.resfd >= 0 {
                    // SAFETY: our duplicate.
                    unsafe { libc::syscall(libc::SYS_close, p.resfd) };
                }
            }
        }
        if st.pend.is_empty() {
            c.drained.notify_all();
        }
    }
    if taken > 0 {
        post(&c, &cookies[..taken], &extras[..taken]);
    }
    match (taken, r) {
        (0, r) if r < 0 => r,
        (0, _) => stop_err,
        (t, _) => t as i64,
    }
}

/// The commands of the iocbs the page-cache twin carries, posted before
/// the kernel call: the kernel copies their data inside it (buffered aio
/// is synchronous), ~1.5-2.5 us per 4 KiB here, while the device serves
/// them, as a device's DMA moves O_DIRECT data during its command (posted
/// after the copies, a batch of 16 held the device idle for ~30 us).
/// Their iocbs are ones the kernel's O_DIRECT would accept as they are
/// (`fd::twin_for`), so the kernel refuses none of them short of
/// running out of requests; a command posted for one it did refuse
/// completes unseen.
fn early_post(c: &Ctx, st: &mut State, cookies: &[u32], extras: &mut [Meta]) {
    let Some(cfg) = config() else { return };
    let s = slot_of(c);
    let k = cookies.len();
    for (i, &cookie) in cookies.iter().enumerate() {
        if !extras[i].twin {
            continue;
        }
        let Some(p) = st.pend.get_mut(&cookie) else {
            continue;
        };
        let cb = *p.copy;
        let Some(kind) = iocb_kind(cb.aio_lio_opcode) else {
            continue;
        };
        let tag = tag_of(
            cfg,
            p.fd,
            extras[i].rwf,
            Call::Submit { last: i + 1 == k },
            kind,
        );
        extras[i].early = Some(tag);
        p.cmd = command(s, cookie, kind, tag, iocb_len(&cb), cb.aio_offset);
    }
}

/// The slot `c` posts to (`None`: none, or the device is gone).
fn slot_of(c: &Ctx) -> Option<&'static shm::Slot> {
    c.slot.zip(route::region()).map(|(i, r)| r.slot(i))
}

/// Posts one iocb's command; whether it was (the slot may be full: the
/// event then comes at the kernel's completion). Linux's aio cannot poll:
/// a context's commands take interrupts.
fn command(s: Option<&shm::Slot>, cookie: u32, kind: Kind, tag: Tag, len: u32, off: i64) -> bool {
    let Some(s) = s else { return false };
    s.post(Cmd {
        cookie,
        write: kind != Kind::Read,
        marks: route::bits(tag.marks),
        critical: tag.critical,
        polled: false,
        len,
        offset: if kind == Kind::Flush { 0 } else { off as u64 },
    })
}

/// fs/aio.c's AIO_PLUG_THRESHOLD: an io_submit of more iocbs plugs the
/// block layer for the call.
const AIO_PLUG_THRESHOLD: usize = 2;

/// Submits `copies` to the shadow, `chunk` at a time, as one io_submit
/// would (the kernel takes iocbs in order and stops at the first it
/// refuses): how many it took, or the first one's error. In chunks of
/// [`AIO_PLUG_THRESHOLD`] when the page-cache twin carries some: the
/// kernel's buffered aio reads synchronously inside io_submit, and under
/// the plug of a larger call each cold read waited for the plug's flush
/// (measured natively, fio buffered libaio QD16 random 4 KiB reads on a
/// cold cache: 335-361 IOPS with iodepth_batch_submit=16 against
/// 217-227K with 1; under exec --device optane the same job ran at
/// 400-540 IOPS, slat 30-40 ms, before this).
fn submit_copies(shadow: u64, copies: &[*const Iocb], chunk: usize) -> i64 {
    let mut taken = 0usize;
    for part in copies.chunks(chunk.max(1)) {
        let r = sys(
            libc::SYS_io_submit,
            shadow as usize,
            part.len(),
            part.as_ptr() as usize,
            0,
            0,
        );
        if r < 0 {
            return if taken == 0 { r } else { taken as i64 };
        }
        taken += r as usize;
        if (r as usize) < part.len() {
            break;
        }
    }
    taken as i64
}

/// After the shadow took `cookies`: the completions already there are
/// reaped (an iocb the kernel refused at once, a misaligned one's EINVAL,
/// or a twin's page-cache copy, done inside io_submit), then each direct
/// iocb's command is posted unless the kernel already failed it or found
/// the end of the file for a read (the kernel sends the device nothing
/// then); the last of the batch is Barrier under TOS Table 1.
fn post(c: &Ctx, cookies: &[u32], extras: &[Meta]) {
    let mut ev = [IoEvent::default(); REAP];
    let zero = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    loop {
        let got = sys(
            libc::SYS_io_getevents,
            c.shadow as usize,
            0,
            REAP,
            ev.as_mut_ptr() as usize,
            &zero as *const libc::timespec as usize,
        );
        if got > 0 {
            kernel_done(c, &ev[..got as usize]);
        }
        if got < REAP as i64 {
            break;
        }
    }
    let cfg = config();
    let s = slot_of(c);
    let n = cookies.len();
    let mut any = false;
    let mut st = c.lock();
    for (i, &cookie) in cookies.iter().enumerate() {
        let Some(p) = st.pend.get_mut(&cookie) else {
            continue;
        };
        let cb = *p.copy;
        if let (true, Some(cfg), Some(kind)) = (extras[i].direct, cfg, iocb_kind(cb.aio_lio_opcode))
        {
            any = true;
            let call = if kind == Kind::Flush {
                Call::Flush
            } else {
                Call::Submit { last: i + 1 == n }
            };
            let tag = match extras[i].early {
                Some(t) => t,
                None => tag_of(cfg, p.fd, extras[i].rwf, call, kind),
            };
            LIVE.request(kind, tag.marks);
            let refused = match p.kernel {
                Some((res, _)) => res < 0 || (res == 0 && kind == Kind::Read),
                None => false,
            };
            if !refused && extras[i].early.is_none() {
                let len = match p.kernel {
                    Some((res, _)) if res > 0 => res.min(i64::from(u32::MAX)) as u32,
                    _ => iocb_len(&cb),
                };
                p.cmd = command(s, cookie, kind, tag, len, cb.aio_offset);
            }
        }
        p.posting = false;
        if ready(p) {
            publish(c, &mut st, cookie);
        }
    }
    if st.in_kernel > 0 {
        c.kernel_wait.notify_one();
    }
    drop(st);
    if any {
        LIVE.call(Family::IoSubmit);
    }
}

/// Moves up to `max` published events from the ring to `out`, as the
/// kernel's `aio_read_events_ring` (head stored after the copy).
fn take(c: &Ctx, out: *mut IoEvent, max: usize) -> usize {
    let _one = c.reap.lock().unwrap_or_else(|e| e.into_inner());
    let mut head = c.head().load(Acquire) % c.nr;
    let tail = c.tail().load(Acquire) % c.nr;
    let mut n = 0;
    while head != tail && n < max {
        // SAFETY: a published event of our ring; `out` has room for `max`
        // events (the program's array, io_getevents' contract).
        unsafe { out.add(n).write(c.event_at(head).read_volatile()) };
        head = (head + 1) % c.nr;
        n += 1;
    }
    c.head().store(head, Release);
    n
}

/// `io_getevents(ctx, min_nr, nr, events, timeout)` on a routed context
/// (fs/aio.c do_io_getevents, read_events): EINVAL unless 0 <= min_nr <=
/// nr; waits until min_nr events or the timeout (none: for ever), and
/// returns up to nr; EINTR if a signal handler ran before any came;
/// EINVAL once the context is being destroyed and none is left.
fn getevents(
    c: &Ctx,
    min: c_long,
    nr: c_long,
    events: *mut IoEvent,
    timeout: Option<Duration>,
    mask: Option<&libc::sigset_t>,
) -> i64 {
    if min < 0 || min > nr {
        return -i64::from(libc::EINVAL);
    }
    let (min, nr) = (min as usize, nr as usize);
    if events.is_null() && nr > 0 {
        return if c.unreaped() > 0 {
            -i64::from(libc::EFAULT)
        } else {
            0
        };
    }
    let deadline = timeout.map(|t| Instant::now() + t);
    let mut got = 0;
    let mut interrupted = false;
    let mut registered: Option<u32> = None;
    c.waiters.fetch_add(1, SeqCst);
    loop {
        // SAFETY: within the program's array of nr events.
        got += take(c, unsafe { events.add(got) }, nr - got);
        if got >= min || got == nr || c.dying.load(SeqCst) {
            break;
        }
        // Woken only once the ring holds what this waiter still needs, as
        // the kernel wakes a waiter only when its min_nr is available
        // (fs/aio.c aio_complete and struct aio_waiter, from the 2023
        // patch "fs/aio: obey min_nr when doing wakeups"); a wake-up per
        // event cost a context switch per I/O (fio QD16 batched: 16 per
        // batch).
        let need = (min - got).min(c.nr as usize) as u32;
        if registered != Some(need) {
            c.need(registered, Some(need));
            registered = Some(need);
        }
        let seen = c.tail().load(SeqCst);
        if c.unreaped() >= need {
            continue;
        }
        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        if left.is_some_and(|l| l.is_zero()) {
            break;
        }
        let slice = left.map_or(SLICE, |l| l.min(SLICE));
        let ts = libc::timespec {
            tv_sec: slice.as_secs() as libc::time_t,
            tv_nsec: slice.subsec_nanos() as c_long,
        };
        let r = match (mask, c.eventfd()) {
            (Some(m), Some(efd)) => wait_masked(c, efd, need, &ts, m),
            // SAFETY: FUTEX_WAIT on our ring's tail word with a timeout.
            _ => unsafe {
                libc::syscall(
                    libc::SYS_futex,
                    c.tail().as_ptr(),
                    FUTEX_WAIT_PRIVATE,
                    seen,
                    &ts as *const libc::timespec,
                    0,
                    0,
                )
            },
        };
        if r < 0 && route::errno() == libc::EINTR {
            interrupted = true;
            break;
        }
    }
    if registered.is_some() {
        c.need(registered, None);
    }
    c.waiters.fetch_sub(1, SeqCst);
    if got == 0 && c.dying.load(SeqCst) {
        return -i64::from(libc::EINVAL);
    }
    if got == 0 && interrupted {
        return -i64::from(libc::EINTR);
    }
    got as i64
}

/// io_pgetevents' wait: `ppoll` on the context's eventfd with the
/// program's mask, which the kernel sets and restores atomically with the
/// wait, as io_pgetevents does (a signal the mask lets in ends it with
/// EINTR, even one that was pending before). The publisher writes the
/// eventfd while such a waiter waits. -1 with errno, or ppoll's count.
fn wait_masked(c: &Ctx, efd: c_int, need: u32, ts: &libc::timespec, mask: &libc::sigset_t) -> i64 {
    c.pwaiters.fetch_add(1, SeqCst);
    let mut r = 0;
    if c.unreaped() < need && !c.dying.load(SeqCst) {
        let mut p = libc::pollfd {
            fd: efd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one pollfd, the program's mask (a full sigset_t, its
        // kernel part read from the program).
        r = i64::from(unsafe { libc::ppoll(&mut p, 1, ts, mask) });
    }
    let e = route::errno();
    c.pwaiters.fetch_sub(1, SeqCst);
    let mut n: u64 = 0;
    // SAFETY: our eventfd, drained without blocking (EFD_NONBLOCK).
    unsafe { libc::syscall(libc::SYS_read, efd, &mut n as *mut u64, 8) };
    route::set_errno(e);
    r
}

/// The program's timeout, read as the kernel's get_timespec64 (EFAULT for
/// an unreadable one); a negative one is no wait.
fn timeout_of(ts: *const libc::timespec) -> Result<Option<Duration>, i64> {
    if ts.is_null() {
        return Ok(None);
    }
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    let size = std::mem::size_of::<libc::timespec>();
    if read_user(ts as usize, &mut t as *mut libc::timespec as *mut u8, size) != size {
        return Err(-i64::from(libc::EFAULT));
    }
    if t.tv_sec < 0 || t.tv_nsec < 0 {
        return Ok(Some(Duration::ZERO));
    }
    let ns = (t.tv_nsec as u64).min(u64::MAX / 2);
    Ok(Some(
        Duration::from_secs(t.tv_sec as u64).saturating_add(Duration::from_nanos(ns)),
    ))
}

/// `io_getevents`. A negative errno or the count.
pub(crate) fn get_events(
    id: u64,
    min: c_long,
    nr: c_long,
    events: *mut IoEvent,
    ts: *const libc::timespec,
) -> i64 {
    let Some(c) = lookup(id) else {
        return sys(
            libc::SYS_io_getevents,
            id as usize,
            min as usize,
            nr as usize,
            events as usize,
            ts as usize,
        );
    };
    match timeout_of(ts) {
        Ok(t) => getevents(&c, min, nr, events, t, None),
        Err(e) => e,
    }
}

/// `io_pgetevents`: as `io_getevents` with the signal mask `usig` names
/// in force while it waits (fs/aio.c: EFAULT for an unreadable timeout or
/// `usig`, EINVAL for a mask whose size is not the kernel's sigset_t). The
/// wait is a `ppoll` with the mask, set atomically with it as the kernel
/// does ([`wait_masked`]). On a context not ours, the program's own call
/// goes to the kernel unchanged (the library never issues io_pgetevents
/// of its own: its sixth argument cannot carry OWN_CALL).
pub(crate) fn pget_events(
    id: u64,
    min: c_long,
    nr: c_long,
    events: *mut IoEvent,
    ts: *const libc::timespec,
    usig: *const AioSigset,
) -> Option<i64> {
    let c = lookup(id)?;
    let t = match timeout_of(ts) {
        Ok(t) => t,
        Err(e) => return Some(e),
    };
    let mut mask: Option<libc::sigset_t> = None;
    if !usig.is_null() {
        let mut u = AioSigset {
            sigmask: std::ptr::null(),
            sigsetsize: 0,
        };
        let size = std::mem::size_of::<AioSigset>();
        if read_user(usig as usize, &mut u as *mut AioSigset as *mut u8, size) != size {
            return Some(-i64::from(libc::EFAULT));
        }
        if !u.sigmask.is_null() {
            if u.sigsetsize != SIGSET_SIZE {
                return Some(-i64::from(libc::EINVAL));
            }
            // SAFETY: sigset_t is plain data; read_user fills its first 8
            // bytes, the kernel's part (the rest stays empty).
            let mut m: libc::sigset_t = unsafe { std::mem::zeroed() };
            if read_user(u.sigmask as usize, &mut m as *mut _ as *mut u8, SIGSET_SIZE)
                != SIGSET_SIZE
            {
                return Some(-i64::from(libc::EFAULT));
            }
            mask = Some(m);
        }
    }
    if mask.is_some() && c.eventfd().is_none() {
        // No eventfd: the mask set around the whole wait instead (a signal
        // it lets in just before the wait begins does not end it).
        // SAFETY: sigset_t is plain data; valid sets.
        let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
        if let Some(m) = &mask {
            unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, m, &mut old) };
        }
        let r = getevents(&c, min, nr, events, t, None);
        // SAFETY: restores the caller's mask.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
        return Some(r);
    }
    Some(getevents(&c, min, nr, events, t, mask.as_ref()))
}

/// `io_cancel(ctx, iocb, result)`: to the shadow, with the copy when the
/// iocb is one of ours in flight (and the program's iocb still carries
/// the kernel's key, 0), else with the program's pointer, so the kernel's
/// own errors answer (EFAULT, EINVAL for a bad key, EINVAL for a read or
/// write, which cannot be cancelled, or an iocb it does not hold).
pub(crate) fn cancel(id: u64, iocb: *mut Iocb, result: *mut IoEvent) -> i64 {
    let Some(c) = lookup(id) else {
        return sys(
            libc::SYS_io_cancel,
            id as usize,
            iocb as usize,
            result as usize,
            0,
            0,
        );
    };
    let st = c.lock();
    let mine = st
        .pend
        .values()
        .find(|p| p.obj == iocb as u64 && !p.posting);
    let mut key = [0u8; 4];
    let key_ok = read_user(iocb as usize + 8, key.as_mut_ptr(), 4) == 4 && key == [0; 4];
    let target = match mine {
        Some(p) if key_ok => &*p.copy as *const Iocb as usize,
        _ => iocb as usize,
    };
    // The lock is held across the call: the copy stays alive while the
    // kernel reads it (a publication would free it).
    let r = sys(
        libc::SYS_io_cancel,
        c.shadow as usize,
        target,
        result as usize,
        0,
        0,
    );
    drop(st);
    r
}

/// `io_destroy(ctx)`: the context goes from the table at once (a second
/// `io_destroy`, or any call on it, is then EINVAL, as fs/aio.c's
/// kill_ioctx makes it), its waiters wake (EINVAL if nothing is left for
/// them), cancellable iocbs (IOCB_CMD_POLL) are cancelled, and it waits
/// until every iocb in flight completed and was published (the kernel
/// waits for its I/O: the program's buffers are free after); then the
/// shadow goes, and the threads with it.
pub(crate) fn destroy(id: u64) -> i64 {
    let c = CTXS
        .lock()
        .ok()
        .and_then(|mut g| g.as_mut().and_then(|m| m.remove(&id)));
    let Some(c) = c else {
        return sys(libc::SYS_io_destroy, id as usize, 0, 0, 0, 0);
    };
    c.dying.store(true, SeqCst);
    wake(c.tail());
    c.poke();
    let mut st = c.lock();
    for p in st.pend.values() {
        if p.copy.aio_lio_opcode == IOCB_CMD_POLL && p.kernel.is_none() {
            let mut ev = IoEvent::default();
            let copy = &*p.copy as *const Iocb as usize;
            let _ = sys(
                libc::SYS_io_cancel,
                c.shadow as usize,
                copy,
                &mut ev as *mut IoEvent as usize,
                0,
                0,
            );
        }
    }
    while !st.pend.is_empty() {
        let (g, t) = c
            .drained
            .wait_timeout(st, route::WATCH)
            .unwrap_or_else(|e| e.into_inner());
        st = g;
        if t.timed_out() && !route::device_alive() {
            drop(st);
            device_gone(&c);
            st = c.lock();
        }
    }
    c.stop.store(true, SeqCst);
    c.kernel_wait.notify_all();
    drop(st);
    sys(libc::SYS_io_destroy, c.shadow as usize, 0, 0, 0, 0)
}

/// The ring logic on this process's own kernel, without `exec` or a
/// program: a routed context as `make` builds it on a real shadow kernel
/// context (no shared region here, so no device slot: an event is
/// published at the kernel's completion), driven through the same calls
/// the interposed symbols make. What the device decides is driven by hand
/// (`delivered`, `kernel_done`) on entries put in the table.
#[cfg(test)]
mod tests {
    use super::*;

    /// A routed context whose ring holds `nr` events, on a shadow kernel
    /// context of 256 (so that the kernel never refuses before our ring's
    /// room does).
    fn routed(nr: u32) -> (u64, Arc<Ctx>) {
        let mut shadow: u64 = 0;
        let r = sys(
            libc::SYS_io_setup,
            256,
            &mut shadow as *mut u64 as usize,
            0,
            0,
            0,
        );
        assert_eq!(r, 0, "io_setup (aio-max-nr reached?)");
        // SAFETY: the kernel context's ring, mapped by io_setup: its id.
        let kid = unsafe { std::ptr::read_volatile(shadow as *const u32) };
        let id = make(shadow, kid, nr).expect("a routed context");
        (id, lookup(id).expect("in the table"))
    }

    /// A file of `blocks` 4 KiB blocks, block `i` filled with byte `i`.
    struct File {
        path: std::path::PathBuf,
        fd: c_int,
    }

    impl File {
        fn new(name: &str, blocks: u8) -> File {
            let path = std::env::temp_dir().join(format!("cint-aio-{name}-{}", std::process::id()));
            let data: Vec<u8> = (0..blocks).flat_map(|b| [b; 4096]).collect();
            std::fs::write(&path, data).unwrap();
            let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
            // SAFETY: a NUL-terminated path.
            let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY) };
            assert!(fd >= 0);
            File { path, fd }
        }
    }

    impl Drop for File {
        fn drop(&mut self) {
            // SAFETY: our descriptor.
            unsafe { libc::close(self.fd) };
            let _ = std::fs::remove_file(&self.path);
        }
    }

    fn pread(fd: c_int, buf: &mut [u8], off: i64, data: u64) -> Iocb {
        Iocb {
            aio_data: data,
            aio_lio_opcode: IOCB_CMD_PREAD,
            aio_fildes: fd as u32,
            aio_buf: buf.as_mut_ptr() as u64,
            aio_nbytes: buf.len() as u64,
            aio_offset: off,
            ..Iocb::default()
        }
    }

    fn submit_all(id: u64, cbs: &mut [Iocb]) -> i64 {
        let mut ptrs: Vec<*mut Iocb> = cbs.iter_mut().map(|c| c as *mut Iocb).collect();
        submit(id, ptrs.len() as c_long, ptrs.as_mut_ptr())
    }

    /// The ring's head and tail as a program reads them (`struct aio_ring`:
    /// the third and fourth u32).
    fn head_tail(id: u64) -> (u32, u32) {
        // SAFETY: the program's view of our ring, mapped while the context
        // lives.
        unsafe {
            let h = id as *const u32;
            (
                std::ptr::read_volatile(h.add(2)),
                std::ptr::read_volatile(h.add(3)),
            )
        }
    }

    /// Waits (at most 5 s) until the ring holds `n` unreaped events.
    fn until_unreaped(c: &Ctx, n: u32) {
        let t = Instant::now();
        while c.unreaped() != n && t.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(c.unreaped(), n, "events published");
    }

    /// Reaps as fio's `userspace_reap=1` does (engines/libaio.c
    /// `user_io_getevents`): head and tail read in memory, each event
    /// copied, head stored past it.
    fn user_reap(id: u64, max: usize) -> Vec<IoEvent> {
        let ring = id as *mut u32;
        let mut out = Vec::new();
        // SAFETY: our ring's header and events, as a program reads them.
        unsafe {
            let nr = std::ptr::read_volatile(ring.add(1));
            while out.len() < max {
                let head = std::ptr::read_volatile(ring.add(2)) % nr;
                let tail = std::ptr::read_volatile(ring.add(3)) % nr;
                if head == tail {
                    break;
                }
                let ev = (id as usize + RING_HEADER + head as usize * EVENT) as *const IoEvent;
                out.push(ev.read_volatile());
                std::ptr::write_volatile(ring.add(2), (head + 1) % nr);
            }
        }
        out
    }

    #[test]
    fn the_ring_is_laid_out_as_the_kernels_struct_aio_ring() {
        let (id, c) = routed(8);
        // SAFETY: our ring's header.
        let h: Vec<u32> = (0..8)
            .map(|i| unsafe { std::ptr::read_volatile((id as *const u32).add(i)) })
            .collect();
        // SAFETY: the shadow's id, its ring's first u32.
        let kid = unsafe { std::ptr::read_volatile(c.shadow as *const u32) };
        assert_eq!(h, [kid, 8, 0, 0, AIO_RING_MAGIC, 1, 0, 32]);
        assert_eq!(c.ring_len, 4096, "the header and 8 events: one page");
        drop(c);
        assert_eq!(destroy(id), 0);
        assert_eq!(destroy(id), -i64::from(libc::EINVAL), "destroyed once");
    }

    #[test]
    fn submitted_reads_are_published_in_the_ring_and_reaped_by_io_getevents() {
        let f = File::new("getevents", 3);
        let (id, c) = routed(8);
        let mut bufs = vec![vec![0xffu8; 4096]; 3];
        let mut cbs: Vec<Iocb> = bufs
            .iter_mut()
            .enumerate()
            .map(|(i, b)| pread(f.fd, b, 4096 * i as i64, 100 + i as u64))
            .collect();
        assert_eq!(submit_all(id, &mut cbs), 3);
        until_unreaped(&c, 3);
        assert_eq!(head_tail(id), (0, 3), "three published, none reaped");
        let mut ev = [IoEvent::default(); 8];
        let ts = libc::timespec {
            tv_sec: 5,
            tv_nsec: 0,
        };
        assert_eq!(get_events(id, 3, 8, ev.as_mut_ptr(), &ts), 3);
        assert_eq!(head_tail(id), (3, 3), "reaped: head caught up");
        let mut got: Vec<(u64, u64, i64)> =
            ev[..3].iter().map(|e| (e.data, e.obj, e.res)).collect();
        got.sort();
        let want: Vec<(u64, u64, i64)> = cbs
            .iter()
            .map(|cb| (cb.aio_data, cb as *const Iocb as u64, 4096))
            .collect();
        assert_eq!(
            got, want,
            "the program's aio_data and iocb, the kernel's result"
        );
        for (i, b) in bufs.iter().enumerate() {
            assert!(
                b.iter().all(|&x| x == i as u8),
                "block {i} read by the kernel"
            );
        }
        // Nothing left: a wait of none returns at once with none.
        assert_eq!(get_events(id, 0, 8, ev.as_mut_ptr(), &ts), 0);
        assert_eq!(
            get_events(id, 2, 1, ev.as_mut_ptr(), &ts),
            -i64::from(libc::EINVAL)
        );
        drop(c);
        assert_eq!(destroy(id), 0);
    }

    #[test]
    fn a_program_reaps_the_ring_in_user_space_and_its_room_is_nr_minus_one() {
        let f = File::new("room", 8);
        let (id, c) = routed(4);
        let mut bufs = vec![vec![0u8; 4096]; 6];
        let mut cbs: Vec<Iocb> = bufs
            .iter_mut()
            .enumerate()
            .map(|(i, b)| pread(f.fd, b, 4096 * i as i64, i as u64))
            .collect();
        // fs/aio.c: nr cut to the context's size, and room for nr - 1
        // events in flight or unreaped (one slot tells full from empty).
        assert_eq!(submit_all(id, &mut cbs[..5]), 3, "cut at the ring's room");
        until_unreaped(&c, 3);
        assert_eq!(head_tail(id), (0, 3));
        assert_eq!(
            submit_all(id, &mut cbs[3..4]),
            -i64::from(libc::EAGAIN),
            "a full ring takes nothing"
        );
        assert_eq!(head_tail(id), (0, 3), "the refused iocb published nothing");
        let first = user_reap(id, 1);
        assert_eq!(first.len(), 1);
        assert_eq!(head_tail(id), (1, 3));
        // One slot free: one more, whose event wraps the tail to 0.
        assert_eq!(submit_all(id, &mut cbs[3..5]), 1);
        until_unreaped(&c, 3);
        assert_eq!(head_tail(id), (1, 0), "tail wrapped modulo nr");
        let rest = user_reap(id, 8);
        assert_eq!(head_tail(id), (0, 0), "head wrapped too");
        let mut data: Vec<u64> = first.iter().chain(&rest).map(|e| e.data).collect();
        data.sort();
        assert_eq!(data, [0, 1, 2, 3], "each event once");
        assert!(first.iter().chain(&rest).all(|e| e.res == 4096));
        assert_eq!(c.unreaped(), 0);
        drop(c);
        assert_eq!(destroy(id), 0);
    }

    #[test]
    fn a_cancelled_poll_is_published_and_a_completed_read_cannot_be_cancelled() {
        let mut p = [0 as c_int; 2];
        // SAFETY: a pipe of ours.
        assert_eq!(unsafe { libc::pipe(p.as_mut_ptr()) }, 0);
        let (id, c) = routed(8);
        let mut poll = Iocb {
            aio_data: 7,
            aio_lio_opcode: IOCB_CMD_POLL,
            aio_fildes: p[0] as u32,
            aio_buf: libc::POLLIN as u64,
            ..Iocb::default()
        };
        assert_eq!(submit_all(id, std::slice::from_mut(&mut poll)), 1);
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(c.unreaped(), 0, "nothing to read: the poll waits");
        assert_eq!(c.lock().pend.len(), 1);
        let mut ev = IoEvent::default();
        // fs/aio.c io_cancel: a cancellable iocb the context holds gives
        // EINPROGRESS, its event comes through the ring.
        assert_eq!(
            cancel(id, &mut poll, &mut ev),
            -i64::from(libc::EINPROGRESS)
        );
        let mut out = [IoEvent::default(); 2];
        let ts = libc::timespec {
            tv_sec: 5,
            tv_nsec: 0,
        };
        assert_eq!(get_events(id, 1, 2, out.as_mut_ptr(), &ts), 1);
        assert_eq!(
            (out[0].data, out[0].obj),
            (7, &poll as *const Iocb as u64),
            "the program's iocb, not our copy"
        );
        assert_eq!(out[0].res, 0, "a cancelled poll's mask: none");
        assert!(c.lock().pend.is_empty());
        // A read that completed is no longer the kernel's to cancel.
        let f = File::new("cancel", 1);
        let mut buf = vec![0u8; 4096];
        let mut rd = pread(f.fd, &mut buf, 0, 8);
        assert_eq!(submit_all(id, std::slice::from_mut(&mut rd)), 1);
        until_unreaped(&c, 1);
        assert_eq!(cancel(id, &mut rd, &mut ev), -i64::from(libc::EINVAL));
        assert_eq!(head_tail(id).1, 2, "one event each");
        drop(c);
        assert_eq!(destroy(id), 0);
        // SAFETY: our pipe.
        unsafe {
            libc::close(p[0]);
            libc::close(p[1]);
        }
    }

    /// An entry as `io_submit` leaves one whose command went to the device.
    fn pending(c: &Ctx, cookie: u32, data: u64, posting: bool) {
        c.lock().pend.insert(
            cookie,
            Pend {
                copy: Box::default(),
                data,
                obj: 0x1000 + data,
                fd: -1,
                resfd: -1,
                cmd: true,
                posting,
                kernel: None,
                delivered: false,
                dev_error: false,
            },
        );
    }

    fn kernel_event(cookie: u32, res: i64) -> IoEvent {
        IoEvent {
            data: u64::from(cookie),
            obj: 0,
            res,
            res2: 0,
        }
    }

    #[test]
    fn an_event_waits_for_the_kernels_copy_and_io_submit_and_a_failed_command_is_eio() {
        let (id, c) = routed(8);
        pending(&c, 1, 11, false);
        pending(&c, 2, 22, false);
        pending(&c, 3, 33, true);
        // The device first: nothing to publish before the kernel's copy.
        delivered(
            &c,
            &[
                Done {
                    cookie: 1,
                    result: 0,
                    error: true,
                },
                Done {
                    cookie: 2,
                    result: 0,
                    error: false,
                },
            ],
        );
        assert_eq!(head_tail(id), (0, 0), "the kernel has not completed them");
        kernel_done(&c, &[kernel_event(1, 4096), kernel_event(2, 512)]);
        assert_eq!(head_tail(id), (0, 2));
        // Still being posted by io_submit: not published, whatever else.
        kernel_done(&c, &[kernel_event(3, 4096)]);
        assert_eq!(head_tail(id), (0, 2), "io_submit has not decided yet");
        assert_eq!(c.lock().pend.len(), 1);
        // A late or unknown delivery changes nothing.
        delivered(
            &c,
            &[Done {
                cookie: 9,
                result: 0,
                error: false,
            }],
        );
        let ev = user_reap(id, 8);
        let got: Vec<(u64, u64, i64)> = ev.iter().map(|e| (e.data, e.obj, e.res)).collect();
        assert_eq!(
            got,
            [(11, 0x100b, -i64::from(libc::EIO)), (22, 0x1016, 512)],
            "in publication order; the device's error as EIO"
        );
        // io_submit done with it: published (no device here to wait for).
        let mut st = c.lock();
        st.pend.get_mut(&3).unwrap().posting = false;
        assert!(ready(&st.pend[&3]), "no region: the device counts as gone");
        publish(&c, &mut st, 3);
        drop(st);
        assert_eq!(head_tail(id), (2, 3));
        drop(c);
        assert_eq!(destroy(id), 0);
    }
}
