//! The CPU scheduler's decisions: a CFS-like run queue per core, as Linux
//! 5.0's fair class (kernel/sched/fair.c) with equal weights.
//!
//! A thread's vruntime grows with the CPU it uses; the runnable thread with
//! the smallest runs next; a woken thread is placed at most
//! `sched_latency / 2` behind the queue's min_vruntime (place_entity with
//! GENTLE_FAIR_SLEEPERS) and preempts the running one if that is ahead by
//! more than `sched_wakeup_granularity` (check_preempt_wakeup); the tick
//! preempts a thread that has used its slice (check_preempt_tick). Where
//! the wake-up rules differ (placement, wake-up preemption, the pick, the
//! tick's check) the queue asks its rule ([`crate::wakeup`]: plain CFS,
//! [`host::cfs`]'s rules, EEVDF).
//!
//! Pure decisions, no clock: the caller passes the running thread's
//! vruntime (including the part of its segment not yet charged) and applies
//! the answers (switching, cutting segments short, charging time).

use policy::Nanos;

// The rule's inputs are the rule's types (crate::wakeup); the queue hands
// them on.
use crate::wakeup::{rule_for, Plain, WakeupRule};
pub(crate) use crate::wakeup::{Tunables, View};
use crate::Wakeup;

/// One core's runnable threads (the running one is not among them).
#[derive(Debug)]
pub(crate) struct RunQueue {
    /// (vruntime, thread): a queued thread's vruntime does not change until
    /// it runs again.
    queued: Vec<(Nanos, u32)>,
    min_vruntime: Nanos,
    /// A woken thread should take the CPU at the next chance.
    need_resched: bool,
    /// What the wake-up rule decides ([`crate::wakeup`]).
    rule: Box<dyn WakeupRule>,
}

impl Default for RunQueue {
    /// An empty queue under the simulator's plain rule.
    fn default() -> RunQueue {
        RunQueue {
            queued: Vec::new(),
            min_vruntime: 0,
            need_resched: false,
            rule: Box::new(Plain),
        }
    }
}

impl RunQueue {
    /// An empty queue deciding wake-ups by `rule`, on a host of `ncpus`.
    /// `tick`: the scheduler tick, part of EEVDF's bound on a sleeper's
    /// lag.
    pub(crate) fn with_rule(rule: Wakeup, ncpus: u32, tick: Nanos) -> RunQueue {
        RunQueue {
            rule: rule_for(rule, ncpus, tick),
            ..RunQueue::default()
        }
    }

    /// A thread runs for the first time, at `vruntime`.
    pub(crate) fn start(&mut self, tid: u32, vruntime: Nanos) {
        self.rule.start(tid, vruntime);
        self.enqueue(tid, vruntime);
    }

    /// The running thread `tid` left the CPU to sleep (or ended) at
    /// `vruntime`: EEVDF keeps its lag (CFS keeps nothing).
    pub(crate) fn sleep(&mut self, tid: u32, vruntime: Nanos) {
        self.rule.sleep(&self.queued, tid, vruntime);
    }

    /// The `next` buddy, if the rule keeps one and it is set.
    #[cfg(test)]
    pub(crate) fn next_buddy(&self) -> Option<u32> {
        self.rule.next_buddy()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.queued.is_empty()
    }

    pub(crate) fn capacity(&self) -> usize {
        self.queued.capacity()
    }

    pub(crate) fn min_vruntime(&self) -> Nanos {
        self.min_vruntime
    }

    pub(crate) fn need_resched(&self) -> bool {
        self.need_resched
    }

    /// Asks for a switch at the next chance (a tick that found the slice
    /// used while the running thread could not be preempted).
    pub(crate) fn request_resched(&mut self) {
        self.need_resched = true;
    }

    /// Adds a runnable thread with its vruntime.
    pub(crate) fn enqueue(&mut self, tid: u32, vruntime: Nanos) {
        self.queued.push((vruntime, tid));
    }

    /// The least vruntime's index, ties to the lower thread number.
    fn next(&self) -> Option<usize> {
        (0..self.queued.len()).min_by_key(|&i| self.queued[i])
    }

    /// The next thread's vruntime, if any thread is runnable.
    pub(crate) fn leftmost(&self) -> Option<Nanos> {
        self.next().map(|i| self.queued[i].0)
    }

    /// Takes the next thread off the queue to run it: (thread, vruntime),
    /// as the rule picks. A switch clears a pending resched.
    pub(crate) fn pick(&mut self) -> Option<(u32, Nanos)> {
        let leftmost = self.next()?;
        let i = self.rule.pick(&self.queued, leftmost);
        let (vruntime, tid) = self.queued.swap_remove(i);
        self.need_resched = false;
        Some((tid, vruntime))
    }

