//! The one histogram the emulator keeps latencies in.

use hdrhistogram::Histogram;

/// A histogram for latencies in ns (the project's one,
/// [`policy::time::histogram`]): job latencies, interrupt delivery, and the
/// direct baseline alike.
pub(crate) fn latency_histogram() -> Histogram<u64> {
    policy::time::histogram()
}

/// A latency in ns as the emulator's notes and `bench emu` print it: `63.0 us`.
pub(crate) fn us(ns: f64) -> String {
    format!("{:.1} us", ns / 1e3)
}
