//! The queues between `cinterrupts exec`, where the emulated device and its
//! interrupt handler run, and the program's processes, where the preload
//! library submits and waits (issue 14: "one device serves the whole
//! program, as one NVMe drive serves every process on a host").
//!
//! One memory region (a memfd the exec process creates; each process of the
//! program maps it through `/proc/EXEC_PID/fd/N`, whose path it finds in
//! `$CINTERRUPTS_EXEC_SHM`) holds a fixed table of [`Slot`]s. A slot is one
//! waiter: a program thread that blocks in `pread`, or a libaio context.
//! Each has a submission ring (the waiter writes, the device's fetch
//! reads) and a completion ring (the interrupt handler writes, the waiter
//! reads), both single-producer single-consumer, and a futex word the
//! waiter sleeps on, shared across processes (a plain FUTEX_WAIT, not the
//! process-private one).
//!
//! Nothing here points: rings hold indices and the region is mapped at a
//! different address in every process.

#[cfg(not(loom))]
use std::ffi::CString;
use std::io;
mod sync;
#[cfg(loom)]
pub use sync::with_seeded_bug;
use sync::{AtomicI32, AtomicU32, AtomicU64, Ordering::*};

/// Where the program finds the region: `/proc/PID/fd/N`.
pub const ENV_SHM: &str = "CINTERRUPTS_EXEC_SHM";
/// The region as a descriptor every process of the program inherits
/// (`N:INODE`, issue 24 item 3): a process that dropped its privileges
/// (`mariadbd --user=mysql`, PostgreSQL's `postgres`) cannot open
/// `/proc/EXEC_PID/fd/N`, owned by exec's user, but maps the descriptor it
/// inherited. [`ENV_SHM`] is the fallback for a process whose descriptor
/// was closed (a daemon closing every descriptor it did not open).
pub const ENV_SHM_FD: &str = "CINTERRUPTS_EXEC_SHM_FD";
/// Waiters at once, over every process of the program. A thread that finds
/// none free is not routed (its I/O goes to the kernel, counted, and one
/// line on stderr says so).
#[cfg(not(loom))]
pub const SLOTS: usize = 256;
/// Under loom: two, enough for a claim to race a take-over and fall back
/// to the other slot (tests/loom.rs).
#[cfg(loom)]
pub const SLOTS: usize = 2;
/// Entries per ring: the most requests one waiter may have in flight (a
/// libaio context with more gets EAGAIN for the rest, as from a full
/// kernel context).
#[cfg(not(loom))]
pub const RING: u32 = 1024;
/// Under loom: two, so that three commands wrap both rings (tests/loom.rs).
#[cfg(loom)]
pub const RING: u32 = 2;

const MAGIC: u64 = 0x6369_6e74_6578_6563; // "cintexec"
/// The value the preload library passes as the sixth argument of its own
/// aio system calls (`io_setup`, `io_destroy`, `io_submit`, `io_cancel`,
/// `io_getevents`; none of them reads its sixth register), so that `exec`'s
/// seccomp filter (issue 24, item 2) tells them from a program's own aio
/// calls that bypassed the library (an inline `syscall` instruction). It is
/// a non-canonical x86_64 address, so no program's pointer argument (the
/// sixth of `io_pgetevents`) can equal it.
pub const OWN_CALL: u64 = 0xc1c1_0000_0000_0024;

const FREE: u32 = 0;
const CLAIMED: u32 = 1;

/// A command as the program posts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cmd {
    /// The waiter's own identifier for it, returned with its completion.
    pub cookie: u32,
    pub write: bool,
    /// Urgent and Barrier, as `policy::Marks::bits`.
    pub marks: u8,
    /// FastResponse's critical tag (FR 3.1-3.2): LD lets it bypass.
    pub critical: bool,
    /// Its waiter spins on the slot's completion ring: the command goes to
    /// a poll queue, which raises no interrupt.
    pub polled: bool,
    pub len: u32,
    pub offset: u64,
}

/// A completion as the handler leaves it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Done {
    pub cookie: u32,
    /// Bytes, or a negative errno.
    pub result: i32,
    pub error: bool,
}

#[repr(C)]
#[cfg_attr(loom, derive(Default))]
struct Entry {
    cookie: AtomicU32,
    /// write | critical << 1 | polled << 2 | marks << 8.
    flags: AtomicU32,
    len: AtomicU32,
    _pad: u32,
    offset: AtomicU64,
    /// CLOCK_MONOTONIC at the post ([`now_ns`]): the device's fetch
    /// latency is measured from it (issue 38 item 2's breakdown).
    posted_ns: AtomicU64,
}

#[repr(C)]
#[cfg_attr(loom, derive(Default))]
struct DoneEntry {
    cookie: AtomicU32,
    result: AtomicI32,
    error: AtomicU32,
    _pad: u32,
    /// CLOCK_MONOTONIC at the delivery: the waiter's wake-up is measured
    /// from it when it takes the completion.
    delivered_ns: AtomicU64,
}

