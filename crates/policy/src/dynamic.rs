//! `dynamic`: Gyawali and Aryal's dynamic timeout on top of Algorithm 2.
//!
//! Their Algorithm 1 is Algorithm 2 with the constant delta replaced by
//! delta = e^(a (thr - coalesced)) - 1, a = 0.1, computed with the count
//! before the arriving completion is added. The paper gives no unit for delta.
//! We take microseconds: at thr = 32 and a = 0.1 it gives 23.5 us for the
//! first completion of a burst and 0.1 us near the threshold, the same scale
//! as the cinterrupts delta (6 us, 15 us) it replaces, while nanoseconds would
//! disable coalescing (under 24 ns) and milliseconds would hold a lone
//! completion for 23 ms. `--delta-unit` changes it.

use crate::burst::DeltaRule;
use crate::cint::{Cint, CintConfig};
use crate::{Nanos, US};

/// The paper's correction factor.
pub const DEFAULT_A: f64 = 0.1;
pub const DEFAULT_UNIT: Nanos = US;

/// `cfg` with its delta replaced by the dynamic timeout.
pub fn dynamic(a: f64, unit: Nanos, cfg: CintConfig) -> Cint {
    Cint::new(
        "dynamic",
        CintConfig {
            delta: DeltaRule::Gyawali { a, unit },
            ..cfg
        },
    )
}
