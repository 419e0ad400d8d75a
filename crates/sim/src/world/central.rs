//! UnICom's central poller in the simulator (`--completion central`; issue
//! 40): the decisions are [`host::central`]'s, from the authors' artifact
//! (`RiweiPan/UnICom`); this module applies them to the simulated threads
//! and cores.
//!
//! - **The poller** is a kernel thread of its own ([`Central`], a
//!   [`crate::world::program::Program`]) on the core [`host::central::place`]
//!   picks: the highest-numbered core no job thread runs on (the
//!   artifact's `ct_cpu_id`, its threads kept off that core), else the
//!   highest-numbered one, shared with the job there through the CPU
//!   scheduler. It spins (`Kind::Spin`, its core busy, counted as poll
//!   time) whether or not a tag is in flight: the artifact's loop never
//!   sleeps. When the device posts an entry on a central queue, a spinning
//!   poller's pass starts at once; one that is reaping, or off its CPU on
//!   a shared core, finds it at its next pass. A pass reaps what every
//!   queue holds (`per_completion` each, as a handler's) and makes the
//!   skipping waiters whose last tag completed runnable (`wakeup` each, the
//!   host profile's try_to_wake_up: the artifact's `cskip` update under
//!   the run-queue lock and `resched_curr` is not measured anywhere, so
//!   the cost of the wake-up it replaces stands in, assumed); the
//!   completions reach their threads as the pass ends.
//! - **The waiters** (blocking engines' threads): their requests go to a
//!   queue with no interrupt (`alloc_cq` without `NVME_CQ_IRQ_ENABLED`),
//!   unseen by the device's policy. A waiter decides how it waits as it
//!   starts to (the artifact decides at the previous completion, from the
//!   run queue then; simplified): alone on its core it spins on its
//!   request's status (`Kind::Spin`, its own core busy) until the poller's
//!   pass delivers the completion, then returns with no wake-up and no
//!   switch; with another runnable thread on its core it leaves the CPU to
//!   it (TagSched's skip) until the poller makes it runnable, then comes
//!   back through the CPU scheduler (its wake-up preemption rule, not the
//!   artifact's "preempt any non-I/O thread"; a switch, as any thread
//!   pays). The artifact's skipped waiter keeps calling `schedule()`, so
//!   a core whose every thread is a skipped waiter stays busy there; here
//!   it idles (not modelled).
//! - **Refused**: with a block-layer scheduler (`ld`: the poller does not
//!   find pieces) and with `fsync_io_polls` (the fsync path's polled I/O
//!   is classic polling's); and a device policy other than `default` when
//!   every I/O the run makes goes to the poller's queues, which raise no
//!   interrupt for it to act on.

use host::central::{Costs, Done, Poller, WaitKind};

use crate::cause::{Cause, Mix};
use crate::limits::MAX_SERVICE;
use crate::workload::Waiter;
use crate::world::{Kind, RState, Step, TState, World};

/// The poller's thread: its loop ([`World::central_plan`]).
#[derive(Debug)]
pub(crate) struct Central;

impl crate::world::program::Program for Central {
    fn plan(&self, w: &mut World, tid: u32, core: u32) {
        w.central_plan(tid, core);
    }
}

/// The poller's state in a run.
#[derive(Debug)]
pub(crate) struct CentralState {
    /// The poller's thread and core, and whether the core is its own.
    pub tid: u32,
    pub core: u32,
    pub dedicated: bool,
    poller: Poller,
    costs: Costs,
    /// In its spin (a post ends it now).
    spinning: bool,
    /// The pass in progress: delivered when its segment ends.
    reaping: Vec<Done>,
    /// What it did in the measured window.
    pub counts: CentralCounts,
}

/// What the poller did in the measured window.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CentralCounts {
    pub passes: u64,
    pub reaped: u64,
    /// Skipping waiters made runnable.
    pub woken: u64,
    /// Waits spun on the status word, and waits skipped.
    pub spun: u64,
    pub skipped: u64,
}

impl CentralState {
    pub(crate) fn new(
        tid: u32,
        core: u32,
        dedicated: bool,
        queues: usize,
        threads: usize,
        costs: Costs,
    ) -> Self {
        CentralState {
            tid,
            core,
            dedicated,
            poller: Poller::new(queues, threads),
            costs,
            spinning: false,
            reaping: Vec::new(),
            counts: CentralCounts::default(),
        }
    }
}

/// Whether a thread waiting as `waiter` under `mode` waits for the central
/// poller: a blocking engine's, whose requests the mode polls.
pub(crate) fn waits_centrally(mode: crate::Completion, waiter: Waiter) -> bool {
    mode == crate::Completion::Central && waiter == Waiter::Blocking
}

impl World {
    /// Whether `tid` waits for the central poller.
    pub(crate) fn central_owns(&self, tid: u32) -> bool {
        self.central.as_ref().is_some_and(|c| c.tid != tid)
            && waits_centrally(self.polling.mode(), self.threads[tid as usize].spec.waiter)
            && tid < self.job_threads as u32
    }

    /// A central waiter submitted `req` (a tag in flight: TagSched).
    pub(crate) fn central_submitted(&mut self, tid: u32) {
        if let Some(c) = self.central.as_mut() {
            c.poller.submitted(tid);
        }
    }

