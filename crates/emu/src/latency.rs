//! The one histogram the emulator keeps latencies in.

use hdrhistogram::Histogram;

/// A histogram for latencies in ns (the project's one,
/// [`policy::time::histogram`]): job latencies, interrupt delivery, and the
/// direct baseline alike.
pub(crate) fn latency_histogram() -> Histogram<u64> {
    policy::time::histogram()
}
