//! The host's cores: CPU time accounting, applying the CFS-like scheduler's
//! decisions ([`crate::sched`]), and the interrupt handler.
//!
//! Interrupt time is charged to the core, not to the interrupted thread's
//! vruntime (CONFIG_IRQ_TIME_ACCOUNTING). A thread stays on the core it
//! started on (no load balancing).

use policy::{Interrupt, Nanos};

use crate::events::Ev;
use crate::profile::{IrqTaken, Preemption};
use crate::workload::Waiter;
use crate::world::{Busy, IrqWork, Kind, RState, Seg, Step, TState, World};

impl World {
    /// Starts a segment of the current thread on `core`.
    pub(crate) fn start_seg(&mut self, core: u32, kind: Kind, dur: Nanos, then: Step) {
        let c = &mut self.cores[core as usize];
        c.gen = c.gen.wrapping_add(1);
        c.busy = Busy::Thread {
            kind,
            start: self.now,
            end: self.now + dur,
            then,
        };
        let gen = c.gen;
        self.events.push(self.now + dur, Ev::CoreDone { core, gen });
    }

    /// Charges `[from, now)` of thread work on `core` to the core, the
    /// current thread and its vruntime.
    pub(crate) fn charge(&mut self, core: u32, kind: Kind, from: Nanos) {
        let measured = self.clip(from, self.now);
        let ran = self.now - from;
        let c = &mut self.cores[core as usize];
        let tid = c.current.expect("thread work without a thread") as usize;
        let th = &mut self.threads[tid];
        match kind {
            Kind::User => {
                c.time.user += measured;
                th.usr += measured;
            }
            Kind::Kernel => {
                c.time.kernel += measured;
                th.sys += measured;
            }
            Kind::Spin => {
                c.time.kernel += measured;
                th.sys += measured;
                th.spun += measured;
            }
        }
        th.vruntime += ran;
        th.sum_exec += ran;
    }

    fn charge_idle(&mut self, core: u32) {
        let idle = self.clip(self.cores[core as usize].idle_since, self.now);
        self.cores[core as usize].time.idle += idle;
    }

    /// The running thread's vruntime including the part of its segment not
    /// yet charged.
    fn current_vruntime(&self, core: u32) -> Option<Nanos> {
        let c = &self.cores[core as usize];
        let tid = c.current?;
        let running = match c.busy {
            Busy::Thread { start, .. } => self.now - start,
            _ => 0,
        };
        Some(self.threads[tid as usize].vruntime + running)
    }

    /// Switches `core` to the best runnable thread, or leaves it idle.
    fn schedule(&mut self, core: u32) {
        let Some((tid, _)) = self.cores[core as usize].rq.pick() else {
            return;
        };
        if matches!(self.cores[core as usize].busy, Busy::Idle) {
            self.charge_idle(core);
        }
        let measuring = self.measuring(self.now);
        let c = &mut self.cores[core as usize];
        c.current = Some(tid);
        let th = &mut self.threads[tid as usize];
        // A new address space costs more than a thread of the one held.
        let process = th.spec.process;
        let cost = if th.spec.kthread {
            // A kernel thread borrows the address space it finds (active_mm).
            self.host.context_switch
        } else {
            match c.mm.replace(process) {
                Some(mm) if mm != process => self.host.process_switch(),
                _ => self.host.context_switch,
            }
        };
        th.state = TState::Running;
        th.exec_at_switch_in = th.sum_exec;
        self.path.switched_in(tid, self.now + cost);
        if measuring {
            th.ctx += 1;
            self.context_switches += 1;
            self.cores[core as usize].ctx += 1;
        }
        self.start_seg(core, Kind::Kernel, cost, Step::Resume);
    }

    /// The current thread leaves the CPU (it blocked, slept or finished).
    pub(crate) fn leave_cpu(&mut self, core: u32) {
        if let Some((tid, v)) = self.cores[core as usize]
            .current
            .zip(self.current_vruntime(core))
        {
            // EEVDF keeps the sleeper's lag for its return.
            self.cores[core as usize].rq.sleep(tid, v);
        }
        let c = &mut self.cores[core as usize];
        c.current = None;
        c.busy = Busy::Idle;
        c.idle_since = self.now;
        c.gen = c.gen.wrapping_add(1);
        self.events.cancel_core_done(core);
        if self.poll_pending(core) && self.cores[core as usize].rq.is_empty() {
            // Polled delivery: the idle poller takes what waited.
            self.start_handler(core);
            return;
        }
        self.schedule(core);
    }

