//! Count-or-time aggregation with a timer that starts at the first pending
//! completion: NVMe's Feature 08h and a NIC's moderation profile.

use crate::Nanos;

#[derive(Clone, Debug, Default)]
pub struct Aggregator {
    pending: u32,
    timer: Nanos,
}

impl Aggregator {
    /// Counts a completion. The timer starts with the first pending one and,
    /// unless `restart` (a NIC's CQE-based mode), is never extended. True when
    /// the threshold is met or the time is zero ("a value of 0h corresponds to
    /// no delay", NVMe 1.4 5.21.1.8).
    pub fn arrive(&mut self, now: Nanos, time: Nanos, threshold: u32, restart: bool) -> bool {
        if self.pending == 0 || restart {
            self.timer = now.saturating_add(time);
        }
        self.pending += 1;
        self.pending >= threshold || time == 0
    }

    pub fn reset(&mut self) {
        self.pending = 0;
    }

    pub fn deadline(&self) -> Option<Nanos> {
        (self.pending > 0).then_some(self.timer)
    }

    pub fn expired(&self, now: Nanos) -> bool {
        self.deadline().is_some_and(|t| now >= t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timer_starts_at_first_pending_and_is_not_extended() {
        let mut a = Aggregator::default();
        assert!(!a.arrive(100, 50, 4, false));
        assert!(!a.arrive(140, 50, 4, false));
        assert_eq!(a.deadline(), Some(150));
        assert!(!a.arrive(149, 50, 4, false));
        assert!(a.arrive(149, 50, 4, false), "fourth reaches the threshold");
    }

    #[test]
    fn restart_mode_extends() {
        let mut a = Aggregator::default();
        a.arrive(100, 50, 4, true);
        a.arrive(140, 50, 4, true);
        assert_eq!(a.deadline(), Some(190));
    }

    #[test]
    fn zero_time_means_no_delay() {
        let mut a = Aggregator::default();
        assert!(a.arrive(1, 0, 32, false));
    }
}
