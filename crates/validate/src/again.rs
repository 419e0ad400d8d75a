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
