//! The host's cores as one mechanism: what each core runs (a thread's
//! segment of CPU work, the interrupt handler, or nothing), its run queue
//! and wake-up rule ([`crate::sched`]: CFS, FastResponse's rules or
//! EEVDF), its ticks, the interrupt work queued for its handler, and each
//! thread's scheduling entity (vruntime, the segments an interrupt or a
//! preemption cut short) and CPU time.
//!
//! The CPU owns this state; the rest of the host reaches it through its
//! calls: run a segment (charge CPU), wake a thread, raise an interrupt,
//! leave the CPU, and the scheduler's questions (preempt now?). What a
//! thread does when its segment ends, and what the handler reaps, are not
//! the CPU's: it hands back the thread's [`Step`], or asks the host
//! ([`crate::world::host`] wires the two).
//!
//! Interrupt time is charged to the core, not to the interrupted thread's
//! vruntime (CONFIG_IRQ_TIME_ACCOUNTING). A thread stays on the core it
//! started on (no load balancing).

use std::collections::VecDeque;

use policy::{Interrupt, Nanos};

use crate::cause::{ByCause, Cause, Mix};
use crate::events::{Ev, Events};
use crate::profile::{IrqDelivery, IrqTaken, Preemption};
use crate::sched::{RunQueue, Tunables};
use crate::step::Step;
use crate::HostProfile;

/// What a CPU segment counts as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    User,
    Kernel,
    /// Kernel time spinning on a polled queue ([`Step::Poll`]): system
    /// time, also counted apart ([`Account::spun`]).
    Spin,
    /// Kernel work with a `cond_resched()` at every page: the page cache's
    /// copy of a buffered write (Linux 5.3.7 mm/filemap.c
    /// `generic_perform_write` calls `cond_resched()` after each page's
    /// `write_end`). System time, preemptible under any preemption model:
    /// a pending resched is taken at the next page boundary, which we
    /// take as at once (one 4 KiB page is 1.2 us at the Xeons'
    /// `buffered_write_per_kib`, 300 ns).
    KernelResched,
}

/// A thread's CPU work, possibly cut short by an interrupt or preemption.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Seg {
    pub kind: Kind,
    pub remaining: Nanos,
    pub then: Step,
    /// What is left of its causes ([`crate::cause`]).
    pub mix: Mix,
}

/// Work queued for a core's interrupt handler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IrqWork {
    /// The device interrupts for a completion queue.
    Device { queue: u32, kind: Interrupt },
    /// A timer expires and wakes a sleeping thread.
    Timer { tid: u32 },
}

/// What occupies a core right now.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Busy {
    Idle,
    /// The current thread runs a segment.
    Thread {
        kind: Kind,
        start: Nanos,
        end: Nanos,
        then: Step,
    },
    /// The interrupt handler runs (the current thread, if any, is cut short
    /// and its segment saved).
    Irq {
        start: Nanos,
    },
}

/// A core's time in the measured window, ns.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct CoreTime {
    pub user: Nanos,
    pub kernel: Nanos,
    pub irq: Nanos,
    pub idle: Nanos,
    /// `user + kernel + irq` by cause ([`crate::cause`]).
    pub by_cause: ByCause,
}

#[derive(Debug)]
struct Core {
    busy: Busy,
    gen: u32,
    /// The thread owning the CPU (possibly cut short by the handler).
    current: Option<u32>,
    /// Its runnable threads and the scheduler's state (crate::sched).
    rq: RunQueue,
    pending: VecDeque<IrqWork>,
    /// Threads the running handler wakes when it ends.
    waking: Vec<u32>,
    /// The causes of the running thread segment ([`Busy::Thread`]) and of
    /// the running handler (kept beside `busy`, which stays small).
    seg_mix: Mix,
    irq_mix: Mix,
    idle_since: Nanos,
    time: CoreTime,
    threads: u32,
    ticking: bool,
    /// When the core's ticks started: they fall on `tick_origin + k * tick`.
    tick_origin: Nanos,
    /// The process whose address space the core holds: the last thread's
    /// that ran (idle keeps it, Linux's lazy TLB).
    mm: Option<u32>,
    /// Device interrupts taken and threads switched in, in the window.
    irqs: u64,
    ctx: u64,
    /// Polled delivery ([`IrqTaken::Poll`]): since when a device interrupt
    /// has waited for the busy core.
    deferred_since: Option<Nanos>,
}

/// A thread as the CPU needs to know it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct EntitySpec {
    pub core: u32,
    /// Its process (a switch between processes costs more).
    pub process: u32,
    /// A kernel thread borrows the address space it finds.
    pub kthread: bool,
    /// FastResponse's critical thread (the wake-up rules that favour it).
    pub critical: bool,
}

/// A thread's CPU time in the measured window, and its switches and
/// wake-ups there.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Account {
    pub usr: Nanos,
    pub sys: Nanos,
    /// Spinning on a polled queue (part of `sys`).
    pub spun: Nanos,
    pub ctx: u64,
    /// Times it was made runnable after sleeping.
    pub wakeups: u64,
}

