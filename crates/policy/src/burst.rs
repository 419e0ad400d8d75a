//! The burst detector at the heart of Algorithms 1 and 2 (TOS 3.2): each
//! completion pushes the timeout out by delta; an interrupt fires after a
//! quiescent gap of delta with something pending, or once thr completions
//! have been coalesced.

use crate::Nanos;

/// How long a quiescent gap must last before the burst is declared over.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DeltaRule {
    /// The paper's constant delta (TOS 3.2; 6 us Optane, 15 us P3700, TOS 5.2).
    Fixed(Nanos),
    /// Gyawali and Aryal's dynamic timeout: delta = e^(a (thr - coalesced)) - 1,
    /// computed with the count before the arriving completion is added. The
    /// paper gives no unit; `unit` is the nanoseconds one unit stands for.
    Gyawali { a: f64, unit: Nanos },
}

impl DeltaRule {
    pub fn delta(&self, thr: u32, coalesced: u32) -> Nanos {
        match *self {
            DeltaRule::Fixed(d) => d,
            DeltaRule::Gyawali { a, unit } => {
                let space = thr.saturating_sub(coalesced) as f64;
                let units = (a * space).exp() - 1.0;
                // Saturate rather than overflow for absurd a * thr.
                (units * unit as f64)
                    .round()
                    .clamp(0.0, u64::MAX as f64 / 4.0) as Nanos
            }
        }
    }

    /// The longest a completion can wait for the burst it joined to end:
    /// it arrives with at least itself counted, and at most thr - 1 further
    /// arrivals can each extend the timeout before thr fires, so the sum of
    /// deltas for pre-increment counts 0..thr-1.
    pub fn burst_bound(&self, thr: u32) -> Nanos {
        (0..thr.saturating_sub(1))
            .map(|c| self.delta(thr, c))
            .fold(0, Nanos::saturating_add)
    }
}

/// The `coalesced` counter and the quiescence `timeout` of one CQ.
#[derive(Clone, Debug, Default)]
pub struct Burst {
    coalesced: u32,
    timeout: Nanos,
}

impl Burst {
    /// Alg. 1 lines 5-8: a completion arrives, the timeout moves to
    /// now + delta and the completion is counted. True when thr is reached
    /// (the caller fires and resets).
    pub fn arrive(&mut self, now: Nanos, delta: Nanos, thr: u32) -> bool {
        self.timeout = now.saturating_add(delta);
        self.coalesced += 1;
        self.coalesced >= thr
    }

    /// A completion that restarts the quiescent wait without being counted
    /// (the authors' OOO Urgent, `OooCount::Code`).
    pub fn extend(&mut self, now: Nanos, delta: Nanos) {
        self.timeout = now.saturating_add(delta);
    }

    pub fn coalesced(&self) -> u32 {
        self.coalesced
    }

    /// "fire IRQ and reset".
    pub fn reset(&mut self) {
        self.coalesced = 0;
    }

    /// Alg. 1 line 11: the quiescent period ends with something to deliver.
    pub fn deadline(&self) -> Option<Nanos> {
        (self.coalesced > 0).then_some(self.timeout)
    }

    pub fn expired(&self, now: Nanos) -> bool {
        self.deadline().is_some_and(|t| now >= t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::US;

    #[test]
    fn gyawali_delta_matches_the_formula() {
        let rule = DeltaRule::Gyawali { a: 0.1, unit: US };
        // e^(3.2) - 1 = 23.5325 us at thr 32, coalesced 0.
        assert_eq!(rule.delta(32, 0), 23_533);
        assert_eq!(rule.delta(32, 16), 3_953);
        assert_eq!(rule.delta(32, 31), 105);
        assert_eq!(rule.delta(32, 32), 0);
    }

    #[test]
    fn fixed_burst_bound_is_thr_minus_one_deltas() {
        assert_eq!(DeltaRule::Fixed(6 * US).burst_bound(32), 31 * 6 * US);
        assert_eq!(DeltaRule::Fixed(6 * US).burst_bound(1), 0);
    }

    #[test]
    fn burst_extends_and_counts() {
        let mut b = Burst::default();
        assert_eq!(b.deadline(), None);
        assert!(!b.arrive(10, 5, 3));
        assert_eq!(b.deadline(), Some(15));
        assert!(!b.arrive(12, 5, 3));
        assert_eq!(b.deadline(), Some(17));
        assert!(!b.expired(16));
        assert!(b.expired(17));
        assert!(b.arrive(13, 5, 3));
        b.reset();
        assert_eq!(b.deadline(), None);
    }
}
