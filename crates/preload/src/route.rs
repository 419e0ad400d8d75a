//! The program's side of routing (issue 14): a request the library sees is
//! posted to the device in `cinterrupts exec` through this process's slot
//! of the shared region, and the calling thread sleeps until the device's
//! interrupt handler leaves the completion there and wakes it.
//!
//! The data moves here, in the program, by the kernel's own semantics
//! (issue 24): the program's own call on its own descriptor, or with a
//! `--device` profile, for a positioned call the kernel's O_DIRECT would
//! accept as it is, a second descriptor of the same file without O_DIRECT,
//! its "twin" (the page cache moves the data in microseconds; the profile
//! times the command). The twin carries reads (blocking ones checked by
//! their result, `fd::read_twin`; libaio and io_uring ones only into
//! buffers checked first, `fd::twin_for`) and blocking writes not asked to
//! be durable (`fd::write_twin`: repeated on the program's own descriptor
//! unless the twin took all of it; the write-back of its pages started
//! before the call returns and the pages dropped once written,
//! `fd::written`; issue 38 item 6). libaio and io_uring writes move on the
//! program's own descriptor. A call that fails in the kernel returns at
//! once with its errno: no command is posted for it. A command the device
//! fails returns EIO.
//!
//! Waiters: a thread for the blocking calls (its slot claimed at its first
//! routed call; a forked child's thread claims its own), a libaio context
//! (claimed at `io_setup`, waited on by the context's device thread:
//! `crate::aio`). A thread's slot goes back at the thread's or the
//! process's exit, a context's at `io_destroy`.

use std::cell::Cell;
use std::ffi::c_int;
use std::sync::OnceLock;

use policy::Marks;
use shm::{Cmd, Region};

use crate::classify::Tag;
use crate::fd::{is_direct, within};
use crate::state::{config, modelled, LIVE};

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

/// Why this process could not map the region (issue 24 item 3: named in
/// the report with its pid, comm and uid).
static UNMAPPED: OnceLock<String> = OnceLock::new();

pub(crate) fn unmapped() -> Option<String> {
    UNMAPPED.get().cloned()
}

/// The region, even after the device is gone (for what is in flight):
/// through the descriptor the process inherited (whatever user it has
/// become), else through `/proc/EXEC_PID/fd/N` (exec's user only).
pub(crate) fn mapped() -> Option<&'static Region> {
    REGION
        .get_or_init(|| {
            let r = config()?.route.as_ref()?;
            let inherited = r.shm_fd.as_deref().map(Region::open_inherited);
            match inherited {
                Some(Ok(region)) => Some(region),
                _ => match Region::open(&r.shm) {
                    Ok(region) => Some(region),
                    Err(e) => {
                        let fd = match inherited {
                            Some(Err(i)) => format!("the inherited descriptor: {i}; "),
                            _ => String::new(),
                        };
                        let why = format!("cannot map the shared region ({fd}{}: {e})", r.shm);
                        say(&format!("{why}; this process's I/O is not routed"));
                        let _ = UNMAPPED.set(why);
                        None
                    }
                },
            }
        })
        .as_ref()
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

/// Whether this process set up (or held) an io_uring ring.
pub(crate) fn saw_io_uring() -> bool {
    IO_URING.load(std::sync::atomic::Ordering::Relaxed)
}

pub(crate) fn say_once_io_uring() {
    if config().is_some() && !IO_URING.swap(true, std::sync::atomic::Ordering::Relaxed) {
        say("io_uring set up: its requests are not routed (nor counted)");
    }
}

/// `io_uring_setup` calls this process failed itself under `--io-uring
/// refuse` (glibc's `syscall()`; an inline one is the seccomp listener's).
static IO_URING_REFUSED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