/// A thread's scheduling entity.
#[derive(Debug)]
struct Entity {
    spec: EntitySpec,
    vruntime: Nanos,
    sum_exec: Nanos,
    /// `sum_exec` when it was last switched in (for the slice check).
    exec_at_switch_in: Nanos,
    /// Segments an interrupt or preemption cut short, finished (last first)
    /// when the thread runs again. At most two: a cut segment, and the
    /// context switch back to it, cut short in turn.
    saved: Vec<Seg>,
    account: Account,
}

/// The host profile's costs and choices the cores apply.
#[derive(Clone, Copy, Debug)]
struct Costs {
    context_switch: Nanos,
    process_switch: Nanos,
    tick: Nanos,
    preemption: Preemption,
    /// A device interrupt pending for a queue absorbs the next (APIC).
    merge_irqs: bool,
    /// Device interrupts wait for a poll point ([`IrqTaken::Poll`]).
    polled_irqs: bool,
    irq_poll_fallback: Nanos,
}

/// What a core does after a segment ended with a better thread waiting,
/// or after its handler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// Nothing to change.
    Stay,
    /// Switch to the best runnable thread, if any ([`crate::world::host`]'s
    /// `schedule`).
    Schedule,
    /// Put the current thread back on the run queue and switch.
    Preempt,
}

/// The measured window, to clip what is charged: `[from, to)`.
pub(crate) type Window = (Nanos, Nanos);

fn clip((from_w, to_w): Window, from: Nanos, to: Nanos) -> Nanos {
    to.min(to_w).saturating_sub(from.max(from_w))
}

fn measuring((from, to): Window, t: Nanos) -> bool {
    t >= from && t < to
}

pub(crate) struct Cpu {
    cores: Vec<Core>,
    entities: Vec<Entity>,
    tunables: Tunables,
    costs: Costs,
}

impl Cpu {
    /// The cores of `host`, with `threads` (by thread number) to run.
    pub(crate) fn new(host: &HostProfile, threads: impl Iterator<Item = EntitySpec>) -> Cpu {
        let cores = (0..host.cores)
            .map(|_| Core {
                busy: Busy::Idle,
                gen: 0,
                current: None,
                rq: RunQueue::with_rule(host.wakeup_rule, host.cores, host.tick),
                pending: VecDeque::new(),
                waking: Vec::new(),
                seg_mix: Mix::of(Cause::User),
                irq_mix: Mix::of(Cause::Irq),
                idle_since: 0,
                time: CoreTime::default(),
                threads: 0,
                ticking: false,
                tick_origin: 0,
                mm: None,
                irqs: 0,
                ctx: 0,
                deferred_since: None,
            })
            .collect();
        let entities = threads
            .map(|spec| Entity {
                spec,
                vruntime: 0,
                sum_exec: 0,
                exec_at_switch_in: 0,
                saved: Vec::with_capacity(2),
                account: Account::default(),
            })
            .collect();
        Cpu {
            cores,
            entities,
            tunables: Tunables::of(host),
            costs: Costs {
                context_switch: host.context_switch,
                process_switch: host.process_switch(),
                tick: host.tick,
                preemption: host.preemption,
                merge_irqs: host.irq_delivery == IrqDelivery::Apic,
                polled_irqs: host.irq_taken == IrqTaken::Poll,
                irq_poll_fallback: host.irq_poll_fallback,
            },
        }
    }

    /// A thread that will run on `core`: the core ticks while it has some.
    pub(crate) fn count_thread(&mut self, core: usize) {
        self.cores[core].threads += 1;
    }

    pub(crate) fn busy(&self, core: u32) -> Busy {
        self.cores[core as usize].busy
    }

    /// Whether an end-of-work event of generation `gen` is still `core`'s.
    pub(crate) fn is_current(&self, core: u32, gen: u32) -> bool {
        self.cores[core as usize].gen == gen
    }

    pub(crate) fn time(&self, core: usize) -> CoreTime {
        self.cores[core].time
    }

    /// Device interrupts taken and threads switched in on `core`, in the
    /// window.
    pub(crate) fn counts(&self, core: usize) -> (u64, u64) {
        let c = &self.cores[core];
        (c.irqs, c.ctx)
    }

    /// Device interrupts the handlers took in the window, every core's.
    pub(crate) fn interrupts(&self) -> u64 {
        self.cores.iter().map(|c| c.irqs).sum()
    }

    /// Threads switched in in the window, every core's.
    pub(crate) fn context_switches(&self) -> u64 {
        self.cores.iter().map(|c| c.ctx).sum()
    }

    pub(crate) fn account(&self, tid: u32) -> &Account {
        &self.entities[tid as usize].account
    }

