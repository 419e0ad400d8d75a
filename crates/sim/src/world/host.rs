//! The host's cores wired to the rest of the simulated host: the CPU
//! ([`crate::cpu`]) decides what each core runs; this module applies its
//! answers to the threads (their state, the I/O path's records), runs what
//! a thread does when its segment ends ([`crate::world::thread`]), and runs the
//! interrupt handler's work: reaping a CQ ([`crate::nvme`]) and handing
//! each completion to its thread.

use policy::{Interrupt, Nanos};

use crate::cause::{Cause, Mix};
use crate::cpu::{Busy, IrqWork, Kind, Next};
use crate::step::Step;
use crate::workload::Waiter;
use crate::world::{RState, TState, World};

impl World {
    /// Starts a segment of the current thread on `core` (charge CPU to
    /// `mix`'s causes).
    pub(crate) fn start_seg(&mut self, core: u32, kind: Kind, mix: Mix, dur: Nanos, then: Step) {
        self.cpu
            .run(core, kind, mix, dur, then, self.now, &mut self.events);
    }

    /// Switches `core` to the best runnable thread, or leaves it idle.
    fn schedule(&mut self, core: u32) {
        let w = self.window();
        // An idling core pays its idle state's exit latency before the
        // thread runs ([`crate::idle`]; 0 with idle states off).
        let exit = if self.cpu.runqueue_empty(core) {
            0
        } else {
            self.idle_exit(core)
        };
        let Some((tid, at)) = self.cpu.switch(core, self.now, w, &mut self.events) else {
            self.idle_enter(core);
            return;
        };
        if exit > 0 {
            self.cpu.lengthen(core, exit, self.now, &mut self.events);
        }
        self.threads[tid as usize].state = TState::Running;
        self.path.switched_in(tid, at + exit);
    }

    /// The current thread leaves the CPU (it blocked, slept or finished).
    pub(crate) fn leave_cpu(&mut self, core: u32) {
        self.cpu.leave(core, self.now, &mut self.events);
        if self.cpu.poll_pending(core) && self.cpu.runqueue_empty(core) {
            // Polled delivery: the idle poller takes what waited.
            self.start_handler(core);
            return;
        }
        self.schedule(core);
    }

    /// The current thread of `core` is done: the core no longer counts it
    /// (its ticks stop with its last thread) and it leaves.
    pub(crate) fn leave_cpu_for_good(&mut self, core: u32) {
        self.cpu.retire(core);
        self.leave_cpu(core);
    }

    /// A spin of thread `tid` ends early ([`crate::cpu::Cpu::end_spin`]).
    pub(crate) fn end_spin(
        &mut self,
        tid: u32,
        spin: Step,
        cost: Nanos,
        mix: Mix,
        then: Step,
    ) -> bool {
        let w = self.window();
        self.cpu
            .end_spin(tid, spin, cost, mix, then, self.now, w, &mut self.events)
    }

    /// The running handler on `core` wakes `tid` when it returns.
    pub(crate) fn wake_by_handler(&mut self, core: u32, tid: u32) {
        self.threads[tid as usize].state = TState::Waking;
        self.cpu.wake_by_handler(core, tid);
    }

    /// Puts the current thread back on the run queue and switches.
    fn preempt(&mut self, core: u32) {
        let w = self.window();
        let tid = self.cpu.preempt(core, self.now, w, &mut self.events);
        self.threads[tid as usize].state = TState::Runnable;
        self.schedule(core);
    }

    /// A segment of the current thread, or the handler, ended.
    pub(crate) fn core_done(&mut self, core: u32) {
        match self.cpu.busy(core) {
            Busy::Thread {
                kind, start, then, ..
            } => {
                if self.cpu.poll_pending(core) {
                    // Polled delivery: the thread's next step takes the
                    // interrupt first (the handler cuts the segment, which
                    // has nothing left, and the thread goes on after it).
                    self.start_handler(core);
                    return;
                }
                let w = self.window();
                let (tid, yields) = self.cpu.segment_done(core, kind, start, self.now, w);
                if yields {
                    // A switch-in that ends (`Resume`) leaves the thread's
                    // saved segments and its `next` as they are: they are
                    // still what it has to do.
                    if then != Step::Resume {
                        self.threads[tid as usize].next = then;
                    }
                    self.preempt(core);
                } else {
                    self.step(tid, then);
                }
            }
            Busy::Irq { start } => self.handler_end(core, start),
            Busy::Idle => unreachable!("an event for an idle core is always stale"),
        }
    }

    /// A thread runs for the first time.
    pub(crate) fn start_thread(&mut self, tid: u32) {
        let th = &mut self.threads[tid as usize];
        if th.state != TState::NotStarted {
            return;
        }
        th.state = TState::Runnable;
        let core = self.cpu.start(tid, self.now, &mut self.events);
        self.kick(core);
    }

    /// A woken thread becomes runnable (wake a thread).
    pub(crate) fn enqueue_woken(&mut self, tid: u32) {
        let w = self.window();
        self.cpu.wake(tid, self.now, w, &mut self.events);
        self.threads[tid as usize].state = TState::Runnable;
        self.path.runnable(tid, self.now);
    }

    /// Lets a core act on a change: run a thread if idle, or preempt.
    pub(crate) fn kick(&mut self, core: u32) {
        match self.cpu.kick(core) {
            Next::Schedule => self.schedule(core),
            Next::Preempt => self.preempt(core),
            Next::Stay => {}
        }
    }

