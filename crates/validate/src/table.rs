//! Signed errors per point and metric, and each metric's median and worst
//! absolute error over the held-out points, beside the goal.

use serde::Serialize;

use crate::measure::Metrics;

/// One metric: its key, its name, how it is printed, and issue 37's goal
/// for the median absolute error ("Done when"), if it sets one.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Metric {
    pub key: &'static str,
    pub name: &'static str,
    pub unit: &'static str,
    pub goal: Option<f64>,
}

/// The metrics, in the table's order.
pub const METRICS: [Metric; 7] = [
    Metric {
        key: "iops",
        name: "IOPS",
        unit: "IOPS",
        goal: Some(0.10),
    },
    Metric {
        key: "mean",
        name: "mean latency",
        unit: "us",
        goal: Some(0.10),
    },
    Metric {
        key: "p50",
        name: "p50 latency",
        unit: "us",
        goal: None,
    },
    Metric {
        key: "p99",
        name: "p99 latency",
        unit: "us",
        goal: Some(0.25),
    },
    Metric {
        key: "p999",
        name: "p99.9 latency",
        unit: "us",
        goal: None,
    },
    Metric {
        key: "irq_per_io",
        name: "interrupts per I/O",
        unit: "",
        goal: Some(0.10),
    },
    Metric {
        key: "cpu_per_io",
        name: "CPU per I/O",
        unit: "us",
        goal: Some(0.20),
    },
];

/// A metric's value in its printed unit.
pub fn value(m: &Metrics, key: &str) -> f64 {
    match key {
        "iops" => m.iops,
        "mean" => m.mean / 1e3,
        "p50" => m.p50 / 1e3,
        "p99" => m.p99 / 1e3,
        "p999" => m.p999 / 1e3,
        "irq_per_io" => m.irq_per_io,
        "cpu_per_io" => m.cpu_per_io / 1e3,
        _ => f64::NAN,
    }
}

/// (predicted - measured) / measured; `None` where the measured value is
/// 0 or either is not finite (a relative error does not exist there).
pub fn signed_error(measured: f64, predicted: f64) -> Option<f64> {
    (measured.is_finite() && predicted.is_finite() && measured != 0.0)
        .then(|| (predicted - measured) / measured)
}

/// One metric over the held-out points.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub metric: Metric,
    /// Points with a relative error (measured not 0).
    pub points: usize,
    pub median_abs: Option<f64>,
    pub worst_abs: Option<f64>,
    /// The point with the worst absolute error.
    pub worst_point: Option<String>,
    /// The median within the goal (None without a goal or a median).
    pub met: Option<bool>,
}

/// The median of `v` (the mean of the middle two for an even count).
pub fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// Each metric's summary over `(name, errors by metric key)`.
pub fn summarise(rows: &[(String, Vec<Option<f64>>)]) -> Vec<Summary> {
    METRICS
        .iter()
        .enumerate()
        .map(|(i, &metric)| {
            let errs: Vec<(&str, f64)> = rows
                .iter()
                .filter_map(|(n, e)| Some((n.as_str(), e.get(i).copied().flatten()?.abs())))
                .collect();
            let mut abs: Vec<f64> = errs.iter().map(|e| e.1).collect();
            let median_abs = median(&mut abs);
            let worst = errs.iter().max_by(|a, b| a.1.total_cmp(&b.1));
            Summary {
                metric,
                points: errs.len(),
                median_abs,
                worst_abs: worst.map(|w| w.1),
                worst_point: worst.map(|w| w.0.to_string()),
                met: metric.goal.zip(median_abs).map(|(g, m)| m <= g),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_signed_and_relative_to_the_measured() {
        assert_eq!(signed_error(100.0, 110.0), Some(0.1));
        assert_eq!(signed_error(100.0, 80.0), Some(-0.2));
        assert_eq!(signed_error(0.0, 1.0), None);
        assert_eq!(signed_error(f64::NAN, 1.0), None);
    }

    #[test]
    fn the_summary_takes_medians_and_names_the_worst() {
        let rows = vec![
            (
                "a".to_string(),
                vec![Some(0.1), None, None, None, None, None, None],
            ),
            (
                "b".to_string(),
                vec![Some(-0.5), None, None, None, None, None, None],
            ),
            (
                "c".to_string(),
                vec![Some(0.2), None, None, None, None, None, None],
            ),
        ];
        let s = summarise(&rows);
        assert_eq!(s[0].points, 3);
        assert!((s[0].median_abs.unwrap() - 0.2).abs() < 1e-12);
        assert_eq!(s[0].worst_abs, Some(0.5));
        assert_eq!(s[0].worst_point.as_deref(), Some("b"));
        assert_eq!(s[0].met, Some(false));
        assert_eq!(s[1].points, 0);
        assert_eq!(s[1].median_abs, None);
    }
}
