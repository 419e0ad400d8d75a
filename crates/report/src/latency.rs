//! Latency summaries taken from an HDR histogram, so a run's memory does not
//! grow with its length.

use hdrhistogram::Histogram;

/// The percentiles fio prints (its default `percentile_list`).
pub const PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// The percentiles an operation's latency CDF is drawn at (our choice: the
/// minimum and maximum, every decile, and the tail fio prints), a bounded
/// list whatever the run's length.
pub const CDF_PERCENTILES: [f64; 20] = [
    0.0, 1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9,
    99.95, 99.99, 99.999, 100.0,
];

/// The CDF of `h` at [`CDF_PERCENTILES`]: (percentile, value); empty for an
/// empty histogram.
pub fn cdf(h: &Histogram<u64>) -> Vec<(f64, u64)> {
    if h.is_empty() {
        return Vec::new();
    }
    CDF_PERCENTILES
        .iter()
        .map(|&p| (p, h.value_at_quantile(p / 100.0)))
        .collect()
}

/// Summary of a latency distribution, ns.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LatencyStats {
    pub samples: u64,
    pub min: u64,
    pub max: u64,
    #[serde(deserialize_with = "crate::readback::nan_if_null")]
    pub mean: f64,
    #[serde(deserialize_with = "crate::readback::nan_if_null")]
    pub stddev: f64,
    /// (percentile, value) for each of [`PERCENTILES`].
    pub percentiles: Vec<(f64, u64)>,
}

impl LatencyStats {
    pub fn from_histogram(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return LatencyStats::default();
        }
        LatencyStats {
            samples: h.len(),
            min: h.min(),
            max: h.max(),
            mean: h.mean(),
            stddev: h.stdev(),
            percentiles: PERCENTILES
                .iter()
                .map(|&p| (p, h.value_at_quantile(p / 100.0)))
                .collect(),
        }
    }

    /// The value at percentile `p` (one of [`PERCENTILES`]); 0 if absent.
    pub fn percentile(&self, p: f64) -> u64 {
        self.percentiles
            .iter()
            .find(|(q, _)| (q - p).abs() < 1e-9)
            .map_or(0, |&(_, v)| v)
    }
}