/// CLOCK_MONOTONIC in nanoseconds (the vDSO: no system call, 33 ns here,
/// PLATFORM.md section 3), one clock for every process of the program and
/// for exec.
pub fn now_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: fills our timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// One waiter's queues and futex word.
#[repr(C)]
#[cfg_attr(loom, derive(Default))]
pub struct Slot {
    state: AtomicU32,
    pid: AtomicU32,
    /// Commands posted and completions delivered over the slot's life: a
    /// slot whose process died is taken again only once they are equal, so
    /// no completion of the dead reaches the living.
    posted: AtomicU64,
    delivered: AtomicU64,
    sq_tail: AtomicU32,
    sq_head: AtomicU32,
    cq_tail: AtomicU32,
    cq_head: AtomicU32,
    /// Bumped at every wake; the waiter sleeps on it.
    futex: AtomicU32,
    sleeping: AtomicU32,
    /// 0 while the waiter is not waiting; else how many completions must be
    /// ready before the handler wakes it.
    wake_at: AtomicU32,
    /// The slot's index, so that a post finds the region's header (the
    /// device's doorbell) from the slot alone.
    index: AtomicU32,
    sq: [Entry; RING as usize],
    cq: [DoneEntry; RING as usize],
}

#[repr(C)]
#[cfg_attr(loom, derive(Default))]
struct Header {
    magic: AtomicU64,
    /// One past the highest slot ever claimed: the device scans no further.
    high: AtomicU32,
    /// Nonzero while the device thread is parked (or about to park) on
    /// `bell`: a post then rings it (issue 38 item 2: an idle program's
    /// exec does not keep a core busy).
    parked: AtomicU32,
    /// The device's futex word, bumped at every ring.
    bell: AtomicU32,
    _pad: u32,
    /// How long a waiter spins on its completion ring before it sleeps on
    /// its futex, ns; exec sets it ([`Region::set_spin`]), 0: no spin.
    spin_ns: AtomicU64,
    /// The waiters' side of the cost, over every slot (see [`Costs`]).
    costs: CostSums,
}

/// Sums the waiters add as they take their completions, for exec's report.
#[repr(C)]
#[derive(Default)]
struct CostSums {
    taken: AtomicU64,
    wake_ns: AtomicU64,
    spun_ns: AtomicU64,
    spin_hits: AtomicU64,
    sleeps: AtomicU64,
    rings: AtomicU64,
}

/// What the waiters of every process measured, as exec reads it at the end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Costs {
    /// Completions taken by waiters that stamp them.
    pub taken: u64,
    /// Delivery into the slot to the waiter's taking it (its wake-up),
    /// summed, ns.
    pub wake_ns: u64,
    /// CPU the waiters spent spinning before they slept or took a
    /// completion, ns (charged to the program's cores).
    pub spun_ns: u64,
    /// Waits a spin ended (the completion came while spinning), and waits
    /// that went to sleep on the futex.
    pub spin_hits: u64,
    pub sleeps: u64,
    /// Posts that found the device parked and rang its bell (each a futex
    /// wake of another core: about 13 us of the poster's CPU and 34 us
    /// until the device runs, PLATFORM.md section 3).
    pub rings: u64,
}

/// The mapped region, in this process.
pub struct Region {
    base: *mut u8,
    len: usize,
}

// SAFETY: the region is plain shared memory of atomics; every access goes
// through them.
unsafe impl Send for Region {}
unsafe impl Sync for Region {}

fn header_len() -> usize {
    std::mem::size_of::<Header>().next_multiple_of(64)
}

fn region_len() -> usize {
    header_len() + SLOTS * std::mem::size_of::<Slot>()
}

#[cfg(not(loom))]
fn map(fd: libc::c_int, len: usize) -> io::Result<*mut u8> {
    // SAFETY: a fresh shared mapping of a file we hold open.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(p as *mut u8)
}

#[cfg(not(loom))]
impl Region {
    /// The exec side: a new zeroed region in a memfd (close-on-exec: the
    /// program opens it by path), and the descriptor.
    pub fn create() -> io::Result<(Region, std::os::fd::OwnedFd)> {
        use std::os::fd::FromRawFd;
        let name = CString::new("cinterrupts-exec").expect("no NUL");
        // SAFETY: a NUL-terminated name.
        let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a descriptor we just created and own.
        let owned = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
        let len = region_len();
        // SAFETY: plain call on our descriptor. The pages stay unallocated
        // (zero) until touched.
        if unsafe { libc::ftruncate(fd, len as libc::off_t) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let base = map(fd, len)?;
        let r = Region { base, len };
        r.header().magic.store(MAGIC, SeqCst);
        Ok((r, owned))
    }

    /// The program side: maps the region at `path` (`$CINTERRUPTS_EXEC_SHM`).
    pub fn open(path: &str) -> io::Result<Region> {
        let c = CString::new(path).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        // SAFETY: a NUL-terminated path.
        let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let len = region_len();
        let base = map(fd, len);
        // SAFETY: our descriptor; the mapping outlives it.
        unsafe { libc::close(fd) };
        let r = Region { base: base?, len };
        if r.header().magic.load(SeqCst) != MAGIC {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{path} is not a cinterrupts exec region"),
            ));
        }
        Ok(r)
    }

    /// The program side, from an inherited descriptor (`N:INODE`, as
    /// [`ENV_SHM_FD`] holds it): mapped only if descriptor N is still the
    /// region (the same inode, the region's size and magic), since a
    /// program may have closed it and reused the number. The descriptor
    /// stays open for the program's later executions.
    pub fn open_inherited(spec: &str) -> io::Result<Region> {
        let bad = || {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("'{spec}' is not N:INODE"),
            )
        };
        let (fd, ino) = spec.split_once(':').ok_or_else(bad)?;
        let fd: libc::c_int = fd.parse().map_err(|_| bad())?;
        let ino: u64 = ino.parse().map_err(|_| bad())?;
        // SAFETY: fstat fills the struct; a closed descriptor returns -1.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstat(fd, &mut st) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let len = region_len();
        if st.st_ino != ino || st.st_size as usize != len {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("descriptor {fd} is no longer the region (closed and reused)"),
            ));
        }
        let r = Region {
            base: map(fd, len)?,
            len,
        };
        if r.header().magic.load(SeqCst) != MAGIC {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("descriptor {fd} is not a cinterrupts exec region"),
            ));
        }
        Ok(r)
    }
}

