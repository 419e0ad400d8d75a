//! The scheduler's wake-up rules (`--wakeup`, host key `wakeup_rule`):
//! one type each behind [`WakeupRule`], the questions a core's run queue
//! ([`crate::sched::RunQueue`]) asks where the rules differ. The queue
//! keeps what every rule shares (the queued threads, min_vruntime, the
//! pending resched) and applies the answers.
//!
//! - [`Plain`]: the simulator's own, Linux 5.0's CFS checks with the host
//!   profile's tunables (kernel/sched/fair.c `place_entity`,
//!   `check_preempt_wakeup`, `check_preempt_tick`), no `next` buddy.
//! - [`CfsRule`]: [`host::cfs`]'s rules (Vanilla, FastResponse's boost as
//!   the paper prints it and as the authors' code has it), with its `next`
//!   buddy.
//! - [`EevdfRule`]: Linux 6.6+'s EEVDF ([`host::eevdf`]).
//!
//! The trait's defaults are CFS's placement and tick check; a rule
//! overrides where it departs from them.
//!
//! Adding a rule: a type implementing [`WakeupRule`] and one arm in
//! [`rule_for`], the registration; its name for the command line and the
//! host profiles is a variant of [`host::mechanism::Wakeup`].

use std::fmt::Debug;

use host::cfs::{Cfs, CfsConfig, TaskView};
use host::eevdf::{base_slice, Eevdf};
use policy::Nanos;

use crate::{HostProfile, Wakeup};

/// A thread as the wake-up rule sees it: (thread, vruntime, critical).
pub(crate) type View = (u32, Nanos, bool);

/// CFS's tunables, ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Tunables {
    pub latency: Nanos,
    pub min_granularity: Nanos,
    pub wakeup_granularity: Nanos,
}

impl Tunables {
    pub(crate) fn of(host: &HostProfile) -> Tunables {
        Tunables {
            latency: host.sched_latency,
            min_granularity: host.sched_min_granularity,
            wakeup_granularity: host.sched_wakeup_granularity,
        }
    }
}

/// The queued threads as the run queue holds them: (vruntime, thread), in
/// queue order (the running thread is not among them).
pub(crate) type Queued = [(Nanos, u32)];

/// Where the wake-up rules differ. Every call is a pure decision over the
/// run queue's state, passed in; a rule keeps only its own (a buddy, the
/// threads' lags and deadlines).
pub(crate) trait WakeupRule: Debug {
    /// A thread runs for the first time, at `vruntime`.
    fn start(&mut self, _tid: u32, _vruntime: Nanos) {}

    /// The running thread `tid` left the CPU to sleep (or ended) at
    /// `vruntime`, with `queued` runnable.
    fn sleep(&mut self, _queued: &Queued, _tid: u32, _vruntime: Nanos) {}

    /// Which of `queued` runs next, given the least vruntime's index
    /// `leftmost` (ties to the lower thread number).
    fn pick(&mut self, _queued: &Queued, leftmost: usize) -> usize {
        leftmost
    }

    /// Where a thread waking at `vruntime` is placed, before it is queued
    /// (`queued` does not hold it yet; `min_vruntime` is up to date). By
    /// default CFS's `place_entity` with GENTLE_FAIR_SLEEPERS: at most half
    /// a latency period behind min_vruntime, so a long sleep earns a
    /// bounded head start.
    fn place(
        &mut self,
        _queued: &Queued,
        min_vruntime: Nanos,
        _tid: u32,
        vruntime: Nanos,
        _current: Option<View>,
        t: &Tunables,
    ) -> Nanos {
        vruntime.max(min_vruntime.saturating_sub(t.latency / 2))
    }

    /// Whether the wakee `tid`, queued at `placed` (now in `queued`),
    /// preempts the running thread `current`.
    fn preempts(
        &mut self,
        queued: &Queued,
        tid: u32,
        placed: Nanos,
        critical: bool,
        current: View,
        t: &Tunables,
    ) -> bool;

    /// Whether a queued thread should take the CPU from the running one
    /// (`current`: its thread and vruntime); `queued` is not empty and
    /// `leftmost` is its least vruntime's index.
    fn better_waiting(&self, queued: &Queued, leftmost: usize, current: (u32, Nanos)) -> bool;