pub(crate) fn io_uring_refused() -> u64 {
    IO_URING_REFUSED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Whether `--io-uring refuse` is on: an io_uring system call then fails
/// with ENOSYS here, as on a kernel without io_uring (exec's
/// `IO_URING_REFUSED_ERRNO` says why ENOSYS), a setup counted.
pub(crate) fn refuse_io_uring(n: libc::c_long) -> bool {
    let on = config().is_some_and(|c| c.io_uring == wire::IoUring::Refuse);
    if on && n == libc::SYS_io_uring_setup {
        IO_URING_REFUSED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    on
}

/// Whether io_uring rings are routed (`--io-uring route`, the default).
pub(crate) fn route_io_uring() -> bool {
    config().is_some_and(|c| c.io_uring == wire::IoUring::Route)
}

/// Said once per process: no slot was free.
static FULL: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn pid() -> u32 {
    std::process::id()
}

pub(crate) fn claim() -> Option<usize> {
    let r = region()?;
    let got = r.claim(pid());
    if got.is_none() && !FULL.swap(true, std::sync::atomic::Ordering::Relaxed) {
        say("every shared slot is taken; this thread's I/O goes to the kernel unrouted");
    }
    got
}

/// A forked child's thread starts without a slot (its parent's stays the
/// parent's); `report`'s fork handler forgets the rest.
pub(crate) fn forget_in_child() {
    set_mine(None);
    FULL.store(false, std::sync::atomic::Ordering::Relaxed);
    IO_URING_REFUSED.store(0, std::sync::atomic::Ordering::Relaxed);
}

/// At the process's exit: the exiting thread's slot goes back if quiet.
/// Not the other threads' slots: they may still be running (a program's
/// `exit` does not stop its threads before the atexit handlers), and a
/// slot given back under a running thread could be claimed by another
/// process while that thread still uses it. They are taken again once the
/// process is gone and nothing of theirs is in flight (`Region::claim`).
pub(crate) fn release_mine() {
    timing::say_totals();
    let Some(r) = mapped() else { return };
    if let Some((slot, _)) = mine() {
        set_mine(None);
        r.slot(slot).release();
    }
}

/// This thread's slot (claimed at its first routed call) and the cookie of
/// its next command. `None`: not routed (no slot free, or a thread at its
/// very end, with no thread-local storage left).
fn next_cookie(r: &Region) -> Option<(usize, u32)> {
    let (slot, cookie) = match mine() {
        Some(m) => m,
        None => (claim()?, 0),
    };
    if MINE
        .try_with(|m| m.0.set(Some((slot, cookie.wrapping_add(1)))))
        .is_err()
    {
        r.slot(slot).release();
        return None;
    }
    Some((slot, cookie))
}

pub(crate) fn bits(m: Marks) -> u8 {
    wire::marks_bits(m)
}

/// Whether a blocking request's thread spins for it: exec has a poll queue
/// (`--completion poll|select-isr`) and the mode (or RWF_HIPRI) says so.
fn polls(t: Tag) -> bool {
    config().is_some_and(|c| {
        c.polling != wire::Polling::Interrupt && wire::polls(c.polling, t.critical, t.hipri)
    })
}

/// Waits for one completion on `s`: spinning on its ring when `polled`,
/// else asleep on its futex until the handler wakes it.
fn wait_one(s: &shm::Slot, polled: bool) -> bool {
    if polled {
        s.spin(1, WATCH)
    } else {
        s.wait(1, Some(WATCH))
    }
}

/// Hybrid polling (`--completion hybrid`) for a thread's polled requests,
/// as `run`'s job threads do it: Linux's poll statistics per size bucket
/// (`host::poll::HybridStats`, kept per thread here, not per device) give
/// the sleep, half the bucket's mean; the thread asks the timer for it less
/// the overshoot it measured (`wire::HybridTimer`), then spins.
/// CLOCK_MONOTONIC in nanoseconds, through the vDSO (no system call).
fn now() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: fills our timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

mod hybrid {
    use std::cell::RefCell;

    use host::poll::{bucket, HybridStats};
    use wire::Fr;

    use crate::state::LIVE;

    thread_local! {
        static STATE: RefCell<Option<(HybridStats, wire::HybridTimer)>> =
            const { RefCell::new(None) };
    }

    use super::now;

    /// A polled request of `len` bytes was posted now: sleeps as hybrid
    /// polling says; returns its issue time for [`ended`].
    pub(crate) fn posted(len: u64, write: bool) -> u64 {
        let at = now();
        posted_since(at, len, write);
        at
    }

    /// A polled request of `len` bytes was posted at `at`: sleeps what is
    /// left of hybrid polling's sleep.
    pub(crate) fn posted_since(at: u64, len: u64, write: bool) {
        let _ = STATE.try_with(|st| {
            let mut st = st.borrow_mut();
            let (stats, timer) = st.get_or_insert_with(|| {
                (HybridStats::default(), wire::HybridTimer::for_this_thread())
            });
            let want = stats.sleep(at, bucket(len, write));
            if want == 0 {
                // No statistics yet (or none for its size): classic polling.
                return;
            }
            let until = at + want;
            match timer.sleep(until.saturating_sub(now())) {
                wire::HybridSleep::Spun => LIVE.fr(Fr::HybridSpun),
                wire::HybridSleep::Slept { asked, slept } => {
                    LIVE.fr(Fr::HybridSleeps);
                    LIVE.fr_add(Fr::HybridAskedNs, asked);
                    LIVE.fr_add(Fr::HybridSleptNs, slept);
                }
            }
        });
    }

    /// Its completion came: a sample of its bucket (`blk_stat_add`).
    pub(crate) fn ended(at: u64, len: u64, write: bool) {
        let end = now();
        let _ = STATE.try_with(|st| {
            if let Some((stats, _)) = st.borrow_mut().as_mut() {
                stats.ended(end, bucket(len, write), end.saturating_sub(at));
            }
        });
    }
}

/// Whether polled requests sleep first (`--completion hybrid`).
fn hybrid_on() -> bool {
    config().is_some_and(|c| c.polling == wire::Polling::Hybrid)
}

thread_local! {
    /// Whether this thread is inside a routed call (posted, or about to
    /// post, a command on its slot and waiting for it).
    static INSIDE: Cell<bool> = const { Cell::new(false) };
}

/// Whether this thread is inside a routed call: a call it makes now comes
/// from a signal handler that interrupted that call (issue 24 item 3). It
/// goes straight to the kernel, exactly as made and counted as not
/// routed: routed, it would post on the slot whose completion the
/// interrupted call waits for, and take that completion (which
/// deadlocked the interrupted call), and the library's classification
/// may allocate, which a handler must not do.
pub(crate) fn inside() -> bool {
    INSIDE.try_with(Cell::get).unwrap_or(false)
}

/// Held for the whole of a routed blocking call.
struct Inside;

impl Inside {
    /// `None` when the thread is inside one already.
    fn enter() -> Option<Inside> {
        INSIDE
            .try_with(|i| !i.replace(true))
            .ok()
            .filter(|&entered| entered)
            .map(|_| Inside)
    }
}

impl Drop for Inside {
    fn drop(&mut self) {
        let _ = INSIDE.try_with(|i| i.set(false));
    }
}

/// A blocking call routed: `io` moves the data (returns bytes or -1 with
/// errno set), then the command goes to the device and the thread sleeps
/// until its completion is delivered. `None`: not routed (no region, no
/// slot); the caller does the call itself.
pub(crate) fn blocking(
    tag: Tag,
    write: bool,
    offset: u64,
    io: impl FnOnce() -> isize,
) -> Option<isize> {
    routed(tag, write, offset, false, io)
}

/// A flush routed as [`blocking`]: `io` (fsync, fdatasync, or nothing
/// for an O_DSYNC write's flush) returns 0 when done, and the device gets
/// a zero-length command for it.
pub(crate) fn flush_blocking(tag: Tag, io: impl FnOnce() -> isize) -> Option<isize> {
    routed(tag, true, 0, true, io)
}

fn routed(
    tag: Tag,
    write: bool,
    offset: u64,
    flush: bool,
    io: impl FnOnce() -> isize,
) -> Option<isize> {
    let r = region()?;
    let _inside = Inside::enter()?;
    let (slot, cookie) = next_cookie(r)?;
    let t = timing::Stamps::start();
    let res = io();
    t.mark(timing::IO);
    // A failed call posts nothing; nor does a call that moved no data (a
    // read at the end of the file, a zero-length write), for which the
    // kernel sends no command either (a zero count returns before any bio
    // is built: fs/iomap/direct-io.c, __iomap_dio_rw).
    if res < 0 || (res == 0 && !flush) {
        return Some(res);
    }
    let s = r.slot(slot);
    let polled = polls(tag);
    let cmd = Cmd {
        cookie,
        write,
        marks: bits(tag.marks),
        critical: tag.critical,
        polled,
        len: res as u32,
        offset,
    };
    if !s.post(cmd) {
        return Some(res);
    }
    if polled {
        LIVE.fr(wire::Fr::Polled);
    }
    t.mark(timing::POST);
    let hyb = (polled && hybrid_on()).then(|| hybrid::posted(res as u64, write));
    let done = loop {
        if let Some(d) = s.take_one() {
            break d;
        }
        if !wait_one(s, polled) && !device_alive() {
            // The data moved already: the call's own result stands.
            return Some(res);
        }
    };
    if let Some(at) = hyb {
        hybrid::ended(at, res as u64, write);
    }
    t.mark(timing::WAIT);
    debug_assert_eq!(done.cookie, cookie, "one request in flight per thread");
    if done.error {
        set_errno(libc::EIO);
        return Some(-1);
    }
    Some(res)
}

/// A positioned blocking call of `len` bytes on `fd` routed with a
/// modelled device: its command is posted first, then its data moves (the
/// page-cache copy, ~1.5-2.5 us per 4 KiB on this VM) while the device
/// serves it, as the device's DMA moves a kernel's O_DIRECT data during
/// the command; then the thread sleeps until the completion. Without a
/// modelled device, and for a read the library does not know to lie
/// within the file (a read at the end of the file sends no command, as in
/// the kernel), as [`blocking`].
pub(crate) fn blocking_at(
    tag: Tag,
    write: bool,
    fd: c_int,
    offset: u64,
    len: u64,
    io: impl FnOnce() -> isize,
) -> Option<isize> {
    if !modelled() || len == 0 || len > u64::from(u32::MAX) || (!write && !within(fd, offset + len))
    {
        return blocking(tag, write, offset, io);
    }
    let r = region()?;
    let _inside = Inside::enter()?;
    let (slot, cookie) = next_cookie(r)?;
    let t = timing::Stamps::start();
    let s = r.slot(slot);
    let polled = polls(tag);
    let cmd = Cmd {
        cookie,
        write,
        marks: bits(tag.marks),
        critical: tag.critical,
        polled,
        len: len as u32,
        offset,
    };
    if !s.post(cmd) {
        return Some(io());
    }
    if polled {
        LIVE.fr(wire::Fr::Polled);
    }
    t.mark(timing::POST);
    let posted_at = (polled && hybrid_on()).then(now);
    let res = io();
    let err = errno();
    t.mark(timing::IO);
    // Hybrid: the sleep counts from the posting; the data's copy took part.
    if let Some(at) = posted_at {
        hybrid::posted_since(at, len, write);
    }
    let hyb = posted_at;
    let done = loop {
        if let Some(d) = s.take_one() {
            break d;
        }
        if !wait_one(s, polled) && !device_alive() {
            // The data moved: the call's own result stands.
            set_errno(err);
            return Some(res);
        }
    };
    if let Some(at) = hyb {
        hybrid::ended(at, len, write);
    }
    t.mark(timing::WAIT);
    debug_assert_eq!(done.cookie, cookie, "one request in flight per thread");
    if res < 0 {
        set_errno(err);
        return Some(res);
    }
    if done.error {
        set_errno(libc::EIO);
        return Some(-1);
    }
    Some(res)
}

pub(crate) use crate::kernel::{errno, set_errno};

/// Whether `fd`'s data moves through the page cache as the modelled
/// device's medium (routed, O_DIRECT, `--device`).
pub(crate) fn cache_is_the_device(fd: c_int) -> bool {
    modelled() && region().is_some() && is_direct(fd)
}

/// A device waiter's loop, for a context (`aio`) or a ring (`uring`) of
/// the program's: sleeps on `slot` until the device's interrupt handler
/// delivers, hands each batch to `delivered`, tells `gone` when the device
/// vanished with commands in flight, and ends once `stop` is set and
/// nothing of the slot's is in flight (or the device is gone), giving the
/// slot back. `slice` is how long it sleeps between looks at `stop`.
/// `consume`: held while a batch is taken and handed on, when another
/// thread of the program also consumes the slot (a ring's GETEVENTS
/// caller, `uring::wait`): the slot's CQ has one consumer at a time.
pub(crate) fn device_waiter(
    slot: usize,
    stop: &std::sync::atomic::AtomicBool,
    slice: std::time::Duration,
    consume: Option<&std::sync::Mutex<()>>,
    mut delivered: impl FnMut(&[shm::Done]),
    mut gone: impl FnMut(),
) {
    use std::sync::atomic::Ordering::Acquire;
    let Some(r) = mapped() else { return };
    let s = r.slot(slot);
    let mut done: Vec<shm::Done> = Vec::with_capacity(64);
    let mut quiet = std::time::Duration::ZERO;
    loop {
        if stop.load(Acquire) && (s.in_flight() == 0 || region().is_none()) {
            break;
        }
        // Between requests, spin for the next one's completion at nice 19
        // (on the core's idle time only: the program's threads run first,
        // CFS weight 15 against 1024, kernel/sched/core.c
        // `sched_prio_to_weight`), then sleep at the thread's own priority.
        // The posting thread does not wake this one (it would preempt its
        // batch); the device's wake-up of a sleeping waiter comes from
        // another core, about 34 us here (PLATFORM.md section 3).
        // Only where the priority can be raised back (root: a user's
        // RLIMIT_NICE of 0 would leave it at 19).
        // SAFETY: geteuid cannot fail.
        if s.in_flight() == 0 && unsafe { libc::geteuid() } == 0 {
            let was = nice_self(19);
            let got = s.spin_idle();
            nice_self(was);
            if got {
                quiet = std::time::Duration::ZERO;
                let _one = consume.map(|m| m.lock().unwrap_or_else(|e| e.into_inner()));
                done.clear();
                s.take(usize::MAX, &mut done);
                delivered(&done);
                continue;
            }
        }
        if s.wait(1, Some(slice)) {
            quiet = std::time::Duration::ZERO;
            let _one = consume.map(|m| m.lock().unwrap_or_else(|e| e.into_inner()));
            done.clear();
            s.take(usize::MAX, &mut done);
            delivered(&done);
            continue;
        }
        quiet += slice;
        if quiet >= WATCH {
            quiet = std::time::Duration::ZERO;
            if s.in_flight() > 0 && !device_alive() {
                // Nothing more will come: what the kernel completed is
                // published, and so is the rest at its completion.
                gone();
            }
        }
    }
    s.release();
}

/// Sets this thread's nice value; returns the one it had.
fn nice_self(to: c_int) -> c_int {
    // SAFETY: plain system calls on this thread (a thread id is a
    // PRIO_PROCESS target on Linux); a refusal leaves it as it was.
    unsafe {
        let tid = libc::gettid() as libc::id_t;
        let was = libc::getpriority(libc::PRIO_PROCESS, tid);
        libc::setpriority(libc::PRIO_PROCESS, tid, to);
        was
    }
}

/// How long a waiter sleeps before it checks that `cinterrupts exec` (the
/// device) still exists: a program must not hang because exec was killed.
pub(crate) const WATCH: std::time::Duration = std::time::Duration::from_secs(1);

/// Whether the process holding the device still holds the region: its
/// `/proc/PID/fd/N` still names the memfd. A process that exists is not
/// enough: a killed exec stays a zombie until its parent waits for it,
/// with its descriptors (and its device thread) gone (issue 24 item 4: a
/// waiter slept on, a second at a time, for ever).
pub(crate) fn device_alive() -> bool {
    let Some(shm) = config().and_then(|c| c.route.as_ref()).map(|r| &r.shm) else {
        return false;
    };
    let alive = match std::fs::read_link(shm) {
        Ok(l) => l.to_string_lossy().starts_with("/memfd:cinterrupts-exec"),
        // Another user than exec's (a server that dropped its privileges)
        // may not read exec's descriptors: exec's state, which anyone may
        // read, says whether it lives (a zombie does not).
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => exec_running(shm),
        Err(_) => false,
    };
    if !alive && !GONE.swap(true, std::sync::atomic::Ordering::Relaxed) {
        say("the device (cinterrupts exec) is gone; the rest of the I/O goes to the kernel");
    }
    alive
}

/// Whether the process of `/proc/PID/fd/N` exists and is not a zombie.
fn exec_running(shm: &str) -> bool {
    let Some(pid) = shm.strip_prefix("/proc/").and_then(|r| r.split('/').next()) else {
        return false;
    };
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat.rsplit(')').next().unwrap_or("").trim_start();
    !stat.is_empty() && !state.starts_with('Z') && !state.starts_with('X')
}

/// Where a routed blocking call's time goes, with
/// CINTERRUPTS_PRELOAD_TIMING=1 in the program's environment: per call,
/// the time between the end of the previous routed call of the thread and
/// this one's start (the program's own work and our classification), the
/// data transfer, the posting, and the wait for the completion. Said on
/// stderr at the process's exit. Off: one relaxed load per call.
pub(crate) mod timing {
    use std::cell::Cell;
    use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};

    pub(crate) const OUTSIDE: usize = 0;
    pub(crate) const IO: usize = 1;
    pub(crate) const POST: usize = 2;
    pub(crate) const WAIT: usize = 3;
    const NAMES: [&str; 4] = [
        "between calls",
        "data transfer",
        "post",
        "wait for completion",
    ];

    static SUM: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];
    static CALLS: AtomicU64 = AtomicU64::new(0);
    /// 0 unknown, 1 off, 2 on.
    static ON: AtomicU8 = AtomicU8::new(0);

    thread_local! {
        static LAST: Cell<u64> = const { Cell::new(0) };
    }

    fn on() -> bool {
        match ON.load(Relaxed) {
            0 => {
                let on = std::env::var_os("CINTERRUPTS_PRELOAD_TIMING").is_some_and(|v| v == "1");
                ON.store(if on { 2 } else { 1 }, Relaxed);
                on
            }
            v => v == 2,
        }
    }

    use super::now;

    pub(crate) struct Stamps {
        at: Cell<u64>,
        on: bool,
    }

    impl Stamps {
        pub(crate) fn start() -> Stamps {
            if !on() {
                return Stamps {
                    at: Cell::new(0),
                    on: false,
                };
            }
            let t = now();
            let last = LAST.with(Cell::get);
            if last != 0 {
                SUM[OUTSIDE].fetch_add(t - last, Relaxed);
            }
            CALLS.fetch_add(1, Relaxed);
            Stamps {
                at: Cell::new(t),
                on: true,
            }
        }

        pub(crate) fn mark(&self, stage: usize) {
            if !self.on {
                return;
            }
            let t = now();
            SUM[stage].fetch_add(t - self.at.get(), Relaxed);
            self.at.set(t);
            if stage == WAIT {
                LAST.with(|l| l.set(t));
            }
        }
    }

    pub(crate) fn say_totals() {
        let n = CALLS.load(Relaxed);
        if n == 0 {
            return;
        }
        let mut line = format!("timing of {n} routed blocking calls, mean per call:");
        for (k, name) in NAMES.iter().enumerate() {
            line += &format!(
                " {name} {:.2} us;",
                SUM[k].load(Relaxed) as f64 / n as f64 / 1e3
            );
        }
        super::say(&line);
    }
}
