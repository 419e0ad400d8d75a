//! `validate --again FILE`: a stored validation's held-out points predicted
//! again by today's model, without running anything real.
//!
//! A model change (a strategy, a host) is judged against the same
//! measurements and the same fitted devices the stored run had, so the
//! change, not the machine's load that day, is what moves the errors. The
//! devices are the stored fits (the traces are not kept); the one thing
//! taken from the machine now is the disk's blk-mq hardware queues
//! ([`crate::devices::hw_queues`]), which the stored fits lack, so it must
//! be the machine the run was made on.

use std::path::Path;

use serde::Deserialize;

use crate::design::{Pattern, Point, Target, ENGINE_DEPTHS};
use crate::measure::Measured;
use crate::predict::{self, Fitted};
use crate::{errors_of, table, Row, ValidateError, Validation};

#[derive(Deserialize)]
struct StoredPoint {
    index: usize,
    target: Target,
    engine: String,
    iodepth: u32,
    pattern: Pattern,
    bs: u32,
    numjobs: u32,
    held_out: bool,
}

#[derive(Deserialize)]
struct StoredRow {
    point: StoredPoint,
    measured: Measured,
}

#[derive(Deserialize)]
struct Stored {
    command: String,
    quick: bool,
    runtime_s: f64,
    target_size: u64,
    started: String,
    load_before: String,
    load_after: String,
    kernel: String,
    fio: String,
    rows: Vec<StoredRow>,
    devices: Vec<Fitted>,
}

/// The queues line the stored fit has: the disk's hardware queues now, for
/// the targets whose interrupts are the disk's.
fn queues_now(target: Target) -> Option<u32> {
    let disk = crate::devices::disk_of(Path::new("/var/tmp")).ok()?;
    predict::completion_path(target).and(crate::devices::hw_queues(&disk))
}

/// Reads `file` (a validation.json) and predicts its held-out points with
/// `host` in `sim`.
pub fn again(
    file: &Path,
    host: &sim::HostProfile,
    host_name: &str,
    command: &str,
) -> Result<Validation, ValidateError> {
    let bad = |e: String| ValidateError::Setup(format!("--again {}: {e}", file.display()));
    let text = std::fs::read_to_string(file).map_err(|e| bad(e.to_string()))?;
    let s: Stored = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let mut rows = Vec::with_capacity(s.rows.len());
    for r in s.rows {
        let p = r.point;
        let engine = ENGINE_DEPTHS
            .iter()
            .map(|(e, _)| *e)
            .find(|e| *e == p.engine)
            .ok_or_else(|| bad(format!("point {}: engine {:?}", p.index, p.engine)))?;
        let point = Point {
            index: p.index,
            target: p.target,
            engine,
            iodepth: p.iodepth,
            pattern: p.pattern,
            bs: p.bs,
            numjobs: p.numjobs,
            held_out: p.held_out,
        };
        let predicted = if point.held_out {
            let f = s
                .devices
                .iter()
                .find(|d| d.target == point.target.name())
                .ok_or_else(|| bad(format!("no fitted {} device", point.target.name())))?;
            let profile = match queues_now(point.target) {
                Some(q) => predict::with_queues(&f.profile, q),
                None => f.profile.clone(),
            };
            Some(predict::simulate(&point, &profile, host, s.target_size, s.runtime_s)?.0)
        } else {
            None
        };
        let errors = errors_of(&r.measured.metrics, predicted.as_ref());
        rows.push(Row {
            name: point.name(),
            point,
            measured: r.measured,
            predicted,
            errors,
            emulated: None,
            emu_errors: vec![None; table::METRICS.len()],
        });
    }
    let summary = table::summarise(
        &rows
            .iter()
            .filter(|r| r.predicted.is_some())
            .map(|r| (r.name.clone(), r.errors.clone()))
            .collect::<Vec<_>>(),
    );
    Ok(Validation {
        command: format!("{command} (the measurements of `{}`)", s.command),
        quick: s.quick,
        host: host_name.into(),
        host_table: None,
        runtime_s: s.runtime_s,
        target_size: s.target_size,
        started: s.started,
        load_before: s.load_before,
        load_after: s.load_after,
        kernel: s.kernel,
        fio: s.fio,
        rows,
        devices: s.devices,
        summary,
        emu_summary: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::Metrics;

    /// A stored validation of the quick design's points: every metric
    /// measured at `m`, one device fitted per target from a QD1 trace.
    fn stored(m: &Metrics) -> serde_json::Value {
        let samples: Vec<service::fit::Sample> = (0..200u64)
            .map(|i| service::fit::Sample {
                write: i % 3 == 0,
                bytes: 4096,
                issue: i * 200_000,
                complete: i * 200_000 + 60_000 + (i % 5) * 2_000,
            })
            .collect();
        let devices: Vec<Fitted> = Target::ALL
            .iter()
            .map(|t| predict::fit_device(t.name(), &samples, "a test", Some(1)).unwrap())
            .collect();
        let rows: Vec<serde_json::Value> = crate::design::quick()
            .iter()
            .map(|p| {
                serde_json::json!({
                    "point": p,
                    "measured": Measured {
                        metrics: m.clone(),
                        ios: 1000,
                        job_runtime_ms: 100.0,
                        irqs_recorded: 0,
                        irqs_counted: 0,
                        vectors: vec![],
                        device_completions: 1000,
                        lost_events: 0,
                        wall_s: 0.2,
                    },
                })
            })
            .collect();
        serde_json::json!({
            "command": "validate --quick", "quick": true, "runtime_s": 0.05,
            "target_size": 64u64 << 20, "started": "2026-12-07T00:00:00Z",
            "load_before": "1 1 1", "load_after": "1 1 1", "kernel": "6.18",
            "fio": "fio-3.33", "rows": rows, "devices": devices,
        })
    }

    #[test]
    fn the_held_out_points_are_predicted_again_against_what_was_stored() {
        let m = Metrics {
            iops: 10_000.0,
            mean: 100_000.0,
            p50: 90_000.0,
            p99: 300_000.0,
            p999: 500_000.0,
            irq_per_io: 1.0,
            cpu_per_io: 10_000.0,
        };
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("validation.json");
        std::fs::write(&file, stored(&m).to_string()).unwrap();
        let host = sim::HostProfile::load("vm-native").unwrap();
        let v = again(&file, &host, "vm-native", "validate --again").unwrap();
        assert_eq!(v.rows.len(), crate::design::quick().len());
        for r in &v.rows {
            assert_eq!(r.predicted.is_some(), r.point.held_out, "{}", r.name);
            let Some(pm) = &r.predicted else { continue };
            // Each error is the new prediction's against the stored measure.
            let e = r.errors[0].unwrap();
            assert!((e - (pm.iops - m.iops) / m.iops).abs() < 1e-9);
            // zram: no interrupt predicted, none in the errors.
            if r.point.target == Target::Zram {
                assert!(pm.irq_per_io.is_nan());
                assert!(r.errors[5].is_none(), "{}", r.name);
            }
        }
        assert_eq!(v.summary.len(), table::METRICS.len());
    }

    #[test]
    fn a_file_that_is_not_a_stored_validation_is_one_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("x.json");
        std::fs::write(&file, "{\"rows\": 3}").unwrap();
        let host = sim::HostProfile::load("vm-native").unwrap();
        let e = again(&file, &host, "vm-native", "c")
            .unwrap_err()
            .to_string();
        assert!(e.contains("--again") && e.contains("x.json"), "{e}");
        assert_eq!(e.lines().count(), 1);
    }
}
