//! `default`: an interrupt per completion, Linux's out-of-box NVMe behaviour
//! (coalescing is off by default, NVMe 1.4 Fig. 284; TOS 2).

use crate::{Completion, Interrupt, Nanos, Policy};

#[derive(Clone, Debug, Default)]
pub struct Default;

impl Policy for Default {
    fn name(&self) -> &str {
        "default"
    }

    fn completed(&mut self, _now: Nanos, _cqe: Completion) -> Option<Interrupt> {
        Some(Interrupt::Full)
    }

    fn deadline_reached(&mut self, _now: Nanos) -> Option<Interrupt> {
        None
    }

    fn deadline(&self) -> Option<Nanos> {
        None
    }

    fn delay_bound(&self) -> Nanos {
        0
    }
}
