//! `cinterrupts validate` (issue 37 item 5): the simulator's predictions
//! checked against real fio runs on this machine's own devices.
//!
//! A fixed matrix of fio jobs ([`design`]) runs for real on the root disk,
//! a zram device and a loop device ([`devices`]), each natively under
//! `capture` ([`measure`]). A device is fitted per target from the fitted
//! half's traces, as `calibrate --device-from` fits one, and each
//! held-out point's job runs in `sim` on it with a host profile
//! ([`predict`]). The signed error of each metric at each held-out point,
//! and each metric's median and worst absolute error ([`table`]), are
//! printed and written as validation.md, validation.json and an HTML page
//! of predicted-against-measured plots ([`mod@write`]).
//!
//! What it is not: a fit of the host. The host is measured at the start of
//! the run by `calibrate --host`'s benchmarks (`hostcal::measure`, issue 37
//! item 5: validate "takes the host from `calibrate --host`"), written as
//! host.toml in the output directory, or given (`--host NAME|FILE`); nothing
//! here is adjusted toward the measured values.

pub mod again;
pub mod design;
pub mod devices;
pub mod measure;
pub mod predict;
pub mod table;
pub mod write;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

pub use devices::{machine_state, MachineState};

/// One line for the user.
#[derive(Debug, thiserror::Error)]
pub enum ValidateError {
    #[error("validate: {0}")]
    Setup(String),
    #[error("validate: point {0}: {1}")]
    Run(String, String),
    #[error("validate: fitting the device: {0}")]
    Fit(String),
    #[error("validate: predicting {0}: {1}")]
    Predict(String, String),
    #[error("validate: --host {0}: {1}")]
    Host(String, String),
    #[error("validate: {path}: {reason}")]
    Write { path: String, reason: String },
}

/// What to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// The handful of points of [`design::quick`], short runs.
    pub quick: bool,
    /// The host profile: a shipped name or a file (`calibrate --host`'s);
    /// `None`: measured at the start of the run ([`measure_host`]).
    pub host: Option<String>,
    /// Where validation.md, .json and .html go.
    pub out: PathBuf,
    /// Also run the held-out points on the emulator with the fitted
    /// device (issue 37 item 6).
    pub emu: bool,
}

/// Seconds each real run lasts, and each prediction in virtual time: "a
/// few seconds each" (issue 37 item 5); `--quick` a fraction, enough for
/// a p99.9 of thousands of I/Os on each target.
pub fn runtime_s(quick: bool) -> f64 {
    if quick {
        0.5
    } else {
        3.0
    }
}

/// Bytes of each target: 512 MiB (4 KiB random offsets over 131,072
/// blocks); `--quick` 64 MiB, as each target is written once before use.
pub fn target_size(quick: bool) -> u64 {
    if quick {
        64 << 20
    } else {
        512 << 20
    }
}

/// One point's row.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub point: design::Point,
    pub name: String,
    pub measured: measure::Measured,
    /// The simulator's prediction (held-out points only).
    pub predicted: Option<measure::Metrics>,
    /// Per metric of [`table::METRICS`]: (predicted - measured) / measured.
    pub errors: Vec<Option<f64>>,
    /// The emulator's run of a held-out point (`--emu`), and its errors.
    pub emulated: Option<measure::Metrics>,
    pub emu_errors: Vec<Option<f64>>,
}

/// A whole validation.
#[derive(Clone, Debug, Serialize)]
pub struct Validation {
    pub command: String,
    pub quick: bool,
    /// The host profile used: the name or file given, or the file measured
    /// at the start (`DIR/host.toml`).
    pub host: String,
    /// The measured host's table (`calibrate --host`'s), when it was
    /// measured here.
    pub host_table: Option<String>,
    pub runtime_s: f64,
    pub target_size: u64,
    pub started: String,
    pub load_before: String,
    pub load_after: String,
    pub kernel: String,
    pub fio: String,
    pub rows: Vec<Row>,
    pub devices: Vec<predict::Fitted>,
    pub summary: Vec<table::Summary>,
    /// The emulator's summary (`--emu`; empty without).
    pub emu_summary: Vec<table::Summary>,
}

