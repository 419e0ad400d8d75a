//! One routed ring: the program's rings in our memory, the shadow ring the
//! kernel moves the data with, and the rule that publishes a CQE. A
//! request the device serves (a storage SQE on a direct file) is published
//! only once the shadow completed it AND the device delivered its
//! command; every other CQE, and every error, is published when the
//! kernel posts it (errors are never coalesced).
//!
//! Where the kernel posts a CQE (io_uring/io_uring.c `io_cqring_event_
//! overflow`, `io_eventfd_signal`, `io_cqring_wake`), so does `push`: the
//! entry, then the tail, then the registered eventfd, then the waiters;
//! a full CQ keeps the entry on an overflow list (IORING_FEAT_NODROP) and
//! sets IORING_SQ_CQ_OVERFLOW until there is room. Under
//! IORING_SETUP_DEFER_TASKRUN (and on IOPOLL rings, whose completions are
//! found by the caller's polling) completions reach the CQ only when the
//! program enters with IORING_ENTER_GETEVENTS (`io_run_local_work`).

use std::collections::{HashMap, VecDeque};
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering::*};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use shm::Done;

use super::abi::{self, Cqe, Rings};
use crate::kernel::sys;
use crate::route;

/// How long the reaper and the device waiter sleep between looks at
/// their stop flag.
const SLICE: Duration = Duration::from_millis(100);

/// A request the device serves: its CQE waits for both completions.
pub(crate) struct Pend {
    pub ud: u64,
    /// The shadow's CQE once the kernel completed the copy.
    pub kernel: Option<Cqe>,
    /// A device command was posted for it.
    pub cmd: bool,
    pub delivered: bool,
    pub dev_error: bool,
    /// The program asked IOSQE_CQE_SKIP_SUCCESS (taken out of the copy, so
    /// that the kernel's completion is seen): no CQE on success.
    pub skip: bool,
    /// The shadow did not take its SQE: a delivery of its command is
    /// dropped.
    pub orphan: bool,
}

#[derive(Default)]
pub(crate) struct State {
    pub next: u32,
    pub pend: HashMap<u32, Pend>,
    /// Gated requests by the program's user_data, oldest first: a shadow
    /// CQE carries the program's own user_data (so cancellation by
    /// user_data works in the kernel unchanged) and is matched to the
    /// oldest gated request with it.
    pub by_ud: HashMap<u64, VecDeque<u32>>,
    /// SQEs the shadow holds whose CQE is not reaped yet (a hint: the
    /// reaper waits on the shadow's eventfd only while there are some).
    pub in_kernel: u32,
    /// Ready CQEs that reach the CQ at the next GETEVENTS (DEFER_TASKRUN,
    /// IOPOLL).
    pub deferred: VecDeque<Cqe>,
    /// CQEs that found the CQ full (IORING_FEAT_NODROP).
    pub overflow: VecDeque<Cqe>,
    /// IORING_OP_TIMEOUTs with a completion count (`off` > 0) not yet
    /// ended, by user_data.
    pub counted: HashMap<u64, u32>,
    /// The CQEs of such timeouts that fired by their count, each held
    /// until the gated requests whose shadow CQEs came before it (those
    /// it counted) are published: natively it is posted after the CQEs it
    /// counted (io_uring/timeout.c `io_flush_timeouts`, run as they are
    /// committed), and a program finds them in the CQ with it.
    pub held: Vec<(Cqe, Vec<u32>)>,
    /// IORING_OP_TIMEOUTs not yet ended, by user_data.
    pub timeouts: HashMap<u64, u32>,
    /// How many timeouts fired (by their time or their count), as the
    /// kernel's `ctx->cq_timeouts`: a GETEVENTS waiter returns when it
    /// changes, however few CQEs it has (io_uring/io_uring.c
    /// `io_should_wake`: `atomic_read(&ctx->cq_timeouts) !=
    /// iowq->nr_timeouts`; io_uring/timeout.c `io_timeout_fn` and
    /// `io_kill_timeout` count it).
    pub cq_timeouts: u32,
}

