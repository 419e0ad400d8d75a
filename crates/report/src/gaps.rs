//! The distribution of completion inter-arrival times: the time between
//! consecutive completions posted to the same CQ, the quantity TOS 5.2
//! (Fig 18) reads delta from.
//!
//! Both front ends record gaps into an HDR histogram from [`histogram`]
//! (constant memory and a few ns per completion, which the emulator's
//! device thread needs at millions of completions a second) and turn it
//! into a [`Gaps`] at the end of the run.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// A histogram for gaps in ns: the project's one time histogram
/// ([`policy::time::histogram`]: exact below 2,048 ns, within 0.1% above;
/// record with `saturating_record`, longer gaps are clamped to its bound).
/// Zero, two completions posted at the same instant, is a gap too.
pub fn histogram() -> Histogram<u64> {
    policy::time::histogram()
}

/// The percentiles of the gaps the text and JSON outputs show.
pub const SHOWN: [f64; 3] = [50.0, 90.0, 99.0];

/// Completion gaps in ns as a step CDF: every distinct recorded value with
/// the number of gaps at or below it. Serialized as its fields (`tune`
/// keeps a baseline's gaps in its store); one read back is checked to be
/// such a CDF.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Stored")]
pub struct Gaps {
    /// How many gaps (one fewer than the completions on each CQ).
    pub count: u64,
    /// (gap ns, gaps at or below it), both strictly increasing; the last
    /// count is `count`.
    points: Vec<(u64, u64)>,
}

/// A [`Gaps`] as read, before it is checked.
#[derive(Deserialize)]
struct Stored {
    count: u64,
    points: Vec<(u64, u64)>,
}

impl TryFrom<Stored> for Gaps {
    type Error = String;

    fn try_from(s: Stored) -> Result<Gaps, String> {
        let rising = s
            .points
            .windows(2)
            .all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1);
        let last = s.points.last().map_or(0, |&(_, below)| below);
        if !rising || last != s.count {
            return Err(format!(
                "completion gaps: not a CDF ({} points, count {})",
                s.points.len(),
                s.count
            ));
        }
        Ok(Gaps {
            count: s.count,
            points: s.points,
        })
    }
}

impl Gaps {
    /// From a histogram of gaps; `None` when nothing was recorded. Each
    /// value is the bottom of its histogram bucket, so a gap of exactly
    /// 6,000 ns reads 6,000 (hdrhistogram's own quantiles give the top,
    /// 6,003, which would turn a whole microsecond into the next one).
    pub fn from_histogram(h: &Histogram<u64>) -> Option<Gaps> {
        if h.is_empty() {
            return None;
        }
        let mut points = Vec::new();
        let mut below = 0;
        for v in h.iter_recorded() {
            below += v.count_at_value();
            points.push((h.lowest_equivalent(v.value_iterated_to()), below));
        }
        Some(Gaps {
            count: below,
            points,
        })
    }

    /// From gaps given one by one (tests, hand-made streams).
    pub fn from_values(values: impl IntoIterator<Item = u64>) -> Option<Gaps> {
        let mut h = histogram();
        for v in values {
            h.saturating_record(v);
        }
        Gaps::from_histogram(&h)
    }

    /// The smallest gap that at least `fraction` of all gaps are at or
    /// below: `value_at(0.9)` is the 90th percentile. `fraction` is clamped
    /// to [0, 1]; 0 gives the smallest gap. 0 when there are no gaps.
    pub fn value_at(&self, fraction: f64) -> u64 {
        let f = if fraction.is_nan() {
            0.0
        } else {
            fraction.clamp(0.0, 1.0)
        };
        // The rank of the gap asked for, 1-based; at least the first. The
        // product is nudged down by far less than one gap, so that a
        // fraction read off `cdf` (count / total, rounded) finds its own
        // point and not the next.
        let exact = f * self.count as f64 * (1.0 - 1e-12);
        let rank = (exact.ceil() as u64).clamp(1, self.count.max(1));
        let i = self.points.partition_point(|&(_, below)| below < rank);
        self.points.get(i).map_or(0, |&(v, _)| v)
    }

