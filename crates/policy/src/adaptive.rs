//! `adaptive`: TOS Algorithm 1, burst detection with a quiescence gap delta
//! and a cap of thr completions per interrupt. Annotations are ignored: this
//! is the device-side heuristic without semantics (TOS 3.2).

use crate::burst::Burst;
use crate::{Completion, Interrupt, Nanos, Policy};

#[derive(Clone, Debug)]
pub struct Adaptive {
    delta: Nanos,
    thr: u32,
    burst: Burst,
}

impl Adaptive {
    /// `thr` must be at least 1 (the catalogue validates it).
    pub fn new(delta: Nanos, thr: u32) -> Self {
        Adaptive {
            delta,
            thr: thr.max(1),
            burst: Burst::default(),
        }
    }

    fn fire(&mut self) -> Option<Interrupt> {
        self.burst.reset();
        Some(Interrupt::Full)
    }
}

impl Policy for Adaptive {
    fn name(&self) -> &str {
        "adaptive"
    }

    fn completed(&mut self, now: Nanos, cqe: Completion) -> Option<Interrupt> {
        // Alg. 1 lines 5-9: extend the timeout, count, fire at thr.
        let reached = self.burst.arrive(now, self.delta, self.thr);
        // Errors are never coalesced (NVMe's recommendation, TOS 4.2.1).
        if reached || cqe.error {
            return self.fire();
        }
        None
    }

    fn deadline_reached(&mut self, now: Nanos) -> Option<Interrupt> {
        // Alg. 1 lines 10-12: end of the quiescent period.
        if self.burst.expired(now) {
            return self.fire();
        }
        None
    }

    fn deadline(&self) -> Option<Nanos> {
        self.burst.deadline()
    }

    fn delay_bound(&self) -> Nanos {
        crate::burst::DeltaRule::Fixed(self.delta).burst_bound(self.thr)
    }
}