pub(crate) struct Ring {
    /// Our mappings of it: the rings and the SQE array.
    pub maps: [(usize, usize); 2],
    pub prog: Rings,
    /// The program's IORING_SETUP_* flags.
    pub flags: u32,
    pub shadow_fd: c_int,
    pub shadow: Rings,
    pub shadow_maps: [(usize, usize); 2],
    /// The eventfd registered on the shadow: the kernel signals it at
    /// each CQE it posts.
    pub efd: c_int,
    /// The program's ring descriptor's file (the memfd's st_dev and
    /// st_ino): a duplicate of the descriptor names the same ring.
    pub file: (u64, u64),
    /// The device slot the commands go through (`None`: none was free;
    /// CQEs then appear at the kernel's completion).
    pub slot: Option<usize>,
    /// IORING_SETUP_SINGLE_ISSUER's task (0: not yet fixed).
    pub owner: AtomicI32,
    /// Submission: the program's SQ head as we consumed it.
    pub sub: Mutex<u32>,
    pub st: Mutex<State>,
    /// One reader of the shadow's CQ at a time.
    pub reap: Mutex<()>,
    /// One consumer of the device slot's completions at a time (the slot's
    /// CQ is single-consumer, crates/shm): the waiter thread, or a
    /// GETEVENTS caller taking its own ([`Ring::take_slot`]). Held while a
    /// batch is taken and published, so each is published exactly once.
    pub consume: Mutex<()>,
    pub kernel_wait: Condvar,
    /// Written when a publication gives a GETEVENTS waiter what it needs;
    /// waiters poll it beside the shadow's eventfd.
    pub wake_efd: c_int,
    pub waiters: AtomicU32,
    /// The fewest CQEs a waiter still needs (`u32::MAX`: none waits).
    pub want: AtomicU32,
    pub needs: Mutex<Vec<u32>>,
    /// The program's registered eventfd (our duplicate) and whether it
    /// asked IORING_REGISTER_EVENTFD_ASYNC.
    pub user_efd: Mutex<Option<c_int>>,
    /// The registered file table as the program registered it (-1: an
    /// empty slot), to learn a fixed file's descriptor.
    pub files: Mutex<Vec<c_int>>,
    /// SQPOLL: our SQ thread's futex word.
    pub sq_wake: AtomicU32,
    pub stop: AtomicBool,
    /// Set up IORING_SETUP_R_DISABLED and not yet enabled
    /// (IORING_REGISTER_ENABLE_RINGS).
    pub disabled: AtomicBool,
}

impl Ring {
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.st.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn deferred_mode(&self) -> bool {
        self.flags & (abi::setup::DEFER_TASKRUN | abi::setup::IOPOLL) != 0
    }

    /// CQEs the program could have now: in the CQ, plus those a
    /// GETEVENTS would flush into it.
    pub fn available(&self, st: &State) -> u32 {
        self.prog.cq_ready() + st.deferred.len() as u32 + st.overflow.len() as u32
    }

    /// A waiter's need changes from `old` to `new`; `want` becomes the
    /// least of all (stored before the waiter re-checks).
    pub fn need(&self, old: Option<u32>, new: Option<u32>) {
        let mut n = self.needs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = old.and_then(|o| n.iter().position(|&x| x == o)) {
            n.swap_remove(i);
        }
        n.extend(new);
        self.want
            .store(n.iter().copied().min().unwrap_or(u32::MAX), SeqCst);
    }

    fn wake_waiters(&self, st: &State) {
        if self.waiters.load(SeqCst) > 0 && self.available(st) >= self.want.load(SeqCst) {
            let one: u64 = 1;
            // SAFETY: our eventfd, 8 bytes.
            unsafe { libc::syscall(libc::SYS_write, self.wake_efd, &one as *const u64, 8) };
        }
    }

    /// A CQE ready for the program: queued for the CQ (posted by the
    /// caller's [`Ring::post`] at the end of its batch), or at the next
    /// GETEVENTS. `inline`: the kernel completed it inside the submitting
    /// `io_uring_enter`, where it posts even a DEFER_TASKRUN or IOPOLL
    /// ring's CQE as the submission ends (io_uring/io_uring.c
    /// `io_submit_state_end` -> `__io_submit_flush_completions`; only
    /// task-work completions wait for `io_run_local_work`).
    pub fn complete(&self, st: &mut State, c: Cqe, inline: bool) {
        if self.deferred_mode() && !inline {
            st.deferred.push_back(c);
            if self.flags & abi::setup::TASKRUN_FLAG != 0 {
                self.prog.sq_flags().fetch_or(abi::SQ_TASKRUN, SeqCst);
            }
            if self.flags & abi::setup::DEFER_TASKRUN != 0 {
                // The kernel signals the registered eventfd when it queues
                // a DEFER_TASKRUN completion's task work, before the CQE
                // is in the CQ (io_uring/io_uring.c
                // `io_req_local_work_add`: `if (ctx->has_evfd)
                // io_eventfd_signal`), so that an event loop knows to
                // enter (liburing 2.3 test/defer-taskrun.c test_eventfd).
                self.signal_eventfd();
            }
            self.wake_waiters(st);
            return;
        }
        st.overflow.push_back(c);
    }