/// Under loom: a region of loom's atomics on the heap (zeroed memory is no
/// loom atomic), for the models in tests/loom.rs; one process, each of its
/// loom threads standing for a process or thread of the real protocol.
#[cfg(loom)]
impl Region {
    fn layout(len: usize) -> std::alloc::Layout {
        std::alloc::Layout::from_size_align(len, 64).expect("a region's layout")
    }

    /// A new region: every slot free, every ring empty.
    pub fn model() -> Region {
        assert!(std::mem::align_of::<Slot>() <= 64 && std::mem::align_of::<Header>() <= 64);
        // SAFETY: a fresh allocation of the region's size, then each header
        // and slot written in place at the offsets `header` and `slot` read.
        unsafe {
            let base = std::alloc::alloc(Region::layout(region_len()));
            assert!(!base.is_null(), "out of memory");
            (base as *mut Header).write(Header::default());
            for i in 0..SLOTS {
                let at = base.add(header_len() + i * std::mem::size_of::<Slot>());
                (at as *mut Slot).write(Slot::default());
            }
            let r = Region {
                base,
                len: region_len(),
            };
            r.header().magic.store(MAGIC, SeqCst);
            r
        }
    }
}

impl Region {
    fn header(&self) -> &Header {
        // SAFETY: the region starts with a header, and zeroed atomics are valid.
        unsafe { &*(self.base as *const Header) }
    }

    /// Slot `i` (< [`SLOTS`]).
    pub fn slot(&self, i: usize) -> &Slot {
        assert!(i < SLOTS, "slot {i} of {SLOTS}");
        // SAFETY: in bounds of the mapping; a slot is atomics only.
        unsafe {
            &*(self
                .base
                .add(header_len() + i * std::mem::size_of::<Slot>()) as *const Slot)
        }
    }

    /// How long waiters spin before they sleep (issue 38 item 2), ns.
    pub fn set_spin(&self, ns: u64) {
        self.header().spin_ns.store(ns, Relaxed);
    }

    /// What the waiters measured so far.
    pub fn costs(&self) -> Costs {
        let c = &self.header().costs;
        let r = |a: &AtomicU64| a.load(Acquire);
        Costs {
            taken: r(&c.taken),
            wake_ns: r(&c.wake_ns),
            spun_ns: r(&c.spun_ns),
            spin_hits: r(&c.spin_hits),
            sleeps: r(&c.sleeps),
            rings: r(&c.rings),
        }
    }

    /// The device's side of parking: the bell's value, to pass to
    /// [`Region::park`] after this call and a last look at the rings
    /// ([`Region::any_posted`]).
    pub fn parking(&self) -> u32 {
        let h = self.header();
        let seen = h.bell.load(SeqCst);
        h.parked.store(1, SeqCst);
        seen
    }

    /// Sleeps on the bell unless it rang since `seen`, at most `timeout`;
    /// then no longer parked.
    pub fn park(&self, seen: u32, timeout: std::time::Duration) {
        let h = self.header();
        let ts = libc::timespec {
            tv_sec: timeout.as_secs() as libc::time_t,
            tv_nsec: timeout.subsec_nanos() as libc::c_long,
        };
        futex(&h.bell, libc::FUTEX_WAIT, seen, &ts);
        h.parked.store(0, SeqCst);
    }

    /// The device did not park after all (a post came during its last look).
    pub fn unpark(&self) {
        self.header().parked.store(0, SeqCst);
    }

    /// Whether any slot has a posted command the device has not fetched.
    pub fn any_posted(&self) -> bool {
        (0..self.high()).any(|i| {
            let s = self.slot(i);
            s.sq_tail.load(SeqCst) != s.sq_head.load(Relaxed)
        })
    }

    /// One past the highest slot ever claimed.
    pub fn high(&self) -> usize {
        (self.header().high.load(Acquire) as usize).min(SLOTS)
    }

    /// Claims a free slot for a waiter of process `pid`, or the slot of a
    /// process that died with nothing in flight. `None` when all are taken.
    pub fn claim(&self, pid: u32) -> Option<usize> {
        for i in 0..SLOTS {
            let s = self.slot(i);
            let taken = s
                .state
                .compare_exchange(FREE, CLAIMED, AcqRel, Relaxed)
                .is_ok()
                || s.reclaimable().is_some_and(|dead| s.take_over(dead));
            if taken {
                s.index.store(i as u32, Relaxed);
                s.reset(pid);
                self.header().high.fetch_max(i as u32 + 1, AcqRel);
                return Some(i);
            }
        }
        None
    }
}

