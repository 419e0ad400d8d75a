//! The authors' Urgent-storm guard, as their basis patch implements it
//! (`linux-kernel/cinterrupts-01-basis.patch`, drivers/nvme/host/pci.c:
//! `urgent_interval_min_thr`, `irq_poller_fire_urgent`, `irq_poller_fire`).
//! TOS 4.3 describes a guard that retunes delta and thr from an EWMA of the
//! interrupt rate (ours, `storm`); the code does something simpler:
//!
//! - It keeps `DECLARE_EWMA(irq_urgent_interval, 0, 128)` (include/linux/
//!   average.h: precision 0, weight 1/128, integer shifts; an empty average
//!   takes the first sample as is) of the interval between interrupts that
//!   delivered Urgent entries: every urgent interrupt adds `cur -
//!   last_urg_irq`, and so does a delta/thr interrupt that carried Urgent
//!   entries the guard had coalesced (`urg_thr`).
//! - While the average is below `urgent_interval_min_thr` (ns), an Urgent
//!   (or Barrier) entry is coalesced like an unmarked one: `thr++`, delta and
//!   thr unchanged. The average starts empty (0), so the first marked entry
//!   after the poller starts is always coalesced.
//! - `last_urg_irq` starts at the poller's start (`sched_clock_cpu` in
//!   `irq_poller`); ours is time 0, the start of the run.

use crate::Nanos;

/// `IRQ_URGENT_EWMA_WEIGHT` 128 = 1 << 7 (pci.c).
const WEIGHT_SHIFT: u32 = 7;

#[derive(Clone, Debug)]
pub struct UrgentInterval {
    /// `urgent_interval_min_thr`, ns.
    min: Nanos,
    /// The EWMA's `internal` (0: empty).
    ewma: u64,
    last_urg_irq: Nanos,
    /// Marked entries coalesced since the last interrupt (`urg_thr`).
    urg_thr: u32,
}

impl UrgentInterval {
    pub fn new(min: Nanos) -> Self {
        UrgentInterval {
            min,
            ewma: 0,
            last_urg_irq: 0,
            urg_thr: 0,
        }
    }

    /// `ewma_irq_urgent_interval_read`.
    pub fn average(&self) -> Nanos {
        self.ewma
    }

    /// `ewma_*_add` of linux/average.h with precision 0.
    fn add(&mut self, val: Nanos) {
        self.ewma = if self.ewma == 0 {
            val
        } else {
            (self.ewma.saturating_mul(1 << WEIGHT_SHIFT) - self.ewma).saturating_add(val)
                >> WEIGHT_SHIFT
        };
    }

    /// Whether a marked entry arriving now is coalesced like an unmarked one;
    /// counts it (`urg_thr++`) if so.
    pub fn coalesces(&mut self) -> bool {
        let below = self.average() < self.min;
        if below {
            self.urg_thr += 1;
        }
        below
    }

    /// An interrupt fired for a marked entry (`irq_poller_fire_urgent`).
    pub fn urgent_interrupt(&mut self, now: Nanos) {
        self.add(now.saturating_sub(self.last_urg_irq));
        self.last_urg_irq = now;
    }

    /// A delta/thr interrupt fired (`irq_poller_fire`): it counts as an
    /// urgent one if it carried entries the guard coalesced.
    pub fn full_interrupt(&mut self, now: Nanos) {
        if self.urg_thr > 0 {
            self.urgent_interrupt(now);
            self.urg_thr = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_average_coalesces_the_first_and_takes_the_first_sample_as_is() {
        let mut g = UrgentInterval::new(10_000);
        assert!(g.coalesces(), "empty (0) is below any minimum");
        g.full_interrupt(50_000);
        assert_eq!(g.average(), 50_000);
        assert!(!g.coalesces());
    }

    #[test]
    fn later_samples_move_it_by_one_128th_with_integer_shifts() {
        let mut g = UrgentInterval::new(1);
        g.urgent_interrupt(1_000);
        // (1000 * 127 + 1128) >> 7 = 128,128 >> 7 = 1001.
        g.urgent_interrupt(2_128);
        assert_eq!(g.average(), 1_001);
        // (1001 * 127 + 0) >> 7 = 127,127 >> 7 = 993 (993.2 truncated).
        g.urgent_interrupt(2_128);
        assert_eq!(g.average(), 993);
    }

    #[test]
    fn a_full_interrupt_without_coalesced_marks_leaves_the_average() {
        let mut g = UrgentInterval::new(10);
        g.urgent_interrupt(100);
        g.full_interrupt(5_000);
        assert_eq!(g.average(), 100);
    }
}
