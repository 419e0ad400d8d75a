//! The CPU scheduler's decisions: a CFS-like run queue per core, as Linux
//! 5.0's fair class (kernel/sched/fair.c) with equal weights.
//!
//! A thread's vruntime grows with the CPU it uses; the runnable thread with
//! the smallest runs next; a woken thread is placed at most
//! `sched_latency / 2` behind the queue's min_vruntime (place_entity with
//! GENTLE_FAIR_SLEEPERS) and preempts the running one if that is ahead by
//! more than `sched_wakeup_granularity` (check_preempt_wakeup); the tick
//! preempts a thread that has used its slice (check_preempt_tick).
//!
//! Pure decisions, no clock: the caller passes the running thread's
//! vruntime (including the part of its segment not yet charged) and applies
//! the answers (switching, cutting segments short, charging time).

use policy::Nanos;

use crate::HostProfile;

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

/// One core's runnable threads (the running one is not among them).
#[derive(Clone, Debug, Default)]
pub(crate) struct RunQueue {
    /// (vruntime, thread): a queued thread's vruntime does not change until
    /// it runs again.
    queued: Vec<(Nanos, u32)>,
    min_vruntime: Nanos,
    /// A woken thread should take the CPU at the next chance.
    need_resched: bool,
}

impl RunQueue {
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

    /// The thread that should run next: the least vruntime, ties to the
    /// lower thread number.
    fn next(&self) -> Option<usize> {
        (0..self.queued.len()).min_by_key(|&i| self.queued[i])
    }

    /// The next thread's vruntime, if any thread is runnable.
    pub(crate) fn leftmost(&self) -> Option<Nanos> {
        self.next().map(|i| self.queued[i].0)
    }

    /// Takes the next thread off the queue to run it: (thread, vruntime).
    /// A switch clears a pending resched.
    pub(crate) fn pick(&mut self) -> Option<(u32, Nanos)> {
        let i = self.next()?;
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

    /// A thread wakes: placed no further than half a latency period behind
    /// min_vruntime (so a long sleep earns a bounded head start), queued,
    /// and it asks to preempt the running thread if that is ahead by more
    /// than the wake-up granularity. Returns the woken thread's vruntime.
    pub(crate) fn wake(
        &mut self,
        tid: u32,
        vruntime: Nanos,
        current: Option<Nanos>,
        t: &Tunables,
    ) -> Nanos {
        self.update_min_vruntime(current);
        let floor = self.min_vruntime.saturating_sub(t.latency / 2);
        let vruntime = vruntime.max(floor);
        self.enqueue(tid, vruntime);
        if current.is_some_and(|cur| cur > vruntime + t.wakeup_granularity) {
            self.need_resched = true;
        }
        vruntime
    }

    /// Whether a queued thread should take the CPU from the running one
    /// (`current`, its vruntime; None when no thread owns the CPU).
    pub(crate) fn better_waiting(&self, current: Option<Nanos>) -> bool {
        match (current, self.leftmost()) {
            (Some(cur), Some(next)) => next < cur,
            (_, next) => next.is_some(),
        }
    }

    /// The tick's slice check for the running thread (check_preempt_tick):
    /// it has run `ran` since it was switched in and has vruntime `current`.
    /// Preempt if it ran past its ideal slice, or past the minimum
    /// granularity while ahead of the leftmost by more than that slice.
    pub(crate) fn slice_used(&self, ran: Nanos, current: Nanos, t: &Tunables) -> bool {
        let Some(leftmost) = self.leftmost() else {
            return false;
        };
        let nr = self.queued.len() as u64 + 1;
        let period = if nr > t.latency / t.min_granularity {
            nr * t.min_granularity
        } else {
            t.latency
        };
        let ideal = period / nr;
        ran > ideal || (ran >= t.min_granularity && current.saturating_sub(leftmost) > ideal)
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
        rq.wake(1, 6 * MS, Some(10 * MS), &T);
        assert!(!rq.need_resched());
        // One waking at 5 ms is 5 ms behind: preempt.
        rq.wake(2, 5 * MS, Some(10 * MS), &T);
        assert!(rq.need_resched());
        // A switch clears it.
        assert_eq!(rq.pick(), Some((2, 5 * MS)));
        assert!(!rq.need_resched());
    }

    #[test]
    fn a_long_sleeper_is_placed_half_a_latency_behind() {
        let mut rq = RunQueue::default();
        rq.update_min_vruntime(Some(100 * MS));
        assert_eq!(rq.wake(1, 0, Some(100 * MS), &T), 88 * MS);
        // A thread that slept briefly keeps its own vruntime.
        assert_eq!(rq.wake(2, 95 * MS, Some(100 * MS), &T), 95 * MS);
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
        assert!(!rq.better_waiting(Some(5)));
        assert!(!rq.better_waiting(None));
        rq.enqueue(1, 5);
        assert!(!rq.better_waiting(Some(5)));
        assert!(rq.better_waiting(Some(6)));
        assert!(rq.better_waiting(None));
    }

    #[test]
    fn the_tick_preempts_after_the_ideal_slice() {
        let mut rq = RunQueue::default();
        // Alone: never.
        assert!(!rq.slice_used(100 * MS, 100 * MS, &T));
        rq.enqueue(1, 0);
        // Two threads share 24 ms: 12 ms each.
        assert!(!rq.slice_used(12 * MS, 12 * MS, &T));
        assert!(rq.slice_used(12 * MS + 1, 12 * MS, &T));
        // Past the minimum granularity and more than a slice ahead.
        assert!(rq.slice_used(3 * MS, 12 * MS + 1, &T));
        assert!(!rq.slice_used(3 * MS - 1, 20 * MS, &T));
        // Many threads: the period stretches to nr x min_granularity.
        for t in 2..10 {
            rq.enqueue(t, 0);
        }
        assert!(!rq.slice_used(3 * MS, 3 * MS, &T));
        assert!(rq.slice_used(3 * MS + 1, 0, &T));
    }
}