#[cfg(not(loom))]
impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: our own mapping.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

#[cfg(loom)]
impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: the header and slots `Region::model` wrote, dropped once.
        unsafe {
            std::ptr::drop_in_place(self.base as *mut Header);
            for i in 0..SLOTS {
                std::ptr::drop_in_place(self.slot(i) as *const Slot as *mut Slot);
            }
            std::alloc::dealloc(self.base, Region::layout(self.len));
        }
    }
}

#[cfg(not(loom))]
fn futex(word: &AtomicU32, op: libc::c_int, val: u32, timeout: *const libc::timespec) -> i64 {
    // SAFETY: a futex call on a word of shared memory we map; the kernel
    // validates the rest.
    unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), op, val, timeout, 0, 0) }
}

/// Under loom: the futex call on loom's model of the kernel's
/// (`sync::futex_wait`); the timeout is not modelled.
#[cfg(loom)]
fn futex(word: &AtomicU32, op: libc::c_int, val: u32, _timeout: *const libc::timespec) -> i64 {
    match op & libc::FUTEX_CMD_MASK {
        libc::FUTEX_WAIT | libc::FUTEX_WAIT_BITSET => sync::futex_wait(word, val),
        libc::FUTEX_WAKE | libc::FUTEX_WAKE_BITSET => sync::futex_wake(),
        other => panic!("futex op {other} is not modelled under loom"),
    }
}

impl Slot {
    fn reset(&self, pid: u32) {
        self.pid.store(pid, Release);
        self.wake_at.store(0, Relaxed);
        self.sleeping.store(0, Relaxed);
        // The rings continue from where they were: every posted command
        // was fetched and every completion delivered (see `reclaimable`),
        // and the program side starts its heads from the tails.
        let sq = self.sq_tail.load(Acquire);
        self.sq_head.store(sq, Release);
        let cq = self.cq_tail.load(Acquire);
        self.cq_head.store(cq, Release);
    }

    /// The pid of the process that no longer exists and claimed the slot,
    /// if nothing of it is in flight.
    fn reclaimable(&self) -> Option<u32> {
        if self.state.load(Acquire) != CLAIMED {
            return None;
        }
        let pid = self.pid.load(Acquire);
        // SAFETY: signal 0 only checks the process exists.
        let dead = pid != 0
            && unsafe { libc::kill(pid as libc::pid_t, 0) } != 0
            && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        (dead && self.posted.load(Acquire) == self.delivered.load(Acquire)).then_some(pid)
    }

    /// Takes the slot of `dead` (as [`Slot::reclaimable`] found it): the
    /// one claim that swaps that pid for 0 takes it. Not the pid read again
    /// here: by then another claim may have swapped it for 0 or its own,
    /// and both would take the slot (the loom model
    /// `two_claims_race_to_take_over_a_dead_process_slot`).
    fn take_over(&self, dead: u32) -> bool {
        self.pid.compare_exchange(dead, 0, AcqRel, Relaxed).is_ok()
    }

    /// Gives the slot back if nothing is in flight; otherwise it stays with
    /// its process (reclaimed once the process is gone and the device has
    /// delivered everything).
    pub fn release(&self) {
        if self.posted.load(Acquire) == self.delivered.load(Acquire) {
            // A free slot names no process: else a claim that finds it
            // claimed again (by another claim, before that claim's reset)
            // under the pid of this process, dead by then, would take it
            // too (the loom model
            // `a_claim_of_a_released_slot_races_a_take_over`).
            self.pid.store(0, Relaxed);
            self.state.store(FREE, Release);
        }
    }

    pub fn is_claimed(&self) -> bool {
        self.state.load(Acquire) == CLAIMED
    }

    /// Commands posted and not yet delivered back.
    pub fn in_flight(&self) -> u64 {
        self.posted
            .load(Acquire)
            .saturating_sub(self.delivered.load(Acquire))
    }

    /// The region's header, found from the slot's index.
    fn header(&self) -> &Header {
        let i = self.index.load(Relaxed) as usize;
        // SAFETY: a slot lives only in a region, at header_len() + i slots
        // from its base, and `index` is set before the slot is handed out.
        unsafe {
            let base = (self as *const Slot as *const u8)
                .sub(header_len() + i * std::mem::size_of::<Slot>());
            &*(base as *const Header)
        }
    }

    /// Completions taken: their wake-up (delivery to now) counted.
    fn taken(&self, delivered_ns: u64, n: u64) {
        if n == 0 {
            return;
        }
        let c = &self.header().costs;
        c.taken.fetch_add(n, Relaxed);
        c.wake_ns
            .fetch_add(now_ns().saturating_sub(delivered_ns) * n, Relaxed);
    }

    // ---- the program's side ----