    /// Posts what [`Ring::complete`] queued, as far as the CQ has room:
    /// one batch, so the registered eventfd is signalled once for it, as
    /// the kernel signals once per flush of its completions
    /// (io_uring/io_uring.c `__io_commit_cqring_flush` ->
    /// `io_eventfd_signal`), not once per CQE.
    pub fn post(&self, st: &mut State) {
        self.release_held(st);
        if !st.overflow.is_empty() {
            self.flush_overflow(st);
        }
    }

    /// The held timeouts' CQEs whose counted requests are all published.
    fn release_held(&self, st: &mut State) {
        let mut i = 0;
        while i < st.held.len() {
            if st.held[i].1.iter().any(|k| st.pend.contains_key(k)) {
                i += 1;
                continue;
            }
            let (c, _) = st.held.remove(i);
            self.complete(st, c, false);
            self.timeout_fired(st);
        }
    }

    /// A timeout fired: its waiters wake (see [`State::cq_timeouts`]).
    fn timeout_fired(&self, st: &mut State) {
        st.cq_timeouts = st.cq_timeouts.wrapping_add(1);
        if self.waiters.load(SeqCst) > 0 {
            let one: u64 = 1;
            // SAFETY: our eventfd, 8 bytes.
            unsafe { libc::syscall(libc::SYS_write, self.wake_efd, &one as *const u64, 8) };
        }
    }

    /// Whether `c` ends (or, multishot, fires) one of the program's
    /// IORING_OP_TIMEOUTs by its time or its count (not a removal's
    /// -ECANCELED), forgetting it once it ends.
    fn is_timeout_firing(st: &mut State, c: &Cqe) -> bool {
        let Some(n) = st.timeouts.get_mut(&c.user_data) else {
            return false;
        };
        if c.flags & 2 == 0 {
            *n -= 1;
            if *n == 0 {
                st.timeouts.remove(&c.user_data);
            }
        }
        c.res != -libc::ECANCELED
    }

    /// Moves the deferred CQEs (GETEVENTS: the task runs its work) and
    /// the overflow list into the CQ, as far as there is room.
    pub fn flush(&self, st: &mut State) {
        while let Some(c) = st.deferred.pop_front() {
            st.overflow.push_back(c);
        }
        self.prog.sq_flags().fetch_and(!abi::SQ_TASKRUN, SeqCst);
        self.flush_overflow(st);
    }

    fn flush_overflow(&self, st: &mut State) {
        let mut posted = false;
        while let Some(&c) = st.overflow.front() {
            let tail = self.prog.cq_tail().load(Relaxed);
            let head = self.prog.cq_head().load(Acquire);
            if tail.wrapping_sub(head) >= self.prog.cq_entries {
                break;
            }
            self.prog.write_cqe(tail, c);
            self.prog.cq_tail().store(tail.wrapping_add(1), Release);
            st.overflow.pop_front();
            posted = true;
        }
        if st.overflow.is_empty() {
            self.prog.sq_flags().fetch_and(!abi::SQ_CQ_OVERFLOW, SeqCst);
        } else {
            self.prog.sq_flags().fetch_or(abi::SQ_CQ_OVERFLOW, SeqCst);
        }
        if posted {
            self.signal_eventfd();
            self.wake_waiters(st);
        }
    }

    fn signal_eventfd(&self) {
        if self.prog.cq_flags().load(Relaxed) & abi::CQ_EVENTFD_DISABLED != 0 {
            return;
        }
        let efd = *self.user_efd.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(fd) = efd {
            let one: u64 = 1;
            // SAFETY: our duplicate of the program's eventfd, 8 bytes.
            unsafe { libc::syscall(libc::SYS_write, fd, &one as *const u64, 8) };
        }
    }

    /// Whether `p`'s CQE may be published: the kernel completed it and it
    /// failed, or had no command, or the device delivered, or the device
    /// is gone.
    fn ready(p: &Pend) -> bool {
        match p.kernel {
            None => false,
            Some(c) => c.res < 0 || !p.cmd || p.delivered || route::region().is_none(),
        }
    }

    fn publish(&self, st: &mut State, cookie: u32, inline: bool) {
        let Some(p) = st.pend.remove(&cookie) else {
            return;
        };
        let Some(mut c) = p.kernel else { return };
        if c.res >= 0 && p.cmd && p.delivered && p.dev_error {
            // A command the device failed: EIO, as a blocking call's.
            c.res = -libc::EIO;
        }
        if p.skip && c.res >= 0 {
            return;
        }
        self.complete(st, c, inline);
    }