    /// The current thread of `core` is done: the core no longer counts it
    /// (its ticks stop with its last thread) and it leaves.
    pub(crate) fn leave_cpu_for_good(&mut self, core: u32) {
        self.cores[core as usize].threads -= 1;
        self.leave_cpu(core);
    }

    /// A spin of thread `tid` (its segment ending in `spin`) ends early:
    /// what is left of it becomes a kernel segment of `cost` ending in
    /// `then`, now if it runs, else when it is resumed (a handler or a
    /// preemption cut it short). False if the thread has no such spin.
    pub(crate) fn end_spin(&mut self, tid: u32, spin: Step, cost: Nanos, then: Step) -> bool {
        let core = self.threads[tid as usize].spec.core as u32;
        let c = &self.cores[core as usize];
        match c.busy {
            Busy::Thread {
                kind,
                start,
                then: t,
                ..
            } if t == spin && c.current == Some(tid) => {
                self.charge(core, kind, start);
                self.start_seg(core, Kind::Kernel, cost, then);
                true
            }
            _ => {
                let th = &mut self.threads[tid as usize];
                let Some(seg) = th.saved.iter_mut().rev().find(|s| s.then == spin) else {
                    return false;
                };
                seg.kind = Kind::Kernel;
                seg.remaining = cost;
                seg.then = then;
                true
            }
        }
    }

    /// The running handler on `core` wakes `tid` when it returns.
    pub(crate) fn wake_by_handler(&mut self, core: u32, tid: u32) {
        self.threads[tid as usize].state = TState::Waking;
        self.cores[core as usize].waking.push(tid);
    }

    /// Cuts the running thread segment short, saving what is left of it.
    fn cut_short(&mut self, core: u32) {
        if let Busy::Thread {
            kind,
            start,
            end,
            then,
        } = self.cores[core as usize].busy
        {
            self.charge(core, kind, start);
            let tid = self.cores[core as usize].current.expect("thread work") as usize;
            self.threads[tid].saved.push(Seg {
                kind,
                remaining: end - self.now,
                then,
            });
            let c = &mut self.cores[core as usize];
            c.busy = Busy::Idle;
            c.gen = c.gen.wrapping_add(1);
            self.events.cancel_core_done(core);
        }
    }

    /// Puts the current thread back on the run queue and switches.
    fn preempt(&mut self, core: u32) {
        self.cut_short(core);
        let c = &mut self.cores[core as usize];
        let tid = c.current.take().expect("preempting nothing");
        c.rq.enqueue(tid, self.threads[tid as usize].vruntime);
        self.threads[tid as usize].state = TState::Runnable;
        // The core was busy up to now: no idle time between the two.
        self.cores[core as usize].idle_since = self.now;
        self.schedule(core);
    }