    /// Posts `cmd`; `false` if the waiter already has [`RING`] commands in
    /// flight or completed and not taken.
    pub fn post(&self, cmd: Cmd) -> bool {
        // Completions not taken hold room too: `deliver` writes the
        // completion ring without looking at its head, and would overwrite
        // them (the loom model a_round_trip_wraps_both_rings_and_loses_nothing).
        // The kernel's aio counts its completion ring so (fs/aio.c,
        // refill_reqs_available: a slot is free once the program reaped it).
        if self
            .sq_tail
            .load(Relaxed)
            .wrapping_sub(self.cq_head.load(Acquire))
            >= RING
        {
            return false;
        }
        let tail = self.sq_tail.load(Relaxed);
        let e = &self.sq[(tail % RING) as usize];
        e.cookie.store(cmd.cookie, Relaxed);
        e.flags.store(
            u32::from(cmd.write)
                | u32::from(cmd.critical) << 1
                | u32::from(cmd.polled) << 2
                | u32::from(cmd.marks) << 8,
            Relaxed,
        );
        e.len.store(cmd.len, Relaxed);
        e.offset.store(cmd.offset, Relaxed);
        e.posted_ns.store(now_ns(), Relaxed);
        self.posted.fetch_add(1, AcqRel);
        // The doorbell: the device reads entries before the tail.
        self.sq_tail.store(tail.wrapping_add(1), SeqCst);
        let h = self.header();
        // Read after the tail (both SeqCst): a device that set `parked`
        // before this load looks at the rings after it, so one of the two
        // sees the other (`Region::parking`).
        if h.parked.load(SeqCst) != 0 {
            h.bell.fetch_add(1, SeqCst);
            h.costs.rings.fetch_add(1, Relaxed);
            futex(&h.bell, libc::FUTEX_WAKE, 1, std::ptr::null());
        }
        // A waiter of this slot asleep in another thread (a libaio
        // context's or a ring's) is not woken here: on this core it would
        // preempt the poster in the middle of its batch (measured: cint's
        // strict-Barrier batches of 16 split in two). It spins after each
        // delivery instead (`Slot::spin_idle`).
        true
    }

    fn spin_budget(&self) -> u64 {
        self.header().spin_ns.load(Relaxed)
    }

    /// A waiter thread's spin between requests (a libaio context's or a
    /// ring's, which posts nothing itself): spins for the region's budget
    /// whether or not a command is in flight, so that the next request's
    /// completion, posted by another thread meanwhile, finds it awake.
    /// Counted as spin. The caller runs it at a low priority, so that it
    /// spins only on the core's idle time.
    pub fn spin_idle(&self) -> bool {
        let budget = self.spin_budget();
        if budget == 0 || self.ready() > 0 {
            return self.ready() > 0;
        }
        let start = now_ns();
        let c = &self.header().costs;
        let mut n: u32 = 0;
        loop {
            if self.ready() > 0 {
                c.spun_ns.fetch_add(now_ns().saturating_sub(start), Relaxed);
                c.spin_hits.fetch_add(1, Relaxed);
                return true;
            }
            n = n.wrapping_add(1);
            if n % 64 == 0 {
                let t = now_ns().saturating_sub(start);
                if t >= budget {
                    c.spun_ns.fetch_add(t, Relaxed);
                    return false;
                }
            }
            std::hint::spin_loop();
        }
    }

    /// Spins until `min` completions are ready, for at most the region's
    /// spin budget and only while commands are in flight; counts the spin.
    /// It does not yield: under CFS a `sched_yield` hands the core to any
    /// runnable task for up to its slice (milliseconds), far more than the
    /// budget; a thread of the program runnable here waits at most the
    /// budget. It reads the rings only (neither `sleeping` nor `wake_at`),
    /// so a second consumer may spin so beside a waiter asleep in
    /// [`Slot::wait`] (a ring's GETEVENTS caller beside its waiter thread),
    /// the two taking under one lock of theirs.
    pub fn spin_first(&self, min: u32) -> bool {
        let budget = self.spin_budget();
        if budget == 0 || self.in_flight() == 0 {
            return self.ready() >= min;
        }
        let start = now_ns();
        let c = &self.header().costs;
        let mut n: u32 = 0;
        loop {
            if self.ready() >= min {
                c.spun_ns.fetch_add(now_ns().saturating_sub(start), Relaxed);
                c.spin_hits.fetch_add(1, Relaxed);
                return true;
            }
            n = n.wrapping_add(1);
            if n % 64 == 0 {
                let t = now_ns().saturating_sub(start);
                if t >= budget || self.in_flight() == 0 {
                    c.spun_ns.fetch_add(t, Relaxed);
                    // `deliver` publishes the tail before it counts the
                    // delivery, so a completion that lands between the
                    // check above and this one empties the queue and is
                    // ready here: taken without a sleep, a hit all the
                    // same (a fresh-clone CI run counted it as neither).
                    let hit = self.ready() >= min;
                    if hit {
                        c.spin_hits.fetch_add(1, Relaxed);
                    }
                    return hit;
                }
            }
            std::hint::spin_loop();
        }
    }

    /// Completions ready and not yet taken.
    pub fn ready(&self) -> u32 {
        self.cq_tail
            .load(SeqCst)
            .wrapping_sub(self.cq_head.load(Relaxed))
    }

    /// The oldest ready completion, if any (a blocking call's one: nothing
    /// allocated, so a call made from a signal handler is safe here).
    pub fn take_one(&self) -> Option<Done> {
        if self.ready() == 0 {
            return None;
        }
        let head = self.cq_head.load(Relaxed);
        let e = &self.cq[(head % RING) as usize];
        let d = Done {
            cookie: e.cookie.load(Relaxed),
            result: e.result.load(Relaxed),
            error: e.error.load(Relaxed) != 0,
        };
        let at = e.delivered_ns.load(Relaxed);
        self.cq_head.store(head.wrapping_add(1), Release);
        self.taken(at, 1);
        Some(d)
    }

