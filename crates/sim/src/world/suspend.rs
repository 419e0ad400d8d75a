//! IRQ suspension of the completion queues (issue 40; `--irq-suspend
//! TIME`, [`host::irq_suspend`]): Linux 6.13's napi mechanism applied to
//! each CQ of the simulated controller.
//!
//! - **The interrupt path** ([`World::suspend_interrupt`], from
//!   [`crate::world::device`]): an interrupt the queue's policy decides on
//!   is delivered and masks the queue with the timer armed; while masked,
//!   the policy's interrupts are held (one pending bit per vector).
//! - **The consumer's pass** ([`World::suspend_pass`], from a waiting
//!   call, [`crate::world::thread`]): a thread whose call has fewer
//!   completions than it needs takes every entry of its queue's CQ once
//!   (`ep_busy_loop`'s one non-blocking iteration), in its own context:
//!   `per_completion` for each entry, as the handler pays, and `wakeup`
//!   for each other thread it wakes; no interrupt entry. Found some: the
//!   queue stays masked, the timer restarts, and the call looks again at
//!   what it has. Found none: the call is about to sleep and the queue
//!   resumes ([`World::suspend_sleep`]), delivering a held interrupt at
//!   once. A call that returns completions restarts the timer too
//!   (`ep_poll`: `ep_send_events` > 0). The empty pass costs nothing here:
//!   reading one CQE's phase bit, not measured (assumed 0).
//! - **The timer** ([`World::suspend_timer`], on the queue's `Deadline`
//!   event, which the policy's own deadline shares harmlessly: each checks
//!   its own time): expired, the queue resumes and a held interrupt is
//!   delivered.
//!
//! Every completion is delivered once: by the handler of a delivered
//! interrupt or by a pass, each taking entries off the CQ (an interrupt
//! whose entries a pass took reaps nothing). None waits in a masked queue
//! beyond the timeout after the policy decided to interrupt for it: held
//! at `t`, the deadline is at most `t + timeout` (restarted only by a pass,
//! which takes it) and the timer delivers it then. The simulator's
//! completions carry no error status (the device model's injected errors
//! are the emulator's), so [`host::irq_suspend::Suspension::error`] has no
//! caller here.
//!
//! The threads that pass: those that wait by interrupt (not a polling
//! thread, whose queue has no vector): fio's blocking and libaio loops, an
//! application model's, an io_uring task in `io_uring_enter(GETEVENTS)`
//! (whose pass also runs what DEFER_TASKRUN deferred, as entering the
//! kernel does). SQPOLL's task never makes such a call: refused
//! ([`refuse_sqpoll`]).

use host::irq_suspend::{Irq, Suspension, Timer};
use policy::{Interrupt, Nanos};

use crate::cause::{Cause, Mix};
use crate::events::Ev;
use crate::world::{Kind, Step, World};

/// Each queue's suspension, and what it did in the measured window.
#[derive(Debug)]
pub(crate) struct Suspend {
    queues: Vec<Queue>,
    pub counts: Counts,
}

#[derive(Debug)]
struct Queue {
    s: Suspension,
    /// The earliest timer event scheduled for this queue, if any.
    scheduled: Option<Nanos>,
}

/// What suspension did in the window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    /// Interrupts the policies decided on while their queue was masked.
    pub held: u64,
    /// Passes over a CQ by a waiting call, and the completions they took.
    pub passes: u64,
    pub found: u64,
    /// Resumes by a sleeping consumer, and by the timer.
    pub sleeps: u64,
    pub expired: u64,
}

impl Suspend {
    /// `queues` queues, each with suspension at `timeout`.
    pub(crate) fn new(queues: usize, timeout: Nanos) -> Suspend {
        Suspend {
            queues: (0..queues)
                .map(|_| Queue {
                    s: Suspension::new(timeout),
                    scheduled: None,
                })
                .collect(),
            counts: Counts::default(),
        }
    }

    pub(crate) fn timeout(&self) -> Nanos {
        self.queues.first().map_or(0, |q| q.s.timeout())
    }
}

impl World {
    /// The policy of queue `q` decided on an interrupt of `kind`: the kind
    /// to raise now, or `None` while the queue is masked (held).
    pub(crate) fn suspend_interrupt(&mut self, q: u32, kind: Interrupt) -> Option<Interrupt> {
        let measuring = self.measuring(self.now);
        let Some(sus) = self.suspend.as_mut() else {
            return Some(kind);
        };
        match sus.queues[q as usize].s.interrupt(self.now, kind) {
            Irq::Deliver(kind) => {
                self.suspend_schedule(q);
                Some(kind)
            }
            Irq::Hold => {
                if measuring {
                    sus.counts.held += 1;
                }
                None
            }
        }
    }

    /// Keeps a timer event scheduled no later than queue `q`'s deadline
    /// (a later deadline is reached through the earlier event).
    fn suspend_schedule(&mut self, q: u32) {
        let Some(sus) = self.suspend.as_mut() else {
            return;
        };
        let queue = &mut sus.queues[q as usize];
        let Some(d) = queue.s.deadline() else {
            return;
        };
        if !matches!(queue.scheduled, Some(t) if t <= d) {
            queue.scheduled = Some(d);
            self.events.push(d, Ev::Deadline { queue: q });
        }
    }

    /// Queue `q`'s `Deadline` event at `now`: the suspension's timer, if
    /// due, resumes the queue and raises what it held.
    pub(crate) fn suspend_timer(&mut self, q: u32, now: Nanos) {
        let measuring = self.measuring(now);
        let Some(sus) = self.suspend.as_mut() else {
            return;
        };
        let queue = &mut sus.queues[q as usize];
        if queue.scheduled != Some(now) {
            return; // the policy's own deadline, or a stale one
        }
        queue.scheduled = None;
        match queue.s.timer(now) {
            Timer::Stale => {}
            Timer::Later(_) => self.suspend_schedule(q),
            Timer::Expired(held) => {
                if measuring {
                    sus.counts.expired += 1;
                }
                self.suspend_raise(q, held);
            }
        }
    }