fn first_line(program: &str, args: &[&str]) -> String {
    std::process::Command::new(program)
        .args(args)
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .unwrap_or("")
                .trim()
                .to_string()
        })
        .unwrap_or_default()
}

/// `uptime`'s load averages now.
pub fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// The file the measured host profile is written to, in the output
/// directory.
pub const HOST_FILE: &str = "host.toml";

/// The host of this run: `o.host` loaded, or this machine measured now
/// (`hostcal::measure`, `calibrate --host`'s benchmarks; `--quick`: its
/// quick rounds) and written to `o.out`/host.toml, loaded from there as
/// `sim --host FILE` would. Returns the profile, what names it, and the
/// measurement's table when measured.
pub fn measure_host(
    o: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<(sim::HostProfile, String, Option<String>), ValidateError> {
    if let Some(h) = &o.host {
        let host =
            sim::HostProfile::load(h).map_err(|e| ValidateError::Host(h.clone(), e.to_string()))?;
        return Ok((host, h.clone(), None));
    }
    std::fs::create_dir_all(&o.out).map_err(|e| ValidateError::Write {
        path: o.out.display().to_string(),
        reason: e.to_string(),
    })?;
    let file = o.out.join(HOST_FILE);
    let name = file.display().to_string();
    let opts = if o.quick {
        hostcal::Options::quick()
    } else {
        hostcal::Options::default()
    };
    progress("measuring the host (calibrate --host's benchmarks)");
    let m =
        hostcal::measure(&opts).map_err(|e| ValidateError::Host(name.clone(), e.to_string()))?;
    hostcal::write_profile(&m, &file)
        .map_err(|e| ValidateError::Host(name.clone(), e.to_string()))?;
    progress(&format!("host measured in {} ms: {name}", m.elapsed_ms));
    let host = sim::HostProfile::load(&name)
        .map_err(|e| ValidateError::Host(name.clone(), e.to_string()))?;
    Ok((
        host,
        format!("measured at the start ({name})"),
        Some(m.table()),
    ))
}

/// Checks what the runs need, before any is made.
fn preflight() -> Result<(), ValidateError> {
    let v = first_line("fio", &["--version"]);
    if !v.starts_with("fio-3") {
        return Err(ValidateError::Setup(
            "fio 3 is not installed (scripts/setup installs it)".into(),
        ));
    }
    if first_line("losetup", &["--version"]).is_empty() {
        return Err(ValidateError::Setup(
            "losetup is not installed (util-linux; scripts/setup installs it)".into(),
        ));
    }
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Err(ValidateError::Setup(
            "needs root: it makes zram and loop devices and records tracepoints (capture)".into(),
        ));
    }
    Ok(())
}

