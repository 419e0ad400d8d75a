//! Reading back a report that was stored as JSON (`tune --store`,
//! `reproduce --store`). The JSON outputs (`json`) are written by hand and
//! do not change; this is only the serde form a store keeps.
//!
//! JSON has no NaN or infinity: serde_json writes such a figure (a share
//! of an empty window, a mean of nothing) as `null`, and [`nan_if_null`]
//! reads it back as NaN, which every output shows as it showed the
//! original (as 0, or not at all).

use serde::{Deserialize, Deserializer};

/// An `f64` field's reader that takes `null` for NaN.
pub fn nan_if_null<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

#[cfg(test)]
mod tests {
    use crate::{CoreUtil, JobReport, LatencyStats, Mode, RunReport};

    #[test]
    fn a_report_reads_back_as_written_but_its_policy() {
        let r = RunReport {
            mode: Some(Mode::Sim),
            policy: crate::PolicyInfo::of(&policy::PolicySpec::named("cint")),
            device: "optane".into(),
            duration_ns: 1_000_000,
            interrupts: 7,
            jobs: vec![JobReport {
                name: "r".into(),
                ..JobReport::default()
            }],
            cores: vec![CoreUtil {
                core: 1,
                user: 0.1 + 0.2,
                kernel: f64::NAN,
                ..CoreUtil::default()
            }],
            ..RunReport::default()
        };
        let r = RunReport {
            jobs: vec![JobReport {
                read: crate::DirReport {
                    clat: LatencyStats {
                        mean: 1.0 / 3.0,
                        percentiles: vec![(99.9, 12_345)],
                        ..LatencyStats::default()
                    },
                    ..crate::DirReport::default()
                },
                ..r.jobs[0].clone()
            }],
            ..r
        };
        let text = serde_json::to_string(&r).unwrap();
        let back: RunReport = serde_json::from_str(&text).unwrap();
        assert!(back.cores[0].kernel.is_nan(), "null reads back as NaN");
        assert_eq!(back.cores[0].user.to_bits(), r.cores[0].user.to_bits());
        assert_eq!(back.policy, crate::PolicyInfo::default(), "not kept");
        let mut want = r.clone();
        want.policy = crate::PolicyInfo::default();
        want.cores[0].kernel = 0.0;
        let mut got = back;
        got.cores[0].kernel = 0.0;
        assert_eq!(got, want);
    }
}