    /// (gap ns, fraction of gaps at or below it), one point per distinct
    /// recorded value: monotone in both, ending at 1.0. At 3 significant
    /// digits a microsecond-scale distribution has a point every few ns, so
    /// a plot of it is smooth.
    pub fn cdf(&self) -> Vec<(u64, f64)> {
        let n = self.count.max(1) as f64;
        self.points
            .iter()
            .map(|&(v, below)| (v, below as f64 / n))
            .collect()
    }

    pub fn min(&self) -> u64 {
        self.points.first().map_or(0, |&(v, _)| v)
    }

    pub fn max(&self) -> u64 {
        self.points.last().map_or(0, |&(v, _)| v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_one_to_a_hundred() {
        let g = Gaps::from_values(1..=100).unwrap();
        assert_eq!(g.count, 100);
        assert_eq!(g.value_at(0.5), 50);
        assert_eq!(g.value_at(0.9), 90);
        assert_eq!(g.value_at(0.99), 99);
        assert_eq!(g.value_at(0.901), 91, "the next gap once past 90 of 100");
        assert_eq!(g.value_at(1.0), 100);
        assert_eq!(g.value_at(0.0), 1);
        assert_eq!(g.value_at(-3.0), 1);
        assert_eq!(g.value_at(7.0), 100);
        assert_eq!((g.min(), g.max()), (1, 100));
    }

    #[test]
    fn whole_microseconds_stay_whole() {
        // 6,000 sits in a 4 ns bucket; the bottom of it is 6,000 itself.
        let g = Gaps::from_values([6_000, 6_000, 15_000]).unwrap();
        assert_eq!(g.value_at(0.5), 6_000);
        assert_eq!(g.value_at(0.99), 15_000);
        // Above 2,048 ns the value is the bucket's bottom, within 0.1%.
        let g = Gaps::from_values([6_261]).unwrap();
        assert!((6_256..=6_261).contains(&g.value_at(0.5)), "{g:?}");
    }

    #[test]
    fn gaps_read_back_as_written_and_a_broken_cdf_is_refused() {
        let g = Gaps::from_values([0, 0, 6_000, 15_000]).unwrap();
        let text = serde_json::to_string(&g).unwrap();
        assert_eq!(serde_json::from_str::<Gaps>(&text).unwrap(), g);
        for bad in [
            r#"{"count":3,"points":[[5,1],[4,3]]}"#,
            r#"{"count":4,"points":[[4,1],[5,3]]}"#,
        ] {
            let e = serde_json::from_str::<Gaps>(bad).unwrap_err().to_string();
            assert!(e.contains("not a CDF"), "{e}");
        }
    }

    #[test]
    fn zero_gaps_count() {
        let g = Gaps::from_values([0, 0, 0, 1_000]).unwrap();
        assert_eq!(g.value_at(0.75), 0);
        assert_eq!(g.value_at(0.76), 1_000);
        assert_eq!(g.cdf(), vec![(0, 0.75), (1_000, 1.0)]);
    }

    #[test]
    fn cdf_is_monotone_and_ends_at_one() {
        let values = (0..10_000u64).map(|i| (i * 7_919) % 20_011);
        let g = Gaps::from_values(values).unwrap();
        let cdf = g.cdf();
        assert!(cdf.len() > 100, "enough points to plot: {}", cdf.len());
        assert!(cdf.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
        assert_eq!(cdf.last().unwrap().1, 1.0);
        // The CDF and value_at agree.
        for &(v, f) in cdf.iter().step_by(97) {
            assert_eq!(g.value_at(f), v);
        }
    }

    #[test]
    fn nothing_recorded_is_none() {
        assert_eq!(Gaps::from_values([]), None);
        assert_eq!(Gaps::default().value_at(0.9), 0);
        assert!(Gaps::default().cdf().is_empty());
    }

    #[test]
    fn long_gaps_are_clamped_not_lost() {
        let g = Gaps::from_values([1, u64::MAX]).unwrap();
        assert_eq!(g.count, 2);
        assert!(g.max() >= 59_000_000_000, "{}", g.max());
    }
}