/// Runs the matrix, fits, predicts; `progress` gets one line per step.
pub fn run(
    o: &Options,
    command: &str,
    progress: &mut dyn FnMut(&str),
) -> Result<Validation, ValidateError> {
    preflight()?;
    let (host, host_name, host_table) = measure_host(o, progress)?;
    let points = if o.quick {
        design::quick()
    } else {
        design::full()
    };
    let (runtime, size) = (runtime_s(o.quick), target_size(o.quick));
    let started = first_line("date", &["-u", "+%Y-%m-%dT%H:%M:%SZ"]);
    let load_before = load();
    let mut measured = Vec::with_capacity(points.len());
    let mut samples: BTreeMap<design::Target, (Vec<service::fit::Sample>, u64, Vec<String>)> =
        BTreeMap::new();
    let mut queues: BTreeMap<design::Target, Option<u32>> = BTreeMap::new();
    {
        let targets = devices::Targets::make(size)?;
        // The hardware queues each target's interrupts come from: the
        // disk's own; the loop device's are its backing disk's (predict::
        // completion_path); zram has none.
        let disk = devices::hw_queues(&targets.block_device(design::Target::Disk)?);
        queues.insert(design::Target::Disk, disk);
        queues.insert(design::Target::Loop, disk);
        queues.insert(design::Target::Zram, None);
        let traces = targets.dir.join("traces");
        std::fs::create_dir_all(&traces)
            .map_err(|e| ValidateError::Setup(format!("{}: {e}", traces.display())))?;
        for (i, p) in points.iter().enumerate() {
            let trace = traces.join(format!("{}.blkparse", p.name()));
            let m = measure::run_point(p, &targets, runtime, &trace)?;
            progress(&format!(
                "{:>2}/{} {:<40} {} {:>9.0} IOPS, lat mean {:>8.1} us, {:.3} interrupts/I/O (load {})",
                i + 1,
                points.len(),
                p.name(),
                if p.held_out { "held out" } else { "fitted  " },
                m.metrics.iops,
                m.metrics.mean / 1e3,
                m.metrics.irq_per_io,
                load()
            ));
            if !p.held_out {
                let e = samples.entry(p.target).or_default();
                // A second between traces (see predict).
                e.1 = predict::samples(&trace, e.1, &mut e.0)? + 1_000_000_000;
                e.2.push(p.name());
            }
            let _ = std::fs::remove_file(&trace);
            measured.push(m);
        }
    }
    let load_after = load();
    let mut devices = Vec::new();
    let mut fitted: BTreeMap<design::Target, String> = BTreeMap::new();
    for (t, (s, _, names)) in &samples {
        let f = predict::fit_device(
            t.name(),
            s,
            &format!(
                "validate's fitted {} points ({})",
                t.name(),
                names.join(", ")
            ),
            queues.get(t).copied().flatten(),
        )?;
        progress(&format!("fitted {}: {} requests", t.name(), f.requests));
        fitted.insert(*t, f.profile.clone());
        devices.push(f);
    }
    let mut rows = Vec::with_capacity(points.len());
    for (p, m) in points.into_iter().zip(measured) {
        let predicted = if p.held_out {
            let device = fitted.get(&p.target).ok_or_else(|| {
                ValidateError::Fit(format!("{}: no fitted point", p.target.name()))
            })?;
            let (pm, _) = predict::simulate(&p, device, &host, size, runtime)?;
            Some(pm)
        } else {
            None
        };
        let emulated = if p.held_out && o.emu {
            let device = &fitted[&p.target];
            let (em, _) = predict::emulate(&p, device, size, runtime)?;
            progress(&format!(
                "emulated {}: {:.0} IOPS, lat mean {:.1} us (load {})",
                p.name(),
                em.iops,
                em.mean / 1e3,
                load()
            ));
            Some(em)
        } else {
            None
        };
        let errors = errors_of(&m.metrics, predicted.as_ref());
        let emu_errors = errors_of(&m.metrics, emulated.as_ref());
        rows.push(Row {
            name: p.name(),
            point: p,
            measured: m,
            predicted,
            errors,
            emulated,
            emu_errors,
        });
    }
    let summary = table::summarise(
        &rows
            .iter()
            .filter(|r| r.predicted.is_some())
            .map(|r| (r.name.clone(), r.errors.clone()))
            .collect::<Vec<_>>(),
    );
    let emu_summary = if o.emu {
        table::summarise(
            &rows
                .iter()
                .filter(|r| r.emulated.is_some())
                .map(|r| (r.name.clone(), r.emu_errors.clone()))
                .collect::<Vec<_>>(),
        )
    } else {
        Vec::new()
    };
    Ok(Validation {
        command: command.into(),
        quick: o.quick,
        host: host_name,
        host_table,
        runtime_s: runtime,
        target_size: size,
        started,
        load_before,
        load_after,
        kernel: first_line("uname", &["-r"]),
        fio: first_line("fio", &["--version"]),
        rows,
        devices,
        summary,
        emu_summary,
    })
}

/// Each metric's signed error of `model` against `measured`.
pub(crate) fn errors_of(
    measured: &measure::Metrics,
    model: Option<&measure::Metrics>,
) -> Vec<Option<f64>> {
    table::METRICS
        .iter()
        .map(|k| {
            model.and_then(|pm| {
                table::signed_error(table::value(measured, k.key), table::value(pm, k.key))
            })
        })
        .collect()
}