    /// Moves up to `max` ready completions into `out`; returns how many.
    /// One consumer at a time (the caller serialises a shared waiter).
    pub fn take(&self, max: usize, out: &mut Vec<Done>) -> usize {
        let head = self.cq_head.load(Relaxed);
        let n = (self.ready() as usize).min(max);
        let mut at = 0;
        for k in 0..n as u32 {
            let e = &self.cq[(head.wrapping_add(k) % RING) as usize];
            out.push(Done {
                cookie: e.cookie.load(Relaxed),
                result: e.result.load(Relaxed),
                error: e.error.load(Relaxed) != 0,
            });
            at = e.delivered_ns.load(Relaxed);
        }
        self.cq_head.store(head.wrapping_add(n as u32), Release);
        // A batch is delivered at once: its last entry's stamp stands for it.
        self.taken(at, n as u64);
        n
    }

    /// Sleeps until at least `min` completions are ready or `timeout`
    /// passes (`None`: no limit). Returns whether they are ready.
    pub fn wait(&self, min: u32, timeout: Option<std::time::Duration>) -> bool {
        let min = min.max(1);
        // Spin first (issue 38 item 2): a completion due within the budget
        // costs no futex sleep and no wake-up from the device's core.
        if timeout != Some(std::time::Duration::ZERO) && self.spin_first(min) {
            self.wake_at.store(0, SeqCst);
            return true;
        }
        let deadline = timeout.map(|t| std::time::Instant::now() + t);
        loop {
            // Read before the ring: a delivery after this read bumps the
            // word before its wake-up, so the sleep below does not start.
            let seen = self.futex.load(SeqCst);
            if self.ready() >= min {
                self.wake_at.store(0, SeqCst);
                return true;
            }
            self.wake_at.store(min, SeqCst);
            self.sleeping.store(1, SeqCst);
            if self.ready() >= min {
                self.sleeping.store(0, SeqCst);
                continue;
            }
            let ts = deadline.map(|d| {
                let left = d.saturating_duration_since(std::time::Instant::now());
                libc::timespec {
                    tv_sec: left.as_secs() as libc::time_t,
                    tv_nsec: left.subsec_nanos() as libc::c_long,
                }
            });
            if ts.is_some_and(|t| t.tv_sec == 0 && t.tv_nsec == 0) {
                self.sleeping.store(0, SeqCst);
                self.wake_at.store(0, SeqCst);
                return self.ready() >= min;
            }
            let tp = ts.as_ref().map_or(std::ptr::null(), |t| t as *const _);
            self.header().costs.sleeps.fetch_add(1, Relaxed);
            futex(&self.futex, libc::FUTEX_WAIT, seen, tp);
            self.sleeping.store(0, SeqCst);
            self.wake_at.store(0, SeqCst);
        }
    }

    /// Spins until at least `min` completions are ready or `timeout`
    /// passes, never sleeping (a poll queue's waiter: its completions come
    /// with no interrupt and no wake-up). Returns whether they are ready.
    pub fn spin(&self, min: u32, timeout: std::time::Duration) -> bool {
        let min = min.max(1);
        let deadline = std::time::Instant::now() + timeout;
        let mut n: u32 = 0;
        loop {
            if self.ready() >= min {
                return true;
            }
            n = n.wrapping_add(1);
            // The clock only now and then: a spin is a load.
            if n % 4096 == 0 && std::time::Instant::now() >= deadline {
                return self.ready() >= min;
            }
            std::hint::spin_loop();
        }
    }

    // ---- the device's side ----

    /// The commands posted and not fetched yet, oldest first, at most
    /// `max`, appended to `out` with nothing consumed: the device calls
    /// [`Slot::fetched`] with how many it took.
    pub fn peek(&self, max: usize, out: &mut Vec<Cmd>) {
        let head = self.sq_head.load(Relaxed);
        let tail = self.sq_tail.load(sync::doorbell_read());
        let n = (tail.wrapping_sub(head) as usize).min(max);
        for k in 0..n as u32 {
            let e = &self.sq[(head.wrapping_add(k) % RING) as usize];
            let flags = e.flags.load(Relaxed);
            out.push(Cmd {
                cookie: e.cookie.load(Relaxed),
                write: flags & 1 != 0,
                critical: flags & 2 != 0,
                polled: flags & 4 != 0,
                marks: (flags >> 8) as u8,
                len: e.len.load(Relaxed),
                offset: e.offset.load(Relaxed),
            });
        }
    }

    /// When the `k`-th command [`Slot::peek`] showed was posted
    /// (CLOCK_MONOTONIC, ns).
    pub fn posted_ns(&self, k: usize) -> u64 {
        let head = self.sq_head.load(Relaxed);
        self.sq[(head.wrapping_add(k as u32) % RING) as usize]
            .posted_ns
            .load(Relaxed)
    }

