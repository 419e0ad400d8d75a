//! Urgent-storm protection (TOS 4.3, Fig. 17).
//!
//! The paper gives the ingredients (a maximum interrupt rate, an EWMA of the
//! interrupt rate with lambda = 1/128, delta and thr retuned to stay under the
//! limit, throttling off once the Urgent intensity subsides) but not the
//! control law. Ours:
//!
//! - **What is averaged.** The gaps between the interrupts Algorithm 2 asks
//!   for: every Urgent or Barrier completion (each would fire at once) and,
//!   while not throttled, every delta/thr interrupt. The rate is one over the
//!   mean gap; averaging gaps, not 1/gap, keeps a few back-to-back interrupts
//!   from reading as an infinite rate. A gap still open counts as soon as it
//!   is longer than the mean, so the estimate falls when the storm stops even
//!   if no marked completion arrives again.
//! - **When.** Throttled while the estimated rate exceeds the limit.
//! - **Retuning.** While throttled, Urgent and Barrier completions go to the
//!   adaptive part like unmarked ones, with delta' = max(delta, T) and
//!   thr' = ceil(T / mean completion gap) in 1..=256, where T = 1 / limit:
//!   a quiescence interrupt comes at least delta' after the interrupt before
//!   it, and a thr' interrupt comes once per T at the measured completion
//!   rate, so either way at most one interrupt per T. 256 is the largest
//!   threshold NVMe's 8-bit field can express.

use crate::{Nanos, SEC};

/// TOS 4.3: "We currently set lambda = 1/128".
pub const LAMBDA: f64 = 1.0 / 128.0;
pub const MAX_STORM_THR: u32 = 256;

/// How far under the limit demand must fall to lift throttling.
pub const HYSTERESIS: f64 = 0.1;

#[derive(Clone, Debug)]
struct GapEwma {
    mean: f64,
    last: Option<Nanos>,
    seeded: bool,
}

impl GapEwma {
    /// Starts from an idle device: one event a second.
    fn idle() -> Self {
        GapEwma {
            mean: SEC as f64,
            last: None,
            seeded: false,
        }
    }

    fn sample(&mut self, now: Nanos) {
        if let Some(last) = self.last {
            let gap = now.saturating_sub(last) as f64;
            if self.seeded {
                self.mean += LAMBDA * (gap - self.mean);
            } else {
                // Seeded with the first gap: from the idle 1 s, lambda =
                // 1/128 would need ~1,400 interrupts to notice a storm.
                self.mean = gap;
                self.seeded = true;
            }
        }
        self.last = Some(now);
    }

    /// The mean gap, counting the gap still open at `now` once it is longer.
    fn mean_at(&self, now: Nanos) -> f64 {
        let open = self.last.map_or(0.0, |l| now.saturating_sub(l) as f64);
        if open > self.mean {
            self.mean + LAMBDA * (open - self.mean)
        } else {
            self.mean
        }
    }
}

#[derive(Clone, Debug)]
pub struct Storm {
    max_rate: u64,
    /// T = 1 / max_rate.
    min_gap: Nanos,
    demand: GapEwma,
    completions: GapEwma,
    throttled: bool,
}

impl Storm {
    pub fn new(max_rate: u64) -> Self {
        let max_rate = max_rate.max(1);
        Storm {
            max_rate,
            // Throttled interrupts aim under the limit by the hysteresis
            // margin, so the urgent-only interrupts around them still fit.
            min_gap: ((SEC as f64 / (max_rate as f64 * (1.0 - HYSTERESIS))).ceil() as Nanos).max(1),
            demand: GapEwma::idle(),
            completions: GapEwma::idle(),
            throttled: false,
        }
    }

    /// Estimated interrupts per second Algorithm 2 asks for.
    pub fn demand_rate(&self, now: Nanos) -> f64 {
        SEC as f64 / self.demand.mean_at(now).max(1.0)
    }

    /// Updates the state for a completion at `now`; returns whether marks are
    /// to be demoted for it.
    pub fn on_completion(&mut self, now: Nanos, marked: bool) -> bool {
        self.completions.sample(now);
        if marked {
            self.demand.sample(now);
        }
        // Hysteresis: once throttled, stay so until demand falls clearly
        // under the limit. Without it a closed loop (threads that wait for
        // their own interrupts) oscillates around the limit and averages
        // above it; TOS 4.3 wants the rate never to exceed the limit.
        let limit = if self.throttled {
            self.max_rate as f64 * (1.0 - HYSTERESIS)
        } else {
            self.max_rate as f64
        };
        self.throttled = self.demand_rate(now) > limit;
        self.throttled
    }

    /// A delta/thr interrupt fired.
    pub fn on_coalesced_interrupt(&mut self, now: Nanos) {
        if !self.throttled {
            self.demand.sample(now);
        }
    }

    pub fn throttled(&self) -> bool {
        self.throttled
    }

    /// delta' while throttled.
    pub fn delta(&self, delta: Nanos) -> Nanos {
        delta.max(self.min_gap)
    }

