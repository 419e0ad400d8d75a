//! The two choices of TOS 5.2 as pure functions of what was measured: delta
//! from the completion-gap CDF, thr from the throughput curve.

use policy::{Nanos, US};
use report::Gaps;

/// delta: the completion gap at `percentile` (0 < p <= 100), rounded up to
/// the next whole microsecond: the smallest whole microsecond *above* it.
///
/// TOS 5.2 reads delta off the CDF (Optane: p90 = 6 us; P3700: p99 =
/// 15 us) and quotes whole microseconds, without saying how it rounds.
/// We round up, so that the share of gaps the percentile names stays
/// inside one burst; and a gap of exactly a whole microsecond goes to the
/// next one, because Algorithm 1 ends a burst when a gap *reaches* delta
/// (`while now < deadline`; `policy::burst`): with delta equal to the gap,
/// every such completion would get its own interrupt. A gap of 0
/// (completions posted together) gives 1 us, the granularity the paper and
/// NVMe's timers work in.
pub fn delta(gaps: &Gaps, percentile: f64) -> Nanos {
    next_whole_us(gaps.value_at(percentile / 100.0))
}

/// The smallest whole microsecond strictly above `ns`.
pub fn next_whole_us(ns: Nanos) -> Nanos {
    (ns / US + 1) * US
}

/// thr: the index of the first point (in increasing thr) whose IOPS is
/// within `tolerance` (a fraction, 0.01 = 1%) of the best IOPS of every
/// point at or above it, i.e. the point after which the curve no longer
/// rises by more than the tolerance.
///
/// TOS 5.2 picks "the lowest thr after which throughput plateaus" without
/// saying what a plateau is; this is that rule with the plateau made
/// explicit. Points after the chosen one may dip (noise, or a cost of
/// larger batches) without moving the choice; only a later *rise* beyond
/// the tolerance does. The last point always qualifies, so a curve that
/// keeps rising gives the largest thr swept. A NaN counts as 0 IOPS.
/// `None` only for no points.
pub fn plateau(iops: &[f64], tolerance: f64) -> Option<usize> {
    let clean: Vec<f64> = iops
        .iter()
        .map(|&v| if v.is_nan() { 0.0 } else { v })
        .collect();
    // best_from[i]: the best IOPS at or after point i.
    let mut best_from = clean.clone();
    for i in (0..best_from.len().saturating_sub(1)).rev() {
        best_from[i] = best_from[i].max(best_from[i + 1]);
    }
    (0..clean.len()).find(|&i| clean[i] >= (1.0 - tolerance) * best_from[i])
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const THR: [u32; 14] = [1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 255];

    fn thr_of(curve: &[f64], tolerance: f64) -> u32 {
        THR[plateau(curve, tolerance).unwrap()]
    }

    #[test]
    fn flat_from_32_up_picks_32() {
        let curve: Vec<f64> = THR
            .iter()
            .map(|&t| {
                if t >= 32 {
                    450_000.0
                } else {
                    450_000.0 * t as f64 / 40.0
                }
            })
            .collect();
        assert_eq!(thr_of(&curve, 0.01), 32);
        // 24 gives 60% of the plateau: even a 30% tolerance keeps 32.
        assert_eq!(thr_of(&curve, 0.3), 32);
        // A tolerance wider than the step below takes the step.
        assert_eq!(thr_of(&curve, 0.45), 24);
    }

    #[test]
    fn a_curve_that_keeps_rising_gives_the_last_point() {
        let curve: Vec<f64> = THR
            .iter()
            .map(|&t| 100_000.0 + 1_000.0 * t as f64)
            .collect();
        assert_eq!(thr_of(&curve, 0.001), 255);
        assert_eq!(plateau(&[5.0], 0.01), Some(0));
        assert_eq!(plateau(&[], 0.01), None);
    }

    #[test]
    fn noise_within_the_tolerance_is_a_plateau() {
        // Rises to 16, then wobbles by +-0.4% around 400K, dips included.
        let curve = [
            100e3, 180e3, 280e3, 350e3, 390e3, 399e3, 401.5e3, 398.5e3, 400.8e3, 399.2e3, 401.0e3,
            398.9e3, 400.4e3, 399.6e3,
        ];
        assert_eq!(thr_of(&curve, 0.01), 16);
        // A tolerance below the wobble waits for the best point.
        assert_eq!(thr_of(&curve, 0.0), 24);
    }

    #[test]
    fn a_late_rise_beyond_the_tolerance_moves_the_choice() {
        let mut curve = vec![400e3; THR.len()];
        curve[0] = 100e3;
        curve[13] = 420e3; // 255 is 5% better than everything before it
        assert_eq!(thr_of(&curve, 0.01), 255);
        assert_eq!(thr_of(&curve, 0.06), 2);
    }

    #[test]
    fn nan_counts_as_nothing() {
        assert_eq!(plateau(&[f64::NAN, 10.0, 10.0], 0.01), Some(1));
        assert_eq!(plateau(&[f64::NAN, f64::NAN], 0.01), Some(0));
    }

    #[test]
    fn delta_rounds_up_to_whole_microseconds() {
        let gaps = Gaps::from_values((1..=100u64).map(|i| i * 100)).unwrap();
        // p91 = 9,100 ns: up to 10 us.
        assert_eq!(delta(&gaps, 91.0), 10_000);
        // p90 = 9,000 ns exactly: a gap of delta would end the burst, so
        // 10 us too.
        assert_eq!(delta(&gaps, 90.0), 10_000);
        assert_eq!(delta(&gaps, 89.0), 9_000);
        assert_eq!(next_whole_us(0), 1_000);
        assert_eq!(next_whole_us(1), 1_000);
        assert_eq!(next_whole_us(5_999), 6_000);
        assert_eq!(next_whole_us(6_000), 7_000);
        assert_eq!(next_whole_us(6_001), 7_000);
    }

    proptest! {
        /// The choice is within the tolerance of everything after it, and
        /// no earlier point is.
        #[test]
        fn the_choice_is_the_first_point_of_the_plateau(
            curve in proptest::collection::vec(0.0f64..1e6, 1..20),
            tolerance in 0.0f64..0.2,
        ) {
            let i = plateau(&curve, tolerance).unwrap();
            let best = |from: usize| curve[from..].iter().copied().fold(0.0, f64::max);
            prop_assert!(curve[i] >= (1.0 - tolerance) * best(i));
            for (j, &v) in curve.iter().enumerate().take(i) {
                prop_assert!(v < (1.0 - tolerance) * best(j));
            }
        }

        /// delta is above the gap, by at most a microsecond.
        #[test]
        fn rounding_up_is_tight(ns in 0u64..10_000_000) {
            let d = next_whole_us(ns);
            prop_assert!(d > ns && d - ns <= US && d % US == 0);
        }
    }
}