    /// At the tick: whether the running thread `tid`, at `current`
    /// vruntime after `ran` since it was switched in, used its slice;
    /// `queued` is not empty and `leftmost` is its least vruntime. By
    /// default CFS's `check_preempt_tick`: preempt if it ran past its
    /// ideal slice, or past the minimum granularity while ahead of the
    /// leftmost by more than that slice.
    fn slice_used(
        &mut self,
        queued: &Queued,
        leftmost: Nanos,
        _tid: u32,
        ran: Nanos,
        current: Nanos,
        t: &Tunables,
    ) -> bool {
        let nr = queued.len() as u64 + 1;
        let period = if nr > t.latency / t.min_granularity {
            nr * t.min_granularity
        } else {
            t.latency
        };
        let ideal = period / nr;
        ran > ideal || (ran >= t.min_granularity && current.saturating_sub(leftmost) > ideal)
    }

    /// The `next` buddy, if the rule keeps one and it is set.
    #[cfg(test)]
    fn next_buddy(&self) -> Option<u32> {
        None
    }
}

/// The registration: the rule a host's `wakeup_rule` names, for a host of
/// `ncpus` whose scheduler tick is `tick` (part of EEVDF's bound on a
/// sleeper's lag).
pub(crate) fn rule_for(rule: Wakeup, ncpus: u32, tick: Nanos) -> Box<dyn WakeupRule> {
    match rule {
        Wakeup::Plain => Box::new(Plain),
        Wakeup::Vanilla | Wakeup::Boost | Wakeup::BoostCode => {
            let r = rule.rule().expect("a host::cfs rule");
            Box::new(CfsRule(Cfs::new(CfsConfig::new(r, ncpus))))
        }
        Wakeup::Eevdf => Box::new(EevdfRule(Eevdf::new(base_slice(ncpus), tick))),
    }
}

/// The simulator's own rule ([`Wakeup::Plain`]): a wakee preempts when the
/// running thread is ahead of it by more than the profile's
/// `sched_wakeup_granularity` (`check_preempt_wakeup`).
#[derive(Debug)]
pub(crate) struct Plain;

impl WakeupRule for Plain {
    fn preempts(
        &mut self,
        _queued: &Queued,
        _tid: u32,
        placed: Nanos,
        _critical: bool,
        current: View,
        t: &Tunables,
    ) -> bool {
        current.1 > placed + t.wakeup_granularity
    }

    fn better_waiting(&self, queued: &Queued, leftmost: usize, current: (u32, Nanos)) -> bool {
        queued[leftmost].0 < current.1
    }
}

/// A [`host::cfs`] rule (Vanilla, Boost, BoostCode): it decides a wake-up
/// from the wakee's and the running thread's criticality and keeps the
/// `next` buddy, which the pick takes unless it is unfair.
#[derive(Debug)]
pub(crate) struct CfsRule(Cfs);

impl WakeupRule for CfsRule {
    fn pick(&mut self, queued: &Queued, leftmost: usize) -> usize {
        let (vruntime, tid) = queued[leftmost];
        // The buddy, if queued, unless picking it is unfair.
        let id = self.0.pick_next(0, TaskView::new(tid, vruntime, false));
        queued
            .iter()
            .position(|&(_, t)| t == id)
            .unwrap_or(leftmost)
    }

    fn preempts(
        &mut self,
        _queued: &Queued,
        tid: u32,
        placed: Nanos,
        critical: bool,
        current: View,
        _t: &Tunables,
    ) -> bool {
        let d = self.0.on_wakeup(
            0,
            Some(TaskView::new(current.0, current.1, current.2)),
            TaskView::new(tid, placed, critical),
        );
        d.preempt_now
    }

    /// With a `next` buddy, whether the pick would take another thread than
    /// the running one (`pick_next_entity` with the running thread among
    /// the candidates).
    fn better_waiting(&self, queued: &Queued, leftmost: usize, current: (u32, Nanos)) -> bool {
        let (cur_tid, cur) = current;
        let (next, tid) = queued[leftmost];
        if self.0.next().is_none() {
            return next < cur;
        }
        let left = if next < cur {
            TaskView::new(tid, next, false)
        } else {
            TaskView::new(cur_tid, cur, false)
        };
        self.0.clone().pick_next(0, left) != cur_tid
    }