    /// Raises a held interrupt of queue `q` on its core (it masks the
    /// queue again, as any delivered interrupt does).
    fn suspend_raise(&mut self, q: u32, held: Option<Interrupt>) {
        if let Some(kind) = held {
            if let Some(kind) = self.suspend_interrupt(q, kind) {
                let core = self.nvme.irq_cores()[q as usize];
                self.raise(core, crate::cpu::IrqWork::Device { queue: q, kind });
            }
        }
    }

    /// Whether `tid`'s waiting calls pass over its CQ (module docs): not
    /// a polling thread's (its queue has no vector), nor an io_uring task
    /// that spins instead of entering a wait (SQPOLL, refused beside
    /// suspension by [`refuse_sqpoll`]; IOPOLL polls).
    fn passes(&self, tid: u32) -> bool {
        self.suspend.is_some() && !self.polling(tid) && !self.uring(tid).is_some_and(|s| s.spins())
    }

    /// `tid`'s waiting call needs more than it has: one pass over its
    /// queue's CQ. True if the pass found entries: the call goes on after
    /// the pass's cost ([`Step::Reap`] again); false if it found none (the
    /// call then sleeps: [`World::suspend_sleep`]).
    pub(crate) fn suspend_pass(&mut self, tid: u32, core: u32) -> bool {
        if !self.passes(tid) {
            return false;
        }
        let q = self.threads[tid as usize].queue;
        let mut reaped = std::mem::take(&mut self.scratch);
        reaped.clear();
        self.nvme.reap(q, Interrupt::Full, &mut reaped);
        let found = reaped.len() as u32;
        let measuring = self.measuring(self.now);
        let sus = self.suspend.as_mut().expect("passes");
        sus.queues[q as usize].s.polled(self.now, found, true);
        if measuring {
            sus.counts.passes += 1;
            sus.counts.found += found as u64;
        }
        if found == 0 {
            self.scratch = reaped;
            return false;
        }
        self.suspend_schedule(q);
        for r in &reaped {
            self.deliver(core, r.id as u32);
        }
        self.scratch = reaped;
        // In the kernel, the call runs what DEFER_TASKRUN deferred (as
        // io_uring_enter does on entry, [`crate::world::uring`]).
        self.run_deferred(tid);
        // `deliver` queued its wake-ups for a handler's end; no handler
        // runs on this core (its thread does): they happen now.
        let woken = self.cpu.take_waking(core);
        let wakeups = woken.len() as u64;
        for &other in &woken {
            self.enqueue_woken(other);
            let c = self.threads[other as usize].spec.core as u32;
            if c != core {
                self.kick(c);
            }
        }
        self.cpu.woken_done(core, woken);
        self.drain_overflow(q);
        let completions = self.host.per_completion * found as u64;
        let cost = completions + self.host.wakeup * wakeups;
        let mix = Mix::two(Cause::Completion, completions, Cause::Wakeup);
        self.start_seg(core, Kind::Kernel, mix, cost, Step::Reap);
        true
    }

    /// `tid`'s waiting call found nothing and sleeps: its queue resumes,
    /// raising what it held.
    pub(crate) fn suspend_sleep(&mut self, tid: u32) {
        if !self.passes(tid) {
            return;
        }
        let q = self.threads[tid as usize].queue;
        let measuring = self.measuring(self.now);
        let sus = self.suspend.as_mut().expect("passes");
        let queue = &mut sus.queues[q as usize];
        if measuring && queue.s.suspended() {
            sus.counts.sleeps += 1;
        }
        let held = queue.s.sleep();
        self.suspend_raise(q, held);
    }

    /// `tid`'s waiting call returns `n` completions: the timer restarts
    /// (`ep_poll`'s `ep_suspend_napi_irqs` when `ep_send_events` > 0).
    pub(crate) fn suspend_returned(&mut self, tid: u32, n: usize) {
        if n == 0 || !self.passes(tid) {
            return;
        }
        let q = self.threads[tid as usize].queue;
        let sus = self.suspend.as_mut().expect("passes");
        sus.queues[q as usize].s.polled(self.now, n as u32, false);
        self.suspend_schedule(q);
    }

    /// What suspension did, for the run's notes; `None` when off.
    pub(crate) fn suspend_counts(&self) -> Option<(Nanos, Counts)> {
        self.suspend.as_ref().map(|s| (s.timeout(), s.counts))
    }
}

/// SQPOLL's task never enters a reaping call (it spins on its CQ ring in
/// user space, and its SQ thread submits): no consumer to find its
/// completions, so a masked queue would hold its interrupts until every
/// timeout. Refused in one line naming both.
pub(crate) fn refuse_sqpoll(
    suspend: host::irq_suspend::IrqSuspend,
    threads: &[crate::workload::ThreadSpec],
) -> Result<(), String> {
    let sq = threads
        .iter()
        .any(|t| t.uring.is_some_and(|s| s.sq_thread()));
    match suspend {
        host::irq_suspend::IrqSuspend::Timeout(_) if sq => Err(format!(
            "--irq-suspend {suspend} cannot be used with io_uring's SQPOLL (sqthread_poll=1 or --uring sqpoll): its task spins on its CQ ring in user space and never makes the reaping call that finds completions while the queue is masked"
        )),
        _ => Ok(()),
    }
}