    fn publish_if_ready(&self, st: &mut State, cookie: u32, inline: bool) {
        if st.pend.get(&cookie).is_some_and(Ring::ready) {
            self.publish(st, cookie, inline);
        }
    }

    /// The shadow's CQEs: each matched to the oldest gated request with
    /// its user_data, or published at once; posted as one batch.
    /// `inline`: found right after the submitting `io_uring_enter` (see
    /// [`Ring::complete`]); a gated request is then published at once
    /// only if it failed (the kernel's inline error, as a misaligned
    /// O_DIRECT read's EINVAL: natively a successful direct request
    /// completes by interrupt, i.e. by task work).
    pub fn kernel_cqes(&self, cqes: &[Cqe], inline: bool) {
        let mut st = self.lock();
        for &c in cqes {
            if c.flags & 2 == 0 {
                // Not IORING_CQE_F_MORE: the request left the kernel.
                st.in_kernel = st.in_kernel.saturating_sub(1);
            }
            let cookie = st.by_ud.get_mut(&c.user_data).and_then(|q| q.pop_front());
            if st.by_ud.get(&c.user_data).is_some_and(|q| q.is_empty()) {
                st.by_ud.remove(&c.user_data);
            }
            match cookie.and_then(|k| st.pend.get_mut(&k).map(|p| (k, p))) {
                Some((k, p)) => {
                    p.kernel = Some(c);
                    self.publish_if_ready(&mut st, k, inline && c.res < 0);
                }
                None => {
                    let fired = Ring::is_timeout_firing(&mut st, &c);
                    if let Some(n) = st.counted.get_mut(&c.user_data) {
                        if c.flags & 2 == 0 {
                            *n -= 1;
                            if *n == 0 {
                                st.counted.remove(&c.user_data);
                            }
                        }
                        // res 0: fired by its count (-ETIME: by its
                        // time, -ECANCELED: cancelled).
                        if c.res >= 0 {
                            let before: Vec<u32> = st
                                .pend
                                .iter()
                                .filter(|(_, p)| p.kernel.is_some() && !p.orphan)
                                .map(|(&k, _)| k)
                                .collect();
                            if !before.is_empty() {
                                st.held.push((c, before));
                                continue;
                            }
                        }
                    }
                    self.complete(&mut st, c, inline);
                    if fired {
                        self.timeout_fired(&mut st);
                    }
                }
            }
        }
        self.post(&mut st);
    }

    /// The device slot's completions ready now, taken and published by
    /// the caller (a GETEVENTS caller's own, issue 38 item 2: no hop
    /// through the waiter thread); how many.
    pub fn take_slot(&self, s: &shm::Slot) -> usize {
        let _one = self.consume.lock().unwrap_or_else(|e| e.into_inner());
        let mut done = Vec::new();
        let n = s.take(usize::MAX, &mut done);
        if n > 0 {
            self.delivered(&done);
        }
        n
    }

    fn delivered(&self, done: &[Done]) {
        let mut st = self.lock();
        for d in done {
            let Some(p) = st.pend.get_mut(&d.cookie) else {
                continue;
            };
            if p.orphan {
                st.pend.remove(&d.cookie);
                continue;
            }
            p.delivered = true;
            p.dev_error = d.error;
            self.publish_if_ready(&mut st, d.cookie, false);
        }
        self.post(&mut st);
    }

    fn device_gone(&self) {
        let mut st = self.lock();
        let now: Vec<u32> = st
            .pend
            .iter()
            .filter(|(_, p)| Ring::ready(p))
            .map(|(&k, _)| k)
            .collect();
        for k in now {
            self.publish(&mut st, k, false);
        }
        self.post(&mut st);
    }

    /// Reads every CQE the shadow posted (flushing its overflow list with
    /// a GETEVENTS when the kernel kept some back) and hands them on;
    /// `inline`: right after the submitting call ([`Ring::kernel_cqes`]).
    pub fn reap_shadow(&self, inline: bool) {
        let _one = self.reap.lock().unwrap_or_else(|e| e.into_inner());
        self.reap_locked(inline);
    }

    /// [`Ring::reap_shadow`] with `reap` held by the caller.
    pub fn reap_locked(&self, inline: bool) {
        let s = &self.shadow;
        loop {
            let mut got = Vec::new();
            let mut head = s.cq_head().load(Relaxed);
            let tail = s.cq_tail().load(Acquire);
            while head != tail {
                got.push(s.read_cqe(head));
                head = head.wrapping_add(1);
            }
            s.cq_head().store(head, Release);
            if !got.is_empty() {
                self.kernel_cqes(&got, inline);
            }
            if s.sq_flags().load(Acquire) & abi::SQ_CQ_OVERFLOW == 0 {
                break;
            }
            // The kernel kept CQEs back: a GETEVENTS moves them to the CQ.
            let flags = abi::enter::GETEVENTS as usize;
            sys(
                libc::SYS_io_uring_enter,
                self.shadow_fd as usize,
                0,
                0,
                flags,
                0,
            );
        }
    }