    /// Moves min_vruntime up to the least of the running thread's and the
    /// queue's (update_min_vruntime: it never goes back).
    pub(crate) fn update_min_vruntime(&mut self, current: Option<Nanos>) {
        let m = match (current, self.leftmost()) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => return,
        };
        self.min_vruntime = self.min_vruntime.max(m);
    }

    /// A thread wakes: the rule places it, it is queued, and it asks to
    /// preempt the running thread if the rule says so (from the wakee's
    /// and the running thread's criticality with a [`host::cfs`] rule:
    /// `critical`, `current`'s third field). Returns the woken thread's
    /// vruntime.
    pub(crate) fn wake(
        &mut self,
        tid: u32,
        vruntime: Nanos,
        critical: bool,
        current: Option<View>,
        t: &Tunables,
    ) -> Nanos {
        self.update_min_vruntime(current.map(|c| c.1));
        let placed = self
            .rule
            .place(&self.queued, self.min_vruntime, tid, vruntime, current, t);
        self.enqueue(tid, placed);
        if let Some(cur) = current {
            if self
                .rule
                .preempts(&self.queued, tid, placed, critical, cur, t)
            {
                self.need_resched = true;
            }
        }
        placed
    }

    /// Whether a queued thread should take the CPU from the running one
    /// (`current`: its thread and vruntime; None when no thread owns the
    /// CPU).
    pub(crate) fn better_waiting(&self, current: Option<(u32, Nanos)>) -> bool {
        let Some(current) = current else {
            return !self.queued.is_empty();
        };
        let Some(i) = self.next() else {
            return false;
        };
        self.rule.better_waiting(&self.queued, i, current)
    }

    /// At the tick (`check_preempt_tick`; EEVDF's `update_deadline`):
    /// whether the running thread `tid`, at `current` vruntime after `ran`
    /// since it was switched in, used its slice.
    pub(crate) fn slice_used(
        &mut self,
        tid: u32,
        ran: Nanos,
        current: Nanos,
        t: &Tunables,
    ) -> bool {
        let Some(leftmost) = self.leftmost() else {
            return false;
        };
        self.rule
            .slice_used(&self.queued, leftmost, tid, ran, current, t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;
    /// Linux 5.0's defaults scaled by 4 (the Xeon profile's).
    const T: Tunables = Tunables {
        latency: 24 * MS,
        min_granularity: 3 * MS,
        wakeup_granularity: 4 * MS,
    };

    #[test]
    fn picks_the_least_vruntime_and_ties_to_the_lower_thread() {
        let mut rq = RunQueue::default();
        rq.enqueue(3, 50);
        rq.enqueue(1, 70);
        rq.enqueue(2, 50);
        assert_eq!(rq.leftmost(), Some(50));
        assert_eq!(rq.pick(), Some((2, 50)));
        assert_eq!(rq.pick(), Some((3, 50)));
        assert_eq!(rq.pick(), Some((1, 70)));
        assert_eq!(rq.pick(), None);
    }

    #[test]
    fn wakeup_preempts_only_beyond_the_granularity() {
        let mut rq = RunQueue::default();
        // Running at 10 ms; a thread waking at 6 ms is 4 ms behind: not more
        // than the granularity.
        rq.wake(1, 6 * MS, false, Some((9, 10 * MS, false)), &T);
        assert!(!rq.need_resched());
        // One waking at 5 ms is 5 ms behind: preempt.
        rq.wake(2, 5 * MS, false, Some((9, 10 * MS, false)), &T);
        assert!(rq.need_resched());
        // A switch clears it.
        assert_eq!(rq.pick(), Some((2, 5 * MS)));
        assert!(!rq.need_resched());
    }

    /// Thread 9 runs at 10 ms; the queue holds thread 5 at 9 ms.
    fn queue(rule: Wakeup) -> RunQueue {
        let mut rq = RunQueue::with_rule(rule, 28, 4 * MS);
        rq.enqueue(5, 9 * MS);
        rq
    }

    const CUR: Option<View> = Some((9, 10 * MS, false));

    #[test]
    fn vanilla_keeps_a_critical_wakee_inside_the_granularity_waiting() {
        let mut rq = queue(Wakeup::Vanilla);
        rq.wake(1, 8 * MS, true, CUR, &T);
        assert!(!rq.need_resched());
        assert_eq!(rq.next_buddy(), None);
        // Beyond it: preempt, and the wakee is `next`.
        rq.wake(2, 5 * MS, false, CUR, &T);
        assert!(rq.need_resched());
        assert_eq!(rq.next_buddy(), Some(2));
        assert_eq!(rq.pick(), Some((2, 5 * MS)));
        assert_eq!(rq.next_buddy(), None);
    }

    #[test]
    fn boost_takes_the_cpu_for_a_critical_wakee_at_once() {
        for rule in [Wakeup::Boost, Wakeup::BoostCode] {
            let mut rq = queue(rule);
            // Behind the running thread by less than the granularity, and
            // not the queue's leftmost.
            rq.wake(1, 9 * MS + 500, true, CUR, &T);
            assert!(rq.need_resched(), "{rule}");
            assert_eq!(rq.next_buddy(), Some(1));
            assert!(rq.better_waiting(Some((9, 10 * MS))));
            // Even ahead of the running thread (within the granularity).
            let mut ahead = queue(rule);
            ahead.wake(1, 11 * MS, true, CUR, &T);
            assert!(ahead.better_waiting(Some((9, 10 * MS))), "{rule}");
            // The switch takes the buddy, not the leftmost.
            rq.enqueue(9, 10 * MS);
            assert_eq!(rq.pick(), Some((1, 9 * MS + 500)));
            assert_eq!(rq.next_buddy(), None);
            // A non-critical wakee is vanilla's business.
            let mut rq = queue(rule);
            rq.wake(2, 8 * MS, false, CUR, &T);
            assert!(!rq.need_resched());
        }
    }

    #[test]
    fn a_critical_next_sticks_until_it_runs() {
        for rule in [Wakeup::Boost, Wakeup::BoostCode] {
            let mut rq = queue(rule);
            rq.wake(1, 9 * MS, true, CUR, &T);
            // A second critical wakee, and a non-critical one beyond the
            // granularity (which would be vanilla's `next`), do not take
            // `next` from it.
            rq.wake(2, 8 * MS, true, CUR, &T);
            rq.wake(3, 5 * MS + MS / 2, false, CUR, &T);
            assert_eq!(rq.next_buddy(), Some(1), "{rule}");
            assert!(rq.need_resched());
            rq.enqueue(9, 10 * MS);
            assert_eq!(rq.pick(), Some((1, 9 * MS)), "{rule}");
            // Once it ran, the least vruntime comes next.
            assert_eq!(rq.next_buddy(), None);
            assert_eq!(rq.pick(), Some((3, 5 * MS + MS / 2)));
        }
        // Vanilla overwrites `next` with each preempting wakee.
        let mut rq = queue(Wakeup::Vanilla);
        rq.wake(1, 5 * MS, true, CUR, &T);
        rq.wake(3, 2 * MS, false, CUR, &T);
        assert_eq!(rq.next_buddy(), Some(3));
    }

    #[test]
    fn the_paper_picks_a_critical_next_only_if_not_unfair_and_the_code_always() {
        for (rule, picked) in [(Wakeup::Boost, 5), (Wakeup::BoostCode, 1)] {
            let mut rq = queue(rule);
            // The wakee is 6 ms ahead of the leftmost (thread 5, 9 ms):
            // beyond the 4 ms granularity.
            rq.wake(1, 15 * MS, true, CUR, &T);
            assert!(rq.need_resched());
            rq.enqueue(9, 10 * MS);
            assert_eq!(rq.pick().map(|p| p.0), Some(picked), "{rule}");
        }
        // Refused, a paper `next` stays until it runs.
        let mut rq = queue(Wakeup::Boost);
        rq.wake(1, 15 * MS, true, CUR, &T);
        rq.pick();
        assert_eq!(rq.next_buddy(), Some(1));
    }

    #[test]
    fn plain_is_the_granularity_check_alone() {
        let mut rq = queue(Wakeup::Plain);
        rq.wake(1, 8 * MS, true, CUR, &T);
        assert!(!rq.need_resched());
        rq.wake(2, 5 * MS, true, CUR, &T);
        assert!(rq.need_resched());
        assert_eq!(rq.next_buddy(), None);
        assert_eq!(rq.pick(), Some((2, 5 * MS)));
    }

    #[test]
    fn wakeup_rules_parse_and_print() {
        for r in [
            Wakeup::Plain,
            Wakeup::Vanilla,
            Wakeup::Boost,
            Wakeup::BoostCode,
        ] {
            assert_eq!(r.to_string().parse::<Wakeup>(), Ok(r));
        }
        assert!("fast".parse::<Wakeup>().is_err());
        assert_eq!(Wakeup::default(), Wakeup::Plain);
    }

    #[test]
    fn a_long_sleeper_is_placed_half_a_latency_behind() {
        let mut rq = RunQueue::default();
        rq.update_min_vruntime(Some(100 * MS));
        assert_eq!(
            rq.wake(1, 0, false, Some((9, 100 * MS, false)), &T),
            88 * MS
        );
        // A thread that slept briefly keeps its own vruntime.
        assert_eq!(
            rq.wake(2, 95 * MS, false, Some((9, 100 * MS, false)), &T),
            95 * MS
        );
    }

    #[test]
    fn min_vruntime_never_goes_back() {
        let mut rq = RunQueue::default();
        rq.update_min_vruntime(Some(30));
        assert_eq!(rq.min_vruntime(), 30);
        rq.enqueue(1, 10);
        rq.update_min_vruntime(Some(40));
        assert_eq!(rq.min_vruntime(), 30);
        rq.update_min_vruntime(None);
        assert_eq!(rq.min_vruntime(), 30);
        assert_eq!(rq.pick(), Some((1, 10)));
        rq.update_min_vruntime(Some(50));
        assert_eq!(rq.min_vruntime(), 50);
    }

    #[test]
    fn a_waiting_thread_is_better_only_with_less_vruntime() {
        let mut rq = RunQueue::default();
        assert!(!rq.better_waiting(Some((9, 5))));
        assert!(!rq.better_waiting(None));
        rq.enqueue(1, 5);
        assert!(!rq.better_waiting(Some((9, 5))));
        assert!(rq.better_waiting(Some((9, 6))));
        assert!(rq.better_waiting(None));
    }

    #[test]
    fn the_tick_preempts_after_the_ideal_slice() {
        let mut rq = RunQueue::default();
        // Alone: never.
        assert!(!rq.slice_used(0, 100 * MS, 100 * MS, &T));
        rq.enqueue(1, 0);
        // Two threads share 24 ms: 12 ms each.
        assert!(!rq.slice_used(0, 12 * MS, 12 * MS, &T));
        assert!(rq.slice_used(0, 12 * MS + 1, 12 * MS, &T));
        // Past the minimum granularity and more than a slice ahead.
        assert!(rq.slice_used(0, 3 * MS, 12 * MS + 1, &T));
        assert!(!rq.slice_used(0, 3 * MS - 1, 20 * MS, &T));
        // Many threads: the period stretches to nr x min_granularity.
        for t in 2..10 {
            rq.enqueue(t, 0);
        }
        assert!(!rq.slice_used(0, 3 * MS, 3 * MS, &T));
        assert!(rq.slice_used(0, 3 * MS + 1, 0, &T));
    }

    fn eevdf() -> RunQueue {
        // 28 cores: a 3 ms slice; a 4 ms tick.
        RunQueue::with_rule(Wakeup::Eevdf, 28, 4 * MS)
    }

    #[test]
    fn eevdf_lets_a_wakee_wait_while_the_running_slice_is_protected() {
        let mut rq = eevdf();
        rq.start(9, 0);
        assert_eq!(rq.pick(), Some((9, 0))); // deadline 1.5 ms, protected
        rq.sleep(1, 0);
        // Wakes at V with an earlier deadline than... none: the running
        // thread's slice is protected until its vruntime reaches 1.5 ms.
        rq.wake(1, 0, false, Some((9, MS, false)), &T);
        assert!(!rq.need_resched());
        assert!(!rq.better_waiting(Some((9, MS))));
        // Past its deadline the slice is used: the tick reschedules, and the
        // wakee (eligible, earlier deadline) runs.
        assert!(rq.slice_used(9, 2 * MS, 2 * MS, &T));
        assert!(rq.better_waiting(Some((9, 2 * MS))));
    }

    #[test]
    fn eevdf_preempts_for_a_wakee_once_the_running_slice_is_used() {
        let mut rq = eevdf();
        rq.start(9, 0);
        assert_eq!(rq.pick(), Some((9, 0)));
        rq.start(5, 0);
        // The running thread is past its deadline (1.5 ms) at the wake-up:
        // update_curr gives it the next one and the CPU is rescheduled.
        rq.wake(1, 0, false, Some((9, 2 * MS, false)), &T);
        assert!(rq.need_resched());
    }

    #[test]
    fn eevdf_returns_an_ineligible_sleeper_in_place_and_an_eligible_one_by_its_lag() {
        let mut rq = eevdf();
        rq.start(9, 0);
        rq.pick();
        rq.start(2, 0);
        // Thread 1 slept at 1 ms, ahead of the average (0.5 ms of {2 at 0,
        // itself}): ineligible, it comes back in place (DELAY_DEQUEUE).
        rq.sleep(1, MS);
        assert_eq!(rq.wake(1, MS, false, Some((9, 0, false)), &T), MS);
        // Thread 3 slept behind the average: eligible, it keeps its lag,
        // scaled by (W + w) / W for the load it returns to.
        let mut rq = eevdf();
        rq.start(2, 2 * MS);
        rq.sleep(3, MS);
        // V at its sleep: (2 + 1) / 2 = 1.5 ms, lag 0.5 ms.
        let v = rq.wake(3, MS, false, Some((9, 2 * MS, false)), &T);
        // Back to {2 at 2 ms, 9 running at 2 ms}: V = 2 ms, load 2.
        assert_eq!(v, 2 * MS - MS / 2 * 3 / 2);
    }
}
