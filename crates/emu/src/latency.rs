//! The one histogram the emulator keeps latencies in.

use hdrhistogram::Histogram;

/// A histogram for latencies in ns, 1 ns to 60 s at 3 significant digits:
/// job latencies, interrupt delivery, and the direct baseline alike.
pub(crate) fn latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("valid bounds")
}