    /// The device took the first `n` commands [`Slot::peek`] showed.
    pub fn fetched(&self, n: usize) {
        let head = self.sq_head.load(Relaxed);
        self.sq_head.store(head.wrapping_add(n as u32), Release);
    }

    /// The handler leaves `done`; returns whether the waiter now has what it
    /// waits for, so must be woken ([`Slot::wake`], at the handler's exit).
    pub fn deliver(&self, done: &[Done]) -> bool {
        let tail = self.cq_tail.load(Relaxed);
        let at = now_ns();
        for (k, d) in done.iter().enumerate() {
            let e = &self.cq[(tail.wrapping_add(k as u32) % RING) as usize];
            e.cookie.store(d.cookie, Relaxed);
            e.result.store(d.result, Relaxed);
            e.error.store(u32::from(d.error), Relaxed);
            e.delivered_ns.store(at, Relaxed);
        }
        self.cq_tail
            .store(tail.wrapping_add(done.len() as u32), SeqCst);
        self.delivered.fetch_add(done.len() as u64, AcqRel);
        let want = self.wake_at.load(SeqCst);
        want != 0 && self.ready() >= want
    }

    /// Wakes the waiter if it sleeps.
    pub fn wake(&self) {
        self.futex.fetch_add(1, SeqCst);
        if self.sleeping.load(SeqCst) != 0 {
            futex(
                &self.futex,
                libc::FUTEX_WAKE,
                u32::MAX >> 1,
                std::ptr::null(),
            );
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn cmd(cookie: u32) -> Cmd {
        Cmd {
            cookie,
            write: cookie % 2 == 1,
            marks: 1,
            critical: cookie % 3 == 1,
            polled: cookie % 5 == 1,
            len: 4096,
            offset: u64::from(cookie) * 4096,
        }
    }

    #[test]
    fn a_command_posted_is_peeked_once_and_its_completion_taken_once() {
        let (r, _fd) = Region::create().unwrap();
        let i = r.claim(std::process::id()).unwrap();
        let s = r.slot(i);
        assert!(s.post(cmd(1)) && s.post(cmd(2)));
        let mut seen = vec![];
        s.peek(8, &mut seen);
        assert_eq!(seen, vec![cmd(1), cmd(2)]);
        s.fetched(1);
        seen.clear();
        s.peek(8, &mut seen);
        assert_eq!(seen, vec![cmd(2)], "the fetched one is gone");
        s.fetched(1);
        let d = |cookie| Done {
            cookie,
            result: 4096,
            error: false,
        };
        assert!(!s.deliver(&[d(1)]), "nobody waits");
        assert!(s.wait(1, Some(std::time::Duration::ZERO)));
        let mut out = vec![];
        assert_eq!(s.take(8, &mut out), 1);
        assert_eq!(s.in_flight(), 1);
        assert!(
            !s.wait(1, Some(std::time::Duration::from_millis(5))),
            "times out"
        );
        s.deliver(&[d(2)]);
        s.take(8, &mut out);
        assert_eq!(out, vec![d(1), d(2)]);
        assert_eq!(s.in_flight(), 0);
    }

    #[test]
    fn a_waiter_in_another_thread_is_woken_by_the_delivery() {
        let (r, _fd) = Region::create().unwrap();
        let r = std::sync::Arc::new(r);
        let i = r.claim(1).unwrap();
        r.slot(i).post(cmd(9));
        let w = {
            let r = r.clone();
            std::thread::spawn(move || {
                let s = r.slot(i);
                assert!(s.wait(1, None));
                let mut out = vec![];
                s.take(1, &mut out);
                out[0].cookie
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(20));
        let s = r.slot(i);
        if s.deliver(&[Done {
            cookie: 9,
            result: 0,
            error: true,
        }]) {
            s.wake();
        }
        assert_eq!(w.join().unwrap(), 9);
    }

    #[test]
    fn a_waiter_within_its_spin_budget_takes_the_completion_without_sleeping() {
        let (r, _fd) = Region::create().unwrap();
        r.set_spin(2_000_000_000);
        let r = std::sync::Arc::new(r);
        let i = r.claim(1).unwrap();
        assert!(r.slot(i).post(cmd(4)));
        let w = {
            let r = r.clone();
            std::thread::spawn(move || r.slot(i).wait(1, None))
        };
        std::thread::sleep(std::time::Duration::from_millis(20));
        let s = r.slot(i);
        if s.deliver(&[Done {
            cookie: 4,
            result: 4096,
            error: false,
        }]) {
            s.wake();
        }
        assert!(w.join().unwrap());
        s.take_one().unwrap();
        let c = r.costs();
        assert_eq!((c.spin_hits, c.sleeps, c.taken), (1, 0, 1), "{c:?}");
        assert!(c.spun_ns >= 10_000_000, "the spin is charged: {c:?}");
    }

    #[test]
    fn a_second_consumers_spin_leaves_a_sleeping_waiter_wakeable() {
        // A ring's GETEVENTS caller spins beside the ring's waiter thread
        // asleep in `wait` (preload's uring::wait): the spin must not
        // clear what the handler reads to wake the sleeper.
        let (r, _fd) = Region::create().unwrap();
        r.set_spin(1_000_000);
        let r = std::sync::Arc::new(r);
        let i = r.claim(1).unwrap();
        assert!(r.slot(i).post(cmd(7)));
        let w = {
            let r = r.clone();
            std::thread::spawn(move || {
                let t = std::time::Instant::now();
                let got = r.slot(i).wait(1, Some(std::time::Duration::from_secs(10)));
                (got, t.elapsed())
            })
        };
        let s = r.slot(i);
        let t = std::time::Instant::now();
        while s.sleeping.load(SeqCst) == 0 && t.elapsed() < std::time::Duration::from_secs(5) {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(!s.spin_first(1), "nothing delivered: the spin ends empty");
        let woke = s.deliver(&[Done {
            cookie: 7,
            result: 4096,
            error: false,
        }]);
        assert!(woke, "the sleeper's wake_at survived the spin");
        s.wake();
        let (got, took) = w.join().unwrap();
        assert!(got && took < std::time::Duration::from_secs(5), "{took:?}");
    }

    #[test]
    fn without_a_budget_or_past_it_the_waiter_sleeps() {
        let (r, _fd) = Region::create().unwrap();
        let s = r.slot(r.claim(1).unwrap());
        assert!(s.post(cmd(1)));
        assert!(!s.wait(1, Some(std::time::Duration::from_millis(2))));
        assert_eq!(r.costs().sleeps, 1);
        assert_eq!(r.costs().spun_ns, 0, "no budget, no spin");
        r.set_spin(1_000_000);
        assert!(!s.wait(1, Some(std::time::Duration::from_millis(3))));
        let c = r.costs();
        assert!(c.spun_ns >= 1_000_000 && c.sleeps == 2, "{c:?}");
    }

    #[test]
    fn a_post_rings_a_parked_device_and_only_then() {
        let (r, _fd) = Region::create().unwrap();
        let r = std::sync::Arc::new(r);
        let i = r.claim(1).unwrap();
        assert!(r.slot(i).post(cmd(1)));
        assert_eq!(r.costs().rings, 0, "nobody parked");
        r.slot(i).fetched(1);
        let seen = r.parking();
        assert!(!r.any_posted());
        let device = {
            let r = r.clone();
            std::thread::spawn(move || {
                let t = std::time::Instant::now();
                r.park(seen, std::time::Duration::from_secs(10));
                t.elapsed()
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(r.slot(i).post(cmd(2)));
        let slept = device.join().unwrap();
        assert!(
            slept < std::time::Duration::from_secs(5),
            "woken: {slept:?}"
        );
        assert_eq!(r.costs().rings, 1);
        assert!(r.any_posted());
    }

    #[test]
    fn the_ring_refuses_more_than_it_holds_in_flight() {
        let (r, _fd) = Region::create().unwrap();
        let s = r.slot(r.claim(1).unwrap());
        for c in 0..RING {
            assert!(s.post(cmd(c)));
        }
        assert!(!s.post(cmd(RING)));
    }

    #[test]
    fn a_completion_not_taken_holds_its_room_in_the_ring() {
        let (r, _fd) = Region::create().unwrap();
        let s = r.slot(r.claim(1).unwrap());
        for c in 0..RING {
            assert!(s.post(cmd(c)));
        }
        let mut cmds = vec![];
        s.peek(RING as usize, &mut cmds);
        s.fetched(cmds.len());
        let done: Vec<Done> = cmds
            .iter()
            .map(|c| Done {
                cookie: c.cookie,
                result: 0,
                error: false,
            })
            .collect();
        s.deliver(&done);
        assert_eq!(s.in_flight(), 0);
        assert!(!s.post(cmd(RING)), "its completion would overwrite one");
        assert_eq!(s.take_one().map(|d| d.cookie), Some(0));
        assert!(s.post(cmd(RING)), "room once one is taken");
        assert!(!s.post(cmd(RING + 1)));
    }

    #[test]
    fn a_dead_process_slot_is_taken_again_only_when_quiet() {
        let (r, _fd) = Region::create().unwrap();
        // A pid that does not exist (above the kernel's pid_max limit).
        let dead = 1 << 30;
        let me = std::process::id();
        for want in 0..SLOTS {
            assert_eq!(r.claim(me), Some(want));
        }
        assert_eq!(r.claim(me), None, "all taken by the living");
        for i in 0..SLOTS {
            r.slot(i).pid.store(dead, SeqCst);
        }
        r.slot(3).post(cmd(1)); // one in flight, never delivered
        let mut again: Vec<usize> = (1..SLOTS).map_while(|_| r.claim(me)).collect();
        assert_eq!(again.len(), SLOTS - 1, "every quiet slot of the dead");
        assert_eq!(r.claim(me), None, "the living keep theirs");
        again.sort();
        assert!(!again.contains(&3), "a slot with a command in flight stays");
    }

    #[test]
    fn another_mapping_sees_the_same_slots() {
        use std::os::fd::AsRawFd;
        let (r, fd) = Region::create().unwrap();
        let path = format!("/proc/self/fd/{}", fd.as_raw_fd());
        let other = Region::open(&path).unwrap();
        let i = r.claim(7).unwrap();
        r.slot(i).post(cmd(5));
        let mut seen = vec![];
        other.slot(i).peek(4, &mut seen);
        assert_eq!(seen, vec![cmd(5)]);
        assert_eq!(other.high(), i + 1);
        assert!(Region::open("/proc/self/exe").is_err(), "not a region");
    }
}