    /// A segment of the current thread, or the handler, ended.
    pub(crate) fn core_done(&mut self, core: u32) {
        match self.cores[core as usize].busy {
            Busy::Thread {
                kind, start, then, ..
            } => {
                if self.poll_pending(core) {
                    // Polled delivery: the thread's next step takes the
                    // interrupt first (the handler cuts the segment, which
                    // has nothing left, and the thread goes on after it).
                    self.start_handler(core);
                    return;
                }
                self.charge(core, kind, start);
                let tid = self.cores[core as usize].current.expect("thread work");
                self.cores[core as usize].busy = Busy::Idle;
                if self.cores[core as usize].rq.need_resched() && self.better_waiting(core) {
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

    /// Whether a runnable thread should take the CPU from the current one.
    fn better_waiting(&self, core: u32) -> bool {
        let c = &self.cores[core as usize];
        let current = c.current.zip(self.current_vruntime(core));
        c.rq.better_waiting(current)
    }

    /// A thread runs for the first time.
    pub(crate) fn start_thread(&mut self, tid: u32) {
        let th = &mut self.threads[tid as usize];
        if th.state != TState::NotStarted {
            return;
        }
        let core = th.spec.core as u32;
        th.state = TState::Runnable;
        let rq = &mut self.cores[core as usize].rq;
        th.vruntime = rq.min_vruntime();
        rq.start(tid, th.vruntime);
        if !self.cores[core as usize].ticking {
            self.cores[core as usize].ticking = true;
            self.cores[core as usize].tick_origin = self.now;
            self.events
                .push(self.now + self.host.tick, Ev::Tick { core });
        }
        self.kick(core);
    }

    /// A woken thread becomes runnable (CFS place_entity and
    /// check_preempt_wakeup).
    pub(crate) fn enqueue_woken(&mut self, tid: u32) {
        let core = self.threads[tid as usize].spec.core as u32;
        let current = self.cores[core as usize]
            .current
            .zip(self.current_vruntime(core));
        let current =
            current.map(|(cur, v)| (cur, v, self.threads[cur as usize].spec.job.critical));
        let measuring = self.measuring(self.now);
        let th = &mut self.threads[tid as usize];
        let critical = th.spec.job.critical;
        th.vruntime =
            self.cores[core as usize]
                .rq
                .wake(tid, th.vruntime, critical, current, &self.sched);
        th.state = TState::Runnable;
        if measuring {
            th.wakeups += 1;
        }
        self.path.runnable(tid, self.now);
        self.resume_ticks(core);
    }

    /// Restarts the ticks of a core whose ticks stopped while it idled, on
    /// the same grid: the next tick is where it would have been, as if the
    /// idle ticks (which do nothing) had run.
    fn resume_ticks(&mut self, core: u32) {
        let c = &mut self.cores[core as usize];
        if c.ticking || c.threads == 0 {
            return;
        }
        c.ticking = true;
        let tick = self.host.tick;
        let next = c.tick_origin + ((self.now - c.tick_origin) / tick + 1) * tick;
        self.events.push(next, Ev::Tick { core });
    }

    /// Lets a core act on a change: run a thread if idle, or preempt.
    pub(crate) fn kick(&mut self, core: u32) {
        let c = &self.cores[core as usize];
        match c.busy {
            Busy::Idle if c.current.is_none() => self.schedule(core),
            Busy::Thread { kind, .. } if c.rq.need_resched() && self.preemptible(kind) => {
                self.preempt(core)
            }
            _ => {}
        }
    }

    /// Whether a thread running a segment of `kind` may be preempted now.
    /// Under PREEMPT_VOLUNTARY a kernel path runs on to its end (the
    /// segment's end: the return to user space or a schedule point), where
    /// [`World::core_done`] takes the pending resched.
    fn preemptible(&self, kind: Kind) -> bool {
        kind == Kind::User || self.host.preemption == Preemption::Full
    }

    /// The scheduler tick (CFS check_preempt_tick).
    pub(crate) fn tick(&mut self, core: u32) {
        let c = &self.cores[core as usize];
        // Ticks stop with the threads, or when nothing else is scheduled (a
        // thread stuck forever must end the run, for the audit to see it).
        if c.threads == 0 || !self.events.any_live() {
            self.cores[core as usize].ticking = false;
            return;
        }
        // An idle core stops ticking until a thread wakes on it (Linux's
        // NO_HZ idle): a run's events then grow with its I/Os, not with its
        // virtual time (a device taking seconds a command would otherwise
        // tick millions of times in between).
        if c.current.is_none() && c.rq.is_empty() && matches!(c.busy, Busy::Idle) {
            self.cores[core as usize].ticking = false;
            return;
        }
        self.events
            .push(self.now + self.host.tick, Ev::Tick { core });
        let Some(tid) = c.current else { return };
        if c.rq.is_empty() || !matches!(c.busy, Busy::Thread { .. }) {
            return;
        }
        let cur = self.current_vruntime(core).expect("current");
        let th = &self.threads[tid as usize];
        let ran = th.sum_exec + (cur - th.vruntime) - th.exec_at_switch_in;
        let busy = c.busy;
        if self.cores[core as usize]
            .rq
            .slice_used(tid, ran, cur, &self.sched)
        {
            match busy {
                Busy::Thread { kind, .. } if !self.preemptible(kind) => {
                    self.cores[core as usize].rq.request_resched();
                }
                _ => self.preempt(core),
            }
        }
    }

    /// Queues work for the core's interrupt handler, starting it unless it
    /// already runs. A device interrupt already pending for the same queue
    /// absorbs the new one (one MSI-X pending bit per vector).
    pub(crate) fn raise(&mut self, core: u32, work: IrqWork) {
        let merge = self.host.irq_delivery == crate::profile::IrqDelivery::Apic;
        let polled = self.host.irq_taken == IrqTaken::Poll;
        let c = &mut self.cores[core as usize];
        if let (true, IrqWork::Device { queue, kind }) = (merge, work) {
            for w in c.pending.iter_mut() {
                if let IrqWork::Device { queue: q, kind: k } = w {
                    if *q == queue {
                        if kind == Interrupt::Full {
                            *k = Interrupt::Full;
                        }
                        return;
                    }
                }
            }
        }
        c.pending.push_back(work);
        if polled && matches!(work, IrqWork::Device { .. }) && matches!(c.busy, Busy::Thread { .. })
        {
            // Polled delivery: the running thread takes it at its
            // segment's end, or the fallback handler after a while.
            if c.deferred_since.is_none() {
                c.deferred_since = Some(self.now);
                let at = self.now + self.host.irq_poll_fallback;
                let since = self.now;
                self.events.push(at, Ev::IrqFallback { core, since });
            }
            return;
        }
        if !matches!(c.busy, Busy::Irq { .. }) {
            self.start_handler(core);
        }
    }

    /// Polled delivery's fallback handler: an interrupt pending since
    /// `since` on a core kept busy takes the core now (the emulator's
    /// SCHED_FIFO handler, woken after `POLL_FALLBACK`).
    pub(crate) fn irq_fallback(&mut self, core: u32, since: Nanos) {
        let c = &self.cores[core as usize];
        if c.deferred_since == Some(since) && !matches!(c.busy, Busy::Irq { .. }) {
            self.start_handler(core);
        }
    }

    /// Polled delivery: device interrupts wait on this core for a poll
    /// point (the running thread's next step, or the core's idling).
    fn poll_pending(&self, core: u32) -> bool {
        self.host.irq_taken == IrqTaken::Poll && self.cores[core as usize].deferred_since.is_some()
    }

    /// Runs the next queued handler: interrupts whatever runs on the core,
    /// reaps the CQ and decides whom to wake. Costs irq entry, one
    /// completion's handling per entry reaped and one wake-up per thread
    /// woken.
    fn start_handler(&mut self, core: u32) {
        // Whatever waited is taken now: this handler and the ones queued
        // behind it run before the core returns to its thread.
        self.cores[core as usize].deferred_since = None;
        let work = self.cores[core as usize]
            .pending
            .pop_front()
            .expect("handler without work");
        match self.cores[core as usize].busy {
            Busy::Thread { .. } => self.cut_short(core),
            Busy::Idle => self.charge_idle(core),
            Busy::Irq { .. } => {}
        }
        let h = &self.host;
        let mut cost = h.irq_entry;
        let (per_completion, wakeup) = (h.per_completion, h.wakeup);
        match work {
            IrqWork::Device { queue, kind } => {
                let measuring = self.measuring(self.now);
                let mut reaped = std::mem::take(&mut self.scratch);
                reaped.clear();
                self.nvme.reap(queue, kind, &mut reaped);
                if measuring {
                    self.interrupts += 1;
                    self.cores[core as usize].irqs += 1;
                    self.completions += reaped.len() as u64;
                    for r in &reaped {
                        let m = self.requests[r.id as usize].marks;
                        self.by_mark.count(m.urgent, m.barrier);
                    }
                    if kind == Interrupt::UrgentOnly {
                        self.urgent_only += 1;
                    }
                }
                cost += per_completion * reaped.len() as u64;
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
        let c = &mut self.cores[core as usize];
        c.busy = Busy::Irq { start: self.now };
        c.gen = c.gen.wrapping_add(1);
        let gen = c.gen;
        self.events
            .push(self.now + cost, Ev::CoreDone { core, gen });
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
            // enters the kernel ([`crate::uring`]).
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
        let irq = self.clip(start, self.now);
        self.cores[core as usize].time.irq += irq;
        let woken = std::mem::take(&mut self.cores[core as usize].waking);
        for &tid in &woken {
            self.enqueue_woken(tid);
        }
        for &tid in &woken {
            let other = self.threads[tid as usize].spec.core as u32;
            if other != core {
                self.kick(other);
            }
        }
        let mut woken = woken;
        woken.clear();
        self.cores[core as usize].waking = woken;
        if !self.cores[core as usize].pending.is_empty() {
            self.start_handler(core);
            return;
        }
        self.cores[core as usize].busy = Busy::Idle;
        let c = &self.cores[core as usize];
        // The interrupted segment, which resumes unless a woken thread may
        // preempt it now.
        let kind = c
            .current
            .and_then(|tid| self.threads[tid as usize].saved.last())
            .map(|seg| seg.kind);
        match c.current {
            Some(_)
                if c.rq.need_resched()
                    && kind.is_some_and(|k| self.preemptible(k))
                    && self.better_waiting(core) =>
            {
                self.cores[core as usize].idle_since = self.now;
                self.preempt(core);
            }
            Some(tid) => {
                let seg = self.threads[tid as usize]
                    .saved
                    .pop()
                    .expect("an interrupted thread has a saved segment");
                self.start_seg(core, seg.kind, seg.remaining, seg.then);
            }
            None => {
                self.cores[core as usize].idle_since = self.now;
                self.schedule(core);
            }
        }
    }
}