    /// Starts a segment of the current thread on `core`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run(
        &mut self,
        core: u32,
        kind: Kind,
        mix: Mix,
        dur: Nanos,
        then: Step,
        now: Nanos,
        events: &mut Events,
    ) {
        let c = &mut self.cores[core as usize];
        c.gen = c.gen.wrapping_add(1);
        c.busy = Busy::Thread {
            kind,
            start: now,
            end: now + dur,
            then,
        };
        c.seg_mix = mix;
        let gen = c.gen;
        events.push(now + dur, Ev::CoreDone { core, gen });
    }

    /// Charges `[from, now)` of thread work on `core` (the segment it
    /// runs) to the core, its causes, the current thread and its vruntime.
    fn charge(&mut self, core: u32, kind: Kind, from: Nanos, now: Nanos, w: Window) {
        let measured = clip(w, from, now);
        let ran = now - from;
        let c = &mut self.cores[core as usize];
        if measured > 0 {
            let a = w.0.saturating_sub(from);
            c.seg_mix.charge(&mut c.time.by_cause, a, a + measured);
        }
        let tid = c.current.expect("thread work without a thread") as usize;
        let e = &mut self.entities[tid];
        let a = &mut e.account;
        match kind {
            Kind::User => {
                c.time.user += measured;
                a.usr += measured;
            }
            Kind::Kernel | Kind::KernelResched => {
                c.time.kernel += measured;
                a.sys += measured;
            }
            Kind::Spin => {
                c.time.kernel += measured;
                a.sys += measured;
                a.spun += measured;
            }
        }
        e.vruntime += ran;
        e.sum_exec += ran;
    }

    fn charge_idle(&mut self, core: u32, now: Nanos, w: Window) {
        let c = &mut self.cores[core as usize];
        c.time.idle += clip(w, c.idle_since, now);
    }

    /// Closes the books at `now`: an idle core's idle time so far.
    pub(crate) fn close(&mut self, now: Nanos, w: Window) {
        for c in 0..self.cores.len() as u32 {
            if matches!(self.cores[c as usize].busy, Busy::Idle) {
                self.charge_idle(c, now, w);
                self.cores[c as usize].idle_since = now;
            }
        }
    }

    /// The running thread's vruntime including the part of its segment not
    /// yet charged.
    fn current_vruntime(&self, core: u32, now: Nanos) -> Option<Nanos> {
        let c = &self.cores[core as usize];
        let tid = c.current?;
        let running = match c.busy {
            Busy::Thread { start, .. } => now - start,
            _ => 0,
        };
        Some(self.entities[tid as usize].vruntime + running)
    }

    /// Switches `core` to the best runnable thread, which starts with the
    /// switch's cost (a new address space costs more than a thread of the
    /// one held); `None` leaves it idle. Returns the thread and when it
    /// runs.
    pub(crate) fn switch(
        &mut self,
        core: u32,
        now: Nanos,
        w: Window,
        events: &mut Events,
    ) -> Option<(u32, Nanos)> {
        let (tid, _) = self.cores[core as usize].rq.pick()?;
        if matches!(self.cores[core as usize].busy, Busy::Idle) {
            self.charge_idle(core, now, w);
        }
        let c = &mut self.cores[core as usize];
        c.current = Some(tid);
        let e = &mut self.entities[tid as usize];
        let process = e.spec.process;
        let cost = if e.spec.kthread {
            // A kernel thread borrows the address space it finds (active_mm).
            self.costs.context_switch
        } else {
            match c.mm.replace(process) {
                Some(mm) if mm != process => self.costs.process_switch,
                _ => self.costs.context_switch,
            }
        };
        e.exec_at_switch_in = e.sum_exec;
        if measuring(w, now) {
            e.account.ctx += 1;
            c.ctx += 1;
        }
        let mix = Mix::of(Cause::Switch);
        self.run(core, Kind::Kernel, mix, cost, Step::Resume, now, events);
        Some((tid, now + cost))
    }

    /// The running segment on `core` ends `extra` later (an idle state's
    /// exit latency paid before it, [`crate::idle`]).
    pub(crate) fn lengthen(&mut self, core: u32, extra: Nanos, now: Nanos, events: &mut Events) {
        if let Busy::Thread {
            kind,
            start,
            end,
            then,
        } = self.cores[core as usize].busy
        {
            // The exit comes first, then what was left of the segment.
            let mix = self.cores[core as usize].seg_mix.after(now - start);
            let mix = mix.prepend(Cause::IdleExit, extra);
            self.run(core, kind, mix, end - now + extra, then, now, events);
        }
    }

    /// When `core`'s next tick falls, if it ticks (the grid of
    /// [`Cpu::resume_ticks`]).
    pub(crate) fn next_tick(&self, core: u32, now: Nanos) -> Option<Nanos> {
        let c = &self.cores[core as usize];
        let tick = self.costs.tick;
        c.ticking
            .then(|| c.tick_origin + ((now - c.tick_origin) / tick + 1) * tick)
    }

    /// The current thread leaves `core` (it blocked, slept or finished).
    pub(crate) fn leave(&mut self, core: u32, now: Nanos, events: &mut Events) {
        if let Some((tid, v)) = self.cores[core as usize]
            .current
            .zip(self.current_vruntime(core, now))
        {
            // EEVDF keeps the sleeper's lag for its return.
            self.cores[core as usize].rq.sleep(tid, v);
        }
        let c = &mut self.cores[core as usize];
        c.current = None;
        c.busy = Busy::Idle;
        c.idle_since = now;
        c.gen = c.gen.wrapping_add(1);
        events.cancel_core_done(core);
    }

    /// The current thread of `core` is done for good: the core no longer
    /// counts it (its ticks stop with its last thread).
    pub(crate) fn retire(&mut self, core: u32) {
        self.cores[core as usize].threads -= 1;
    }

    /// Cuts the running thread segment short, saving what is left of it.
    fn cut_short(&mut self, core: u32, now: Nanos, w: Window, events: &mut Events) {
        if let Busy::Thread {
            kind,
            start,
            end,
            then,
        } = self.cores[core as usize].busy
        {
            let mix = self.cores[core as usize].seg_mix;
            self.charge(core, kind, start, now, w);
            let tid = self.cores[core as usize].current.expect("thread work") as usize;
            self.entities[tid].saved.push(Seg {
                kind,
                remaining: end - now,
                then,
                mix: mix.after(now - start),
            });
            let c = &mut self.cores[core as usize];
            c.busy = Busy::Idle;
            c.gen = c.gen.wrapping_add(1);
            events.cancel_core_done(core);
        }
    }

    /// Puts the current thread back on the run queue (the core then
    /// switches). Returns it.
    pub(crate) fn preempt(&mut self, core: u32, now: Nanos, w: Window, events: &mut Events) -> u32 {
        self.cut_short(core, now, w, events);
        let c = &mut self.cores[core as usize];
        let tid = c.current.take().expect("preempting nothing");
        c.rq.enqueue(tid, self.entities[tid as usize].vruntime);
        // The core was busy up to now: no idle time between the two.
        c.idle_since = now;
        tid
    }

    /// A segment of the current thread ended: it is charged and the core
    /// is free for what the thread does next. Returns the thread and
    /// whether a better one waits to take the CPU now.
    pub(crate) fn segment_done(
        &mut self,
        core: u32,
        kind: Kind,
        start: Nanos,
        now: Nanos,
        w: Window,
    ) -> (u32, bool) {
        self.charge(core, kind, start, now, w);
        let tid = self.cores[core as usize].current.expect("thread work");
        self.cores[core as usize].busy = Busy::Idle;
        let yields = self.cores[core as usize].rq.need_resched() && self.better_waiting(core, now);
        (tid, yields)
    }

    /// Whether a runnable thread should take the CPU from the current one.
    fn better_waiting(&self, core: u32, now: Nanos) -> bool {
        let c = &self.cores[core as usize];
        let current = c.current.zip(self.current_vruntime(core, now));
        c.rq.better_waiting(current)
    }

    /// A thread runs for the first time: it joins its core's run queue at
    /// the queue's min_vruntime, and the core ticks.
    pub(crate) fn start(&mut self, tid: u32, now: Nanos, events: &mut Events) -> u32 {
        let e = &mut self.entities[tid as usize];
        let core = e.spec.core;
        let c = &mut self.cores[core as usize];
        e.vruntime = c.rq.min_vruntime();
        c.rq.start(tid, e.vruntime);
        if !c.ticking {
            c.ticking = true;
            c.tick_origin = now;
            events.push(now + self.costs.tick, Ev::Tick { core });
        }
        core
    }

    /// A woken thread becomes runnable (CFS place_entity and
    /// check_preempt_wakeup, or the rule in force). Returns its core.
    pub(crate) fn wake(&mut self, tid: u32, now: Nanos, w: Window, events: &mut Events) -> u32 {
        let core = self.entities[tid as usize].spec.core;
        let current = self.cores[core as usize]
            .current
            .zip(self.current_vruntime(core, now))
            .map(|(cur, v)| (cur, v, self.entities[cur as usize].spec.critical));
        let e = &mut self.entities[tid as usize];
        e.vruntime = self.cores[core as usize].rq.wake(
            tid,
            e.vruntime,
            e.spec.critical,
            current,
            &self.tunables,
        );
        if measuring(w, now) {
            e.account.wakeups += 1;
        }
        self.resume_ticks(core, now, events);
        core
    }

    /// Restarts the ticks of a core whose ticks stopped while it idled, on
    /// the same grid: the next tick is where it would have been, as if the
    /// idle ticks (which do nothing) had run.
    fn resume_ticks(&mut self, core: u32, now: Nanos, events: &mut Events) {
        let c = &mut self.cores[core as usize];
        if c.ticking || c.threads == 0 {
            return;
        }
        c.ticking = true;
        let tick = self.costs.tick;
        let next = c.tick_origin + ((now - c.tick_origin) / tick + 1) * tick;
        events.push(next, Ev::Tick { core });
    }

    /// What a change asks of `core`: run a thread if idle, or preempt.
    pub(crate) fn kick(&self, core: u32) -> Next {
        let c = &self.cores[core as usize];
        match c.busy {
            Busy::Idle if c.current.is_none() => Next::Schedule,
            Busy::Thread { kind, .. } if c.rq.need_resched() && self.preemptible(kind) => {
                Next::Preempt
            }
            _ => Next::Stay,
        }
    }

    /// Whether a thread running a segment of `kind` may be preempted now.
    /// Under PREEMPT_VOLUNTARY a kernel path runs on to its end (the
    /// segment's end: the return to user space or a schedule point), where
    /// the pending resched is taken.
    fn preemptible(&self, kind: Kind) -> bool {
        matches!(kind, Kind::User | Kind::KernelResched)
            || self.costs.preemption == Preemption::Full
    }

    /// The scheduler tick (CFS check_preempt_tick). `live`: anything else
    /// is scheduled. Returns whether the current thread is preempted now.
    pub(crate) fn tick(&mut self, core: u32, now: Nanos, live: bool, events: &mut Events) -> bool {
        let c = &self.cores[core as usize];
        // Ticks stop with the threads, or when nothing else is scheduled (a
        // thread stuck forever must end the run, for the audit to see it).
        if c.threads == 0 || !live {
            self.cores[core as usize].ticking = false;
            return false;
        }
        // An idle core stops ticking until a thread wakes on it (Linux's
        // NO_HZ idle): a run's events then grow with its I/Os, not with its
        // virtual time (a device taking seconds a command would otherwise
        // tick millions of times in between).
        if c.current.is_none() && c.rq.is_empty() && matches!(c.busy, Busy::Idle) {
            self.cores[core as usize].ticking = false;
            return false;
        }
        events.push(now + self.costs.tick, Ev::Tick { core });
        let Some(tid) = c.current else { return false };
        if c.rq.is_empty() || !matches!(c.busy, Busy::Thread { .. }) {
            return false;
        }
        let cur = self.current_vruntime(core, now).expect("current");
        let e = &self.entities[tid as usize];
        let ran = e.sum_exec + (cur - e.vruntime) - e.exec_at_switch_in;
        let busy = c.busy;
        if !self.cores[core as usize]
            .rq
            .slice_used(tid, ran, cur, &self.tunables)
        {
            return false;
        }
        match busy {
            Busy::Thread { kind, .. } if !self.preemptible(kind) => {
                self.cores[core as usize].rq.request_resched();
                false
            }
            _ => true,
        }
    }

    /// Queues work for the core's interrupt handler. A device interrupt
    /// already pending for the same queue absorbs the new one (one MSI-X
    /// pending bit per vector). Returns whether the handler starts now.
    pub(crate) fn raise(
        &mut self,
        core: u32,
        work: IrqWork,
        now: Nanos,
        events: &mut Events,
    ) -> bool {
        let c = &mut self.cores[core as usize];
        if let (true, IrqWork::Device { queue, kind }) = (self.costs.merge_irqs, work) {
            for w in c.pending.iter_mut() {
                if let IrqWork::Device { queue: q, kind: k } = w {
                    if *q == queue {
                        if kind == Interrupt::Full {
                            *k = Interrupt::Full;
                        }
                        return false;
                    }
                }
            }
        }
        c.pending.push_back(work);
        if self.costs.polled_irqs
            && matches!(work, IrqWork::Device { .. })
            && matches!(c.busy, Busy::Thread { .. })
        {
            // Polled delivery: the running thread takes it at its
            // segment's end, or the fallback handler after a while.
            if c.deferred_since.is_none() {
                c.deferred_since = Some(now);
                let at = now + self.costs.irq_poll_fallback;
                events.push(at, Ev::IrqFallback { core, since: now });
            }
            return false;
        }
        !matches!(c.busy, Busy::Irq { .. })
    }

    /// Polled delivery's fallback: whether the interrupt pending since
    /// `since` on a core kept busy takes the core now (the emulator's
    /// SCHED_FIFO handler, woken after `POLL_FALLBACK`).
    pub(crate) fn fallback_due(&self, core: u32, since: Nanos) -> bool {
        let c = &self.cores[core as usize];
        c.deferred_since == Some(since) && !matches!(c.busy, Busy::Irq { .. })
    }

    /// Polled delivery: device interrupts wait on this core for a poll
    /// point (the running thread's next step, or the core's idling).
    pub(crate) fn poll_pending(&self, core: u32) -> bool {
        self.costs.polled_irqs && self.cores[core as usize].deferred_since.is_some()
    }

    /// Whether `core` has no runnable thread waiting.
    pub(crate) fn runqueue_empty(&self, core: u32) -> bool {
        self.cores[core as usize].rq.is_empty()
    }

    /// The next queued handler takes `core`: it interrupts whatever runs
    /// there. Returns its work.
    pub(crate) fn enter_handler(
        &mut self,
        core: u32,
        now: Nanos,
        w: Window,
        events: &mut Events,
    ) -> IrqWork {
        // Whatever waited is taken now: this handler and the ones queued
        // behind it run before the core returns to its thread.
        self.cores[core as usize].deferred_since = None;
        let work = self.cores[core as usize]
            .pending
            .pop_front()
            .expect("handler without work");
        match self.cores[core as usize].busy {
            Busy::Thread { .. } => self.cut_short(core, now, w, events),
            Busy::Idle => self.charge_idle(core, now, w),
            Busy::Irq { .. } => {}
        }
        work
    }

    /// The handler on `core` took a device interrupt in the window.
    pub(crate) fn count_interrupt(&mut self, core: u32) {
        self.cores[core as usize].irqs += 1;
    }

    /// The running handler wakes `tid` when it returns.
    pub(crate) fn wake_by_handler(&mut self, core: u32, tid: u32) {
        self.cores[core as usize].waking.push(tid);
    }

    /// The threads queued to wake on `core` outside a handler (a waiting
    /// call's pass over its CQ, `crate::world::suspend`): taken to wake
    /// now (hand the list back with [`Cpu::woken_done`]).
    pub(crate) fn take_waking(&mut self, core: u32) -> Vec<u32> {
        std::mem::take(&mut self.cores[core as usize].waking)
    }

    /// The handler on `core` runs for `cost`, spent on `mix`'s causes.
    pub(crate) fn handler_runs(
        &mut self,
        core: u32,
        cost: Nanos,
        mix: Mix,
        now: Nanos,
        events: &mut Events,
    ) {
        let c = &mut self.cores[core as usize];
        c.busy = Busy::Irq { start: now };
        c.irq_mix = mix;
        c.gen = c.gen.wrapping_add(1);
        let gen = c.gen;
        events.push(now + cost, Ev::CoreDone { core, gen });
    }

    /// The handler that started at `start` returns: its time is charged.
    /// Returns the threads it woke (hand the list back with
    /// [`Cpu::woken_done`], to keep its allocation).
    pub(crate) fn handler_returns(
        &mut self,
        core: u32,
        start: Nanos,
        now: Nanos,
        w: Window,
    ) -> Vec<u32> {
        let c = &mut self.cores[core as usize];
        let measured = clip(w, start, now);
        c.time.irq += measured;
        if measured > 0 {
            let a = w.0.saturating_sub(start);
            c.irq_mix.charge(&mut c.time.by_cause, a, a + measured);
        }
        std::mem::take(&mut c.waking)
    }

    pub(crate) fn woken_done(&mut self, core: u32, mut woken: Vec<u32>) {
        woken.clear();
        self.cores[core as usize].waking = woken;
    }

    /// Whether another handler waits on `core`.
    pub(crate) fn handler_pending(&self, core: u32) -> bool {
        !self.cores[core as usize].pending.is_empty()
    }

    /// After the last handler: the interrupted segment resumes, unless a
    /// woken thread may preempt it now ([`Next::Preempt`]); an idle core
    /// schedules ([`Next::Schedule`]).
    pub(crate) fn after_handler(&mut self, core: u32, now: Nanos, events: &mut Events) -> Next {
        self.cores[core as usize].busy = Busy::Idle;
        let c = &self.cores[core as usize];
        let kind = c
            .current
            .and_then(|tid| self.entities[tid as usize].saved.last())
            .map(|seg| seg.kind);
        match c.current {
            Some(_)
                if c.rq.need_resched()
                    && kind.is_some_and(|k| self.preemptible(k))
                    && self.better_waiting(core, now) =>
            {
                self.cores[core as usize].idle_since = now;
                Next::Preempt
            }
            Some(tid) => {
                let seg = self.entities[tid as usize]
                    .saved
                    .pop()
                    .expect("an interrupted thread has a saved segment");
                self.run(
                    core,
                    seg.kind,
                    seg.mix,
                    seg.remaining,
                    seg.then,
                    now,
                    events,
                );
                Next::Stay
            }
            None => {
                self.cores[core as usize].idle_since = now;
                Next::Schedule
            }
        }
    }

    /// The segment of `tid` cut short last, which it finishes first when it
    /// runs again.
    pub(crate) fn resume_saved(&mut self, tid: u32) -> Option<Seg> {
        self.entities[tid as usize].saved.pop()
    }

    /// A spin of thread `tid` (its segment ending in `spin`) ends early:
    /// what is left of it becomes a kernel segment of `cost` ending in
    /// `then`, now if it runs, else when it is resumed (a handler or a
    /// preemption cut it short). False if the thread has no such spin.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn end_spin(
        &mut self,
        tid: u32,
        spin: Step,
        cost: Nanos,
        mix: Mix,
        then: Step,
        now: Nanos,
        w: Window,
        events: &mut Events,
    ) -> bool {
        let core = self.entities[tid as usize].spec.core;
        let c = &self.cores[core as usize];
        match c.busy {
            Busy::Thread {
                kind,
                start,
                then: t,
                ..
            } if t == spin && c.current == Some(tid) => {
                self.charge(core, kind, start, now, w);
                self.run(core, Kind::Kernel, mix, cost, then, now, events);
                true
            }
            _ => {
                let e = &mut self.entities[tid as usize];
                let Some(seg) = e.saved.iter_mut().rev().find(|s| s.then == spin) else {
                    return false;
                };
                seg.kind = Kind::Kernel;
                seg.remaining = cost;
                seg.then = then;
                seg.mix = mix;
                true
            }
        }
    }

    /// What the CPU's structures hold, bytes (capacities).
    pub(crate) fn bytes(&self) -> usize {
        use std::mem::size_of;
        let cores: usize = self
            .cores
            .iter()
            .map(|c| {
                size_of::<Core>()
                    + c.rq.capacity() * size_of::<(Nanos, u32)>()
                    + c.waking.capacity() * 4
                    + c.pending.capacity() * size_of::<IrqWork>()
            })
            .sum();
        let entities: usize = self
            .entities
            .iter()
            .map(|e| size_of::<Entity>() + e.saved.capacity() * size_of::<Seg>())
            .sum();
        cores + entities
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Nanos = 1_000;
    const ALL: Window = (0, Nanos::MAX);
    const MIX: Mix = Mix::of(Cause::User);

    fn host(cores: u32) -> HostProfile {
        let mut h = HostProfile::load("xeon-e5-2660v4").expect("shipped");
        h.cores = cores;
        h
    }

    fn thread(core: u32) -> EntitySpec {
        EntitySpec {
            core,
            process: 0,
            kthread: false,
            critical: false,
        }
    }

    /// A CPU with `n` threads on core 0, all started and the first switched
    /// in and past its switch; returns it at the time that left it.
    fn started(h: &HostProfile, n: u32) -> (Cpu, Events, Nanos) {
        let mut cpu = Cpu::new(h, (0..n).map(|_| thread(0)));
        let mut ev = Events::new(h.cores as usize, vec![0; n as usize], vec![0]);
        for tid in 0..n {
            cpu.count_thread(0);
            cpu.start(tid, 0, &mut ev);
        }
        assert_eq!(cpu.kick(0), Next::Schedule);
        let (tid, at) = cpu.switch(0, 0, ALL, &mut ev).expect("a runnable thread");
        assert_eq!(tid, 0);
        assert_eq!(at, h.context_switch);
        assert_eq!(cpu.segment_done(0, Kind::Kernel, 0, at, ALL), (0, false));
        (cpu, ev, at)
    }

    /// The next end of work on `core`, skipping ticks.
    fn next_core_done(ev: &mut Events) -> Nanos {
        loop {
            match ev.pop().expect("an event") {
                (t, Ev::CoreDone { .. }) => return t,
                (_, Ev::Tick { .. }) => continue,
                other => panic!("unexpected {other:?}"),
            }
        }
    }

    #[test]
    fn a_segment_cut_short_by_the_handler_resumes_with_what_was_left() {
        let h = host(1);
        let (mut cpu, mut ev, t0) = started(&h, 1);
        cpu.run(0, Kind::User, MIX, 10 * US, Step::Plan, t0, &mut ev);
        let irq = IrqWork::Device {
            queue: 0,
            kind: Interrupt::Full,
        };
        let t1 = t0 + 4 * US;
        assert!(cpu.raise(0, irq, t1, &mut ev), "the handler starts now");
        assert_eq!(cpu.enter_handler(0, t1, ALL, &mut ev), irq);
        cpu.handler_runs(0, US, MIX, t1, &mut ev);
        let t2 = next_core_done(&mut ev);
        assert_eq!(t2, t1 + US, "the cut segment's own end is gone");
        assert!(cpu.handler_returns(0, t1, t2, ALL).is_empty());
        assert_eq!(cpu.after_handler(0, t2, &mut ev), Next::Stay);
        assert_eq!(next_core_done(&mut ev), t2 + 6 * US, "6 us were left");
        assert!(matches!(
            cpu.busy(0),
            Busy::Thread {
                kind: Kind::User,
                then: Step::Plan,
                ..
            }
        ));
        let t = cpu.time(0);
        assert_eq!((t.user, t.irq), (4 * US, US));
    }

    #[test]
    fn time_is_charged_to_the_window_only() {
        let h = host(1);
        let (mut cpu, mut ev, t0) = started(&h, 1);
        cpu.run(0, Kind::Spin, MIX, 10 * US, Step::Poll, t0, &mut ev);
        let w = (t0 + 5 * US, Nanos::MAX);
        let (tid, _) = cpu.segment_done(0, Kind::Spin, t0, t0 + 10 * US, w);
        let a = cpu.account(tid);
        // Spinning is system time (beside the switch in), counted apart too.
        let switch = h.context_switch;
        assert_eq!((a.usr, a.sys, a.spun), (0, switch + 5 * US, 5 * US));
        assert_eq!(cpu.time(0).kernel, switch + 5 * US);
    }

    #[test]
    fn apic_merges_device_interrupts_for_one_queue_and_keeps_the_fuller() {
        let mut h = host(1);
        h.irq_delivery = IrqDelivery::Apic;
        let (mut cpu, mut ev, t0) = started(&h, 1);
        let dev = |queue, kind| IrqWork::Device { queue, kind };
        assert!(cpu.raise(0, dev(0, Interrupt::Full), t0, &mut ev));
        cpu.enter_handler(0, t0, ALL, &mut ev);
        cpu.handler_runs(0, US, MIX, t0, &mut ev);
        // While the handler runs, interrupts queue behind it; the next for
        // a queue already pending merges into it.
        assert!(!cpu.raise(0, dev(1, Interrupt::UrgentOnly), t0, &mut ev));
        assert!(!cpu.raise(0, dev(1, Interrupt::Full), t0, &mut ev));
        assert!(!cpu.raise(0, dev(1, Interrupt::UrgentOnly), t0, &mut ev));
        assert!(!cpu.raise(0, dev(2, Interrupt::UrgentOnly), t0, &mut ev));
        assert!(cpu.handler_pending(0));
        assert_eq!(
            cpu.enter_handler(0, t0, ALL, &mut ev),
            dev(1, Interrupt::Full)
        );
        assert_eq!(
            cpu.enter_handler(0, t0, ALL, &mut ev),
            dev(2, Interrupt::UrgentOnly)
        );
        assert!(!cpu.handler_pending(0));
    }

    #[test]
    fn ipi_queues_every_fire() {
        let mut h = host(1);
        h.irq_delivery = IrqDelivery::Ipi;
        let (mut cpu, mut ev, t0) = started(&h, 1);
        let full = IrqWork::Device {
            queue: 0,
            kind: Interrupt::Full,
        };
        assert!(cpu.raise(0, full, t0, &mut ev));
        cpu.enter_handler(0, t0, ALL, &mut ev);
        cpu.handler_runs(0, US, MIX, t0, &mut ev);
        assert!(!cpu.raise(0, full, t0, &mut ev));
        assert!(!cpu.raise(0, full, t0, &mut ev));
        cpu.enter_handler(0, t0, ALL, &mut ev);
        assert!(cpu.handler_pending(0), "the second fire is its own");
    }

    #[test]
    fn the_tick_preempts_only_a_thread_that_used_its_slice() {
        let h = host(1);
        let (mut cpu, mut ev, t0) = started(&h, 2);
        cpu.run(0, Kind::User, MIX, 100_000 * US, Step::Plan, t0, &mut ev);
        assert!(!cpu.tick(0, t0 + 100 * US, true, &mut ev), "100 us in");
        assert!(cpu.tick(0, t0 + 50_000 * US, true, &mut ev), "50 ms in");
        assert_eq!(cpu.preempt(0, t0 + 50_000 * US, ALL, &mut ev), 0);
        let (tid, _) = cpu
            .switch(0, t0 + 50_000 * US, ALL, &mut ev)
            .expect("the other thread");
        assert_eq!(tid, 1);
        // Nothing else scheduled: the ticks stop, the run can end.
        assert!(!cpu.tick(0, t0 + 60_000 * US, false, &mut ev));
    }

    #[test]
    fn the_tick_preempts_a_page_cache_copy_but_not_a_plain_kernel_path() {
        // Under PREEMPT_VOLUNTARY a kernel path runs to its end; the page
        // cache's copy reschedules at every page (generic_perform_write's
        // cond_resched, Linux 5.3.7 mm/filemap.c).
        let h = host(1);
        assert_eq!(h.preemption, Preemption::Voluntary, "the profile's model");
        let at = t0_plus_slice();
        for (kind, preempted) in [(Kind::Kernel, false), (Kind::KernelResched, true)] {
            let (mut cpu, mut ev, t0) = started(&h, 2);
            cpu.run(0, kind, MIX, 100_000 * US, Step::Submitted, t0, &mut ev);
            assert_eq!(cpu.tick(0, t0 + at, true, &mut ev), preempted, "{kind:?}");
            if preempted {
                cpu.preempt(0, t0 + at, ALL, &mut ev);
                // System time, not user time.
                assert_eq!(cpu.time(0).user, 0);
                assert!(cpu.time(0).kernel >= at, "the copy so far");
            }
        }
    }

    /// Past any slice CFS gives two threads.
    fn t0_plus_slice() -> Nanos {
        50_000 * US
    }

    #[test]
    fn a_leaving_thread_hands_the_core_to_the_next_or_leaves_it_idle() {
        let h = host(1);
        let (mut cpu, mut ev, t0) = started(&h, 2);
        cpu.leave(0, t0, &mut ev);
        assert!(matches!(cpu.busy(0), Busy::Idle));
        assert_eq!(cpu.switch(0, t0, ALL, &mut ev).map(|s| s.0), Some(1));
        let t1 = t0 + h.context_switch;
        cpu.segment_done(0, Kind::Kernel, t0, t1, ALL);
        cpu.retire(0);
        cpu.leave(0, t1, &mut ev);
        assert!(cpu.switch(0, t1, ALL, &mut ev).is_none(), "no one left");
        assert_eq!(cpu.kick(0), Next::Schedule, "an idle core schedules");
    }
}