    /// The scheduler tick (CFS check_preempt_tick).
    pub(crate) fn tick(&mut self, core: u32) {
        let live = self.events.any_live();
        if self.cpu.tick(core, self.now, live, &mut self.events) {
            self.preempt(core);
        }
    }

    /// Queues work for the core's interrupt handler, starting it unless it
    /// already runs (raise an interrupt).
    pub(crate) fn raise(&mut self, core: u32, work: IrqWork) {
        if self.cpu.raise(core, work, self.now, &mut self.events) {
            self.start_handler(core);
        }
    }

    /// Polled delivery's fallback handler: an interrupt pending since
    /// `since` on a core kept busy takes the core now.
    pub(crate) fn irq_fallback(&mut self, core: u32, since: Nanos) {
        if self.cpu.fallback_due(core, since) {
            self.start_handler(core);
        }
    }

    /// Runs the next queued handler: interrupts whatever runs on the core,
    /// reaps the CQ and decides whom to wake. Costs irq entry, one
    /// completion's handling per entry reaped and one wake-up per thread
    /// woken.
    fn start_handler(&mut self, core: u32) {
        let w = self.window();
        // An idling core leaves its idle state first ([`crate::idle`]).
        let exit = self.idle_exit(core);
        let work = self.cpu.enter_handler(core, self.now, w, &mut self.events);
        let h = &self.host;
        let entry = h.irq_entry;
        let mut cost = exit + entry;
        let (per_completion, wakeup) = (h.per_completion, h.wakeup);
        // The idle state's exit, the entry, then the completions, then the
        // wake-ups (crate::cause).
        let mut completions = 0;
        match work {
            IrqWork::Device { queue, kind } => {
                let measuring = self.measuring(self.now);
                let mut reaped = std::mem::take(&mut self.scratch);
                reaped.clear();
                self.nvme.reap(queue, kind, &mut reaped);
                if measuring {
                    self.cpu.count_interrupt(core);
                    self.counts.completions += reaped.len() as u64;
                    for r in &reaped {
                        let m = self.requests[r.id as usize].marks;
                        self.counts.by_mark.count(m.urgent, m.barrier);
                    }
                    if kind == Interrupt::UrgentOnly {
                        self.counts.urgent_only += 1;
                    }
                }
                completions = per_completion * reaped.len() as u64;
                cost += completions;
                for r in &reaped {
                    if self.deliver(core, r.id as u32) {
                        cost += wakeup;
                    }
                }
                self.scratch = reaped;
                self.drain_overflow(queue);
            }
            IrqWork::Timer { tid } => {
                self.wake_by_handler(core, tid);
                cost += wakeup;
            }
        }
        let mix = Mix::three(
            Cause::Irq,
            entry,
            Cause::Completion,
            completions,
            Cause::Wakeup,
        )
        .prepend(Cause::IdleExit, exit);
        self.cpu
            .handler_runs(core, cost, mix, self.now, &mut self.events);
    }

    /// Hands one reaped completion to its thread; true if the handler must
    /// wake the thread for it.
    pub(crate) fn deliver(&mut self, core: u32, req: u32) -> bool {
        if let Some(piece) = self.piece(req) {
            return self.deliver_piece(core, req, piece);
        }
        if let Some(io) = self.journal_io(req) {
            return self.deliver_journal(core, req, io);
        }
        let r = &mut self.requests[req as usize];
        if r.state != RState::Posted {
            self.audit.duplicates += 1;
            return false;
        }
        r.state = RState::Delivered;
        self.audit.delivered += 1;
        let tid = r.tid;
        self.path.delivered(req, self.now);
        let defers = self.defers(tid);
        let th = &mut self.threads[tid as usize];
        if defers {
            // DEFER_TASKRUN: on the ring's local list until the thread
            // enters the kernel ([`crate::world::uring`]).
            th.deferred.push_back(req);
        } else {
            th.ready.push_back(req);
        }
        if th.spinning && th.uring_wait.is_some_and(|w| w.spinning()) {
            // SQPOLL: the thread spins on its CQ ring in user space; fio's
            // getevents with iodepth_batch_complete_min=0 re-enters.
            self.uring_spin_post(tid);
            return false;
        }
        let th = &mut self.threads[tid as usize];
        if th.state != TState::Blocked {
            return false;
        }
        let wake = match th.spec.waiter {
            Waiter::Libaio => true,
            Waiter::IoUring if th.spec.uring.is_some() => self.uring_posted(tid),
            Waiter::Blocking | Waiter::IoUring => {
                th.got.len() + th.ready.len() >= th.needed as usize
            }
        };
        if wake {
            self.wake_by_handler(core, tid);
            self.path.io_wake(tid);
        }
        wake
    }

    /// The handler returns: woken threads become runnable, then the next
    /// handler runs, or the interrupted thread resumes unless a woken one
    /// preempts it.
    fn handler_end(&mut self, core: u32, start: Nanos) {
        let w = self.window();
        let woken = self.cpu.handler_returns(core, start, self.now, w);
        for &tid in &woken {
            self.enqueue_woken(tid);
        }
        for &tid in &woken {
            let other = self.threads[tid as usize].spec.core as u32;
            if other != core {
                self.kick(other);
            }
        }
        self.cpu.woken_done(core, woken);
        if self.cpu.handler_pending(core) {
            self.start_handler(core);
            return;
        }
        match self.cpu.after_handler(core, self.now, &mut self.events) {
            Next::Preempt => self.preempt(core),
            Next::Schedule => self.schedule(core),
            Next::Stay => {}
        }
    }
}