    /// thr' while throttled.
    pub fn thr(&self, now: Nanos) -> u32 {
        let per_gap = self.min_gap as f64 / self.completions.mean_at(now).max(1.0);
        (per_gap.ceil() as u32).clamp(1, MAX_STORM_THR)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::US;

    #[test]
    fn sustained_stream_above_limit_throttles_and_stops_when_it_ends() {
        let mut s = Storm::new(100_000);
        let gap = 6_667; // 150K/s
        let mut t = 0;
        let mut throttled_at = None;
        for i in 0..5_000 {
            t += gap;
            if s.on_completion(t, true) && throttled_at.is_none() {
                throttled_at = Some(i);
            }
        }
        assert!(
            throttled_at.is_some(),
            "150K/s must throttle under a 100K/s limit"
        );
        assert_eq!(
            s.thr(t),
            2,
            "T = 11.1us (90% of the limit) holds 1.7 completions"
        );
        assert_eq!(s.delta(6 * US), 11_112);
        // The storm stops: one unmarked completion 20 ms later lifts it.
        assert!(!s.on_completion(t + 20_000 * US, false));
    }

    /// Marked completions (each would fire an interrupt) at these instants;
    /// whether the last one was throttled.
    fn marked(s: &mut Storm, times: &[Nanos]) -> bool {
        times.iter().fold(false, |_, &t| s.on_completion(t, true))
    }

    #[test]
    fn from_idle_one_marked_completion_is_no_storm_and_the_first_gap_seeds_the_mean() {
        let mut s = Storm::new(100_000);
        assert!(!marked(&mut s, &[0]), "one interrupt is no storm");
        assert_eq!(s.demand_rate(0), 1.0, "idle: one a second");
        // The second comes 5 us later: 200K/s at once, not after ~1,400.
        assert!(marked(&mut s, &[5 * US]));
        assert_eq!(s.demand_rate(5 * US), 200_000.0);
    }

    #[test]
    fn each_later_gap_moves_the_mean_gap_by_lambda() {
        let mut s = Storm::new(1_000_000);
        marked(&mut s, &[0, 10 * US]);
        assert_eq!(s.demand_rate(10 * US), 100_000.0, "seeded: 10 us");
        // A 138 us gap moves the mean 1/128 of the way: 10 + 128/128 us.
        marked(&mut s, &[148 * US]);
        assert_eq!(s.demand_rate(148 * US), SEC as f64 / 11_000.0);
    }

    #[test]
    fn an_open_gap_counts_once_it_is_longer_than_the_mean() {
        let mut s = Storm::new(1_000_000);
        marked(&mut s, &[0, 10 * US]);
        assert_eq!(s.demand_rate(15 * US), 100_000.0, "5 us open: not yet");
        assert_eq!(s.demand_rate(20 * US), 100_000.0, "10 us open: the mean");
        // 138 us open counts as if a marked completion closed it now.
        assert_eq!(s.demand_rate(148 * US), SEC as f64 / 11_000.0);
    }

    #[test]
    fn demand_exactly_at_the_limit_is_not_throttled() {
        let mut s = Storm::new(100_000);
        assert!(
            !marked(&mut s, &[0, 10 * US]),
            "100K/s under a 100K/s limit"
        );
        assert!(!s.throttled());
        assert!(marked(&mut s, &[10 * US + 9_990]), "a hair over it");
        assert!(s.throttled());
    }

    #[test]
    fn once_throttled_it_holds_until_demand_falls_under_90_percent_of_the_limit() {
        let mut s = Storm::new(100_000);
        assert!(marked(&mut s, &[0, 5 * US]), "200K/s");
        // Mean 5 + 707/128 us = 10.52 us: 95K/s, under the limit but not
        // clearly: still throttled.
        let t = 5 * US + 712 * US;
        assert!(marked(&mut s, &[t]));
        assert!((95_000.0..95_100.0).contains(&s.demand_rate(t)));
        // Mean 11.22 us: 89K/s, under 90%: released.
        let t = t + 100 * US;
        assert!(!marked(&mut s, &[t]));
        assert!((89_000.0..89_200.0).contains(&s.demand_rate(t)));
        assert!(!s.throttled());
    }

    #[test]
    fn unmarked_completions_alone_never_raise_demand() {
        let mut s = Storm::new(100_000);
        for i in 0..1_000 {
            assert!(!s.on_completion(i * 100, false), "10M/s of unmarked");
        }
        assert_eq!(s.demand_rate(100_000), 1.0);
    }

    #[test]
    fn delta_and_thr_interrupts_count_toward_demand_until_throttled() {
        // Two thr interrupts 5 us apart, then an Urgent 5 us later: 200K/s.
        let mut s = Storm::new(100_000);
        s.on_coalesced_interrupt(0);
        s.on_coalesced_interrupt(5 * US);
        assert!(marked(&mut s, &[10 * US]));
        // Throttled, delta'/thr' interrupts are the ones storm protection
        // paces itself: they do not feed the demand it measures.
        s.on_coalesced_interrupt(11 * US);
        assert_eq!(s.demand_rate(11 * US), 200_000.0);
    }

    #[test]
    fn stream_below_limit_never_throttles() {
        let mut s = Storm::new(100_000);
        let mut t = 0;
        for _ in 0..10_000 {
            t += 12 * US; // 83K/s
            assert!(!s.on_completion(t, true));
        }
    }
}
