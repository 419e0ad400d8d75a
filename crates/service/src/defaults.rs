//! A device's tuned delta and thr (TOS 5.2: 6 us on the Optane, 15 us on
//! the P3700; thr 32 on both) as the defaults of the strategies that take
//! them: what a profile means for the interrupt strategy in every front
//! end (`sim`, `run --device`, `exec --device`, `reproduce`, `sweep`).

use policy::catalogue::{self, PolicySpec};

use crate::DeviceProfile;

/// The strategies built on adaptive coalescing, whose delta and thr TOS 5.2
/// tunes per device. The NVMe strategies' threshold is a different setting
/// (the paper keeps it at 32 for both devices), so it is left alone.
const DEVICE_TUNED: &[&str] = &["adaptive", "cint", "dynamic"];

/// `spec` with the device's tuned delta and thr wherever the user gave none
/// and the strategy takes them (dynamic computes its own delta, so it gets
/// only thr).
pub fn with_device_defaults(mut spec: PolicySpec, device: &DeviceProfile) -> PolicySpec {
    if !DEVICE_TUNED.contains(&spec.name.as_str()) {
        return spec;
    }
    let Some(strategy) = catalogue::strategy(&spec.name) else {
        return spec;
    };
    let takes = |option: &str| strategy.takes(option);
    if spec.delta.is_none() && takes("delta") {
        spec.delta = Some(device.default_delta);
    }
    if spec.thr.is_none() && takes("thr") {
        spec.thr = Some(device.default_thr);
    }
    spec
}