    /// Marks the requests the shadow did not take (`cookies`) as orphans.
    pub fn orphan(&self, st: &mut State, cookies: &[u32]) {
        for &k in cookies {
            let Some(p) = st.pend.get_mut(&k) else {
                continue;
            };
            let ud = p.ud;
            if p.cmd {
                p.orphan = true;
            } else {
                st.pend.remove(&k);
            }
            if let Some(q) = st.by_ud.get_mut(&ud) {
                q.retain(|&x| x != k);
            }
        }
        st.in_kernel = st.in_kernel.saturating_sub(cookies.len() as u32);
    }
}

/// The kernel's side: while the shadow holds SQEs and no GETEVENTS waiter
/// watches it, waits for its eventfd
/// (or, on an IOPOLL ring, polls with a GETEVENTS: such completions are
/// found only by polling) and reaps; ends once stopped with nothing left
/// in the kernel, closing the shadow.
pub(super) fn kernel_reaper(r: &Ring) {
    loop {
        {
            let mut st = r.lock();
            // A GETEVENTS waiter polls the shadow itself (its completion
            // task work runs on the submitting thread and signals the
            // eventfd: a waiter wakes on it without a hop through us).
            while (st.in_kernel == 0 || r.waiters.load(SeqCst) > 0) && !r.stop.load(Acquire) {
                let (g, _) = r
                    .kernel_wait
                    .wait_timeout(st, SLICE)
                    .unwrap_or_else(|e| e.into_inner());
                st = g;
            }
            // The program closed the ring's last descriptor: the kernel
            // tears a ring down then, cancelling what can be cancelled (a
            // read parked on a pipe, a timeout) and dropping its
            // registered files (io_uring/io_uring.c `io_ring_exit_work`
            // -> `io_uring_try_cancel_requests`, then
            // `io_sqe_files_unregister`). The reaper ends at once, so that
            // the shadow's last reference goes (the Ring's drop unmaps and
            // closes it) and the kernel does the same to the shadow; a
            // reaper waiting for every request first kept a parked read,
            // and the pipe end registered with it, forever (liburing's
            // test/ring-leak.c hung under exec).
            if r.stop.load(Acquire) {
                break;
            }
        }
        if r.flags & abi::setup::IOPOLL != 0 {
            let flags = abi::enter::GETEVENTS as usize;
            sys(
                libc::SYS_io_uring_enter,
                r.shadow_fd as usize,
                0,
                1,
                flags,
                0,
            );
        } else {
            let mut p = libc::pollfd {
                fd: r.efd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one pollfd of ours.
            unsafe { libc::poll(&mut p, 1, SLICE.as_millis() as c_int) };
            let mut n: u64 = 0;
            // SAFETY: our nonblocking eventfd, 8 bytes.
            unsafe { libc::syscall(libc::SYS_read, r.efd, &mut n as *mut u64, 8) };
        }
        r.reap_shadow(false);
        if r.stop.load(Acquire) && !route::device_alive() {
            r.device_gone();
        }
    }
}

/// The device's side: sleeps on the slot until the device's interrupt
/// handler delivers; ends once stopped with nothing of the slot's in
/// flight, giving the slot back.
pub(super) fn device_waiter(r: &Ring) {
    if let Some(slot) = r.slot {
        route::device_waiter(
            slot,
            &r.stop,
            SLICE,
            Some(&r.consume),
            |d| r.delivered(d),
            || r.device_gone(),
        );
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        for &(p, len) in self.maps.iter().chain(self.shadow_maps.iter()) {
            if len > 0 {
                // SAFETY: our own mappings; the last reference is gone.
                unsafe { libc::munmap(p as *mut libc::c_void, len) };
            }
        }
        super::forget_shadow(self.shadow_fd);
        let efd = *self.user_efd.get_mut().unwrap_or_else(|e| e.into_inner());
        for fd in [self.shadow_fd, self.efd, self.wake_efd]
            .into_iter()
            .chain(efd)
        {
            if fd >= 0 {
                // SAFETY: our descriptors, closed once.
                unsafe { libc::syscall(libc::SYS_close, fd) };
            }
        }
    }
}