    /// A central waiter's call has not what it needs: it spins on its
    /// status word alone on its core, else leaves the CPU to the others.
    pub(crate) fn central_wait(&mut self, tid: u32, core: u32) {
        let others = !self.cpu.runqueue_empty(core);
        let kind = host::central::wait_kind(1 + u32::from(others));
        let measuring = self.measuring(self.now);
        let c = self
            .central
            .as_mut()
            .expect("a central waiter has a poller");
        match kind {
            WaitKind::Spin => {
                if measuring {
                    c.counts.spun += 1;
                }
                self.threads[tid as usize].spinning = true;
                // Ends when the poller delivers ([`World::central_deliver`]).
                self.central_spin(core, Step::Poll);
            }
            WaitKind::Skip => {
                if measuring {
                    c.counts.skipped += 1;
                }
                let th = &mut self.threads[tid as usize];
                th.state = TState::Blocked;
                th.next = Step::Reap;
                self.leave_cpu(core);
            }
        }
    }

    /// The device posts `req`'s entry: on a central queue, the poller's
    /// next pass finds it (at once if it spins). False if `req` is not a
    /// central waiter's.
    pub(crate) fn central_post(&mut self, req: u32) -> bool {
        let r = self.requests[req as usize];
        if !self.central_owns(r.tid) {
            return false;
        }
        if r.state != RState::InDevice {
            self.audit.duplicates += 1;
            return true;
        }
        self.requests[req as usize].state = RState::Posted;
        let queue = self.threads[r.tid as usize].queue as usize;
        let c = self.central.as_mut().expect("owned");
        c.poller.posted(queue, req, r.tid);
        if c.spinning {
            c.spinning = false;
            let tid = c.tid;
            self.end_spin(tid, Step::Plan, 0, Mix::of(Cause::Poll), Step::Plan);
        }
        true
    }

    /// The poller's loop: deliver the pass that just ended, then pass
    /// again if something is posted, else spin; it stops when every job
    /// thread has finished.
    pub(crate) fn central_plan(&mut self, tid: u32, core: u32) {
        self.central_deliver(core);
        if self.threads_done >= self.job_threads {
            let th = &mut self.threads[tid as usize];
            th.state = TState::Done;
            self.leave_cpu(core);
            return;
        }
        let measuring = self.measuring(self.now);
        let c = self.central.as_mut().expect("the poller's state");
        if c.poller.pending() {
            let mut pass = std::mem::take(&mut c.reaping);
            c.poller.pass(&mut pass);
            // The skipping waiters this pass makes runnable.
            let woken = pass
                .iter()
                .filter(|d| d.runnable && self.threads[d.waiter as usize].state == TState::Blocked)
                .count() as u64;
            let c = self.central.as_mut().expect("the poller's state");
            let reaped = pass.len() as u64;
            if measuring {
                c.counts.passes += 1;
                c.counts.reaped += reaped;
                c.counts.woken += woken;
            }
            let cost = c.costs.pass(reaped, woken);
            let mix = Mix::two(Cause::Completion, c.costs.reap * reaped, Cause::Wakeup);
            c.reaping = pass;
            self.start_seg(core, Kind::Kernel, mix, cost, Step::Plan);
            return;
        }
        // Nothing posted: spin (cond_resched: on a shared core the CPU
        // scheduler's tick divides it).
        c.spinning = true;
        self.central_spin(core, Step::Plan);
    }

    /// A spin on `core` (the poller's loop, or a waiter on its status
    /// word), busy and counted as poll time, until a post or a delivery
    /// cuts it short; one this long ending on its own only spins on.
    fn central_spin(&mut self, core: u32, then: Step) {
        let mix = Mix::of(Cause::Poll);
        self.start_seg(core, Kind::Spin, mix, MAX_SERVICE, then);
    }

    /// A pass's segment ended: each completion reaches its thread; a
    /// spinning waiter with what it needs stops spinning, a skipping one
    /// is made runnable on its core.
    fn central_deliver(&mut self, poller_core: u32) {
        let Some(c) = self.central.as_mut() else {
            return;
        };
        let pass = std::mem::take(&mut c.reaping);
        for d in &pass {
            let r = &mut self.requests[d.tag as usize];
            if r.state != RState::Posted {
                self.audit.duplicates += 1;
                continue;
            }
            r.state = RState::Delivered;
            self.audit.delivered += 1;
            self.path.delivered(d.tag, self.now);
            let th = &mut self.threads[d.waiter as usize];
            th.ready.push_back(d.tag);
            let enough = th.got.len() + th.ready.len() >= th.needed as usize;
            if !enough {
                continue;
            }
            if th.spinning {
                th.spinning = false;
                self.end_spin(
                    d.waiter,
                    Step::Poll,
                    0,
                    Mix::of(Cause::Completion),
                    Step::Reap,
                );
            } else if th.state == TState::Blocked {
                self.enqueue_woken(d.waiter);
                self.path.io_wake(d.waiter);
                let core = self.threads[d.waiter as usize].spec.core as u32;
                if core != poller_core {
                    self.kick(core);
                }
            }
        }
        let mut pass = pass;
        pass.clear();
        if let Some(c) = self.central.as_mut() {
            c.reaping = pass;
        }
    }

    /// Every job thread has finished: a spinning poller stops now.
    pub(crate) fn central_stop(&mut self) {
        let Some(c) = self.central.as_mut() else {
            return;
        };
        if c.spinning {
            c.spinning = false;
            let tid = c.tid;
            self.end_spin(tid, Step::Plan, 0, Mix::of(Cause::Poll), Step::Plan);
        }
    }
}
