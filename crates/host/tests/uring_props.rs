//! host::uring's invariants over random completion streams: every
//! completion is taken exactly once, no wait outlives its timeout, min-wait
//! returns empty only when its timeout ended it, and DEFER_TASKRUN never
//! wakes the task between its entries (one wake-up at most per wait).

use host::uring::{replay, Costs, MinWait, Strategy};
use proptest::prelude::*;

const COSTS: Costs = Costs {
    syscall: 500,
    wakeup: 2_000,
    reap: 100,
};

fn strategies() -> impl Strategy_<Value = Strategy> {
    prop_oneof![
        Just(Strategy::MinComplete),
        Just(Strategy::TaskWork),
        Just(Strategy::DeferTaskrun),
        Just(Strategy::IoPoll),
        Just(Strategy::SqPoll),
        (
            1u64..200,
            proptest::option::of(1u32..32),
            proptest::option::of(1u64..400)
        )
            .prop_map(|(min_us, nr, t_us)| Strategy::MinWait(MinWait {
                min_wait: min_us * 1_000,
                nr,
                timeout: t_us.map(|t| t * 1_000),
            })),
    ]
}
use proptest::strategy::Strategy as Strategy_;

fn arrivals() -> impl Strategy_<Value = Vec<u64>> {
    proptest::collection::vec(0u64..2_000_000, 0..200).prop_map(|mut v| {
        v.sort_unstable();
        v
    })
}

proptest! {
    #[test]
    fn every_completion_is_taken_exactly_once(
        s in strategies(), a in arrivals(), nr in 1u32..32, max in 1u32..32
    ) {
        let r = replay(s, COSTS, nr, max, 0, &a);
        prop_assert_eq!(r.taken_at.len(), a.len());
        let taken: u64 = r.waits.iter().map(|w| u64::from(w.taken)).sum();
        prop_assert_eq!(taken, a.len() as u64);
        // None is taken before it arrived, and each wait takes at most max.
        for (t, x) in r.taken_at.iter().zip(&a) {
            prop_assert!(t >= x);
        }
        prop_assert!(r.waits.iter().all(|w| w.taken <= max.max(1)));
    }

    #[test]
    fn no_min_wait_outlives_its_timeout(a in arrivals(), min_us in 1u64..200, t_us in proptest::option::of(1u64..400), nr in 1u32..32) {
        let m = MinWait { min_wait: min_us * 1_000, nr: Some(nr), timeout: t_us.map(|t| t * 1_000) };
        let bound = m.min_wait.max(m.timeout.unwrap_or(0));
        let r = replay(Strategy::MinWait(m), COSTS, 1, 32, 0, &a);
        for w in &r.waits {
            // The wait's own time, then its wake-up.
            prop_assert!(w.at - w.entered <= bound + COSTS.wakeup, "{:?} bound {}", w, bound);
        }
    }

    #[test]
    fn min_wait_returns_empty_only_when_timed_out(a in arrivals(), min_us in 1u64..200, t_us in proptest::option::of(1u64..400)) {
        let m = MinWait { min_wait: min_us * 1_000, nr: None, timeout: t_us.map(|t| t * 1_000) };
        let r = replay(Strategy::MinWait(m), COSTS, 1, 16, 0, &a);
        for w in &r.waits {
            prop_assert!(w.taken >= 1 || w.timed_out, "{:?}", w);
        }
    }

    #[test]
    fn defer_taskrun_wakes_at_most_once_per_wait(a in arrivals(), nr in 1u32..32) {
        let r = replay(Strategy::DeferTaskrun, COSTS, nr, 32, 0, &a);
        prop_assert!(r.wakeups <= r.waits.len() as u64);
        prop_assert_eq!(r.context_switches, 2 * r.wakeups);
    }
}