    #[cfg(test)]
    fn next_buddy(&self) -> Option<u32> {
        self.0.next()
    }
}

/// Linux 6.6+'s EEVDF ([`Wakeup::Eevdf`]): the eligible thread with the
/// earliest virtual deadline runs; sleepers keep their lag.
#[derive(Debug)]
pub(crate) struct EevdfRule(Eevdf);

/// The queued threads as EEVDF's pick sees them: (thread, vruntime).
fn entities(queued: &Queued) -> Vec<(u32, Nanos)> {
    queued.iter().map(|&(v, tid)| (tid, v)).collect()
}

impl WakeupRule for EevdfRule {
    fn start(&mut self, tid: u32, vruntime: Nanos) {
        self.0.start(tid, vruntime);
    }

    /// EEVDF keeps the sleeper's lag (CFS keeps nothing).
    fn sleep(&mut self, queued: &Queued, tid: u32, vruntime: Nanos) {
        let all = queued.iter().map(|&(v, _)| v).chain([vruntime]);
        let average = Eevdf::average(all).unwrap_or(vruntime);
        self.0.sleep(tid, vruntime, average);
    }

    fn pick(&mut self, queued: &Queued, _leftmost: usize) -> usize {
        let id = self
            .0
            .pick(&entities(queued), None, true)
            .expect("a queued thread");
        self.0.picked(id);
        queued
            .iter()
            .position(|&(_, t)| t == id)
            .expect("picked from the queue")
    }

    /// `place_entity`: the wakee keeps its lag; alone, it starts at the
    /// queue's clock.
    fn place(
        &mut self,
        queued: &Queued,
        min_vruntime: Nanos,
        tid: u32,
        vruntime: Nanos,
        current: Option<View>,
        _t: &Tunables,
    ) -> Nanos {
        let running = current.map(|c| (c.0, c.1));
        let load = queued.len() as u64 + u64::from(running.is_some());
        let average = Eevdf::average(
            queued
                .iter()
                .map(|&(v, _)| v)
                .chain(running.map(|(_, v)| v)),
        );
        let from = if average.is_some() {
            vruntime
        } else {
            min_vruntime.max(vruntime)
        };
        self.0.wake(tid, from, average, load)
    }

    /// `check_preempt_wakeup_fair`: the wakee preempts when the pick, made
    /// now with the running thread's slice protection, is the wakee
    /// (`update_curr` first: a used slice gets its next deadline).
    fn preempts(
        &mut self,
        queued: &Queued,
        tid: u32,
        _placed: Nanos,
        _critical: bool,
        current: View,
        _t: &Tunables,
    ) -> bool {
        let running = (current.0, current.1);
        self.0.ran_to(running.0, running.1)
            || self.0.pick(&entities(queued), Some(running), true) == Some(tid)
    }

    fn better_waiting(&self, queued: &Queued, _leftmost: usize, current: (u32, Nanos)) -> bool {
        self.0.pick(&entities(queued), Some(current), true) != Some(current.0)
    }

    /// `update_deadline`: the slice is used when the running thread's
    /// vruntime reaches its deadline.
    fn slice_used(
        &mut self,
        _queued: &Queued,
        _leftmost: Nanos,
        tid: u32,
        _ran: Nanos,
        current: Nanos,
        _t: &Tunables,
    ) -> bool {
        self.0.ran_to(tid, current)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_name_is_registered_to_its_rule() {
        let cases = [
            (Wakeup::Plain, "Plain"),
            (Wakeup::Vanilla, "CfsRule"),
            (Wakeup::Boost, "CfsRule"),
            (Wakeup::BoostCode, "CfsRule"),
            (Wakeup::Eevdf, "EevdfRule"),
        ];
        for (name, rule) in cases {
            let got = format!("{:?}", rule_for(name, 8, 4_000_000));
            assert!(got.starts_with(rule), "{name}: {got}");
        }
    }
}
