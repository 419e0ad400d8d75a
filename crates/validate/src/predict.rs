//! The model's side: a device fitted from the fitted half's traces
//! (`calibrate --device-from`'s fit, `service::fit`), and each held-out
//! point's job run in `sim` on it with the host profile.
//!
//! One device is fitted per target from every fitted point of that
//! target, the traces laid end to end (each shifted past the last's end by
//! a second, so the fit's most-in-flight and busiest-100-ms counts stay
//! each run's own). Only fio's requests are kept (the trace's `comm`, as
//! `calibrate --comm fio`): the root disk serves other programs too. All
//! of them are fitted (`hold_out` 0): the validation holds out whole
//! points instead.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::design::{Point, Target};
use crate::measure::Metrics;
use crate::ValidateError;

/// The requests of one trace fio issued and completed, shifted by
/// `offset` ns; the end of the last.
pub fn samples(
    trace: &Path,
    offset: u64,
    out: &mut Vec<service::fit::Sample>,
) -> Result<u64, ValidateError> {
    let bad = |e: String| ValidateError::Fit(format!("{}: {e}", trace.display()));
    let mut end = offset;
    for r in traces::open(trace, Some(traces::Format::Blkparse)).map_err(|e| bad(e.to_string()))? {
        let r = r.map_err(|e| bad(e.to_string()))?;
        if r.comm.as_deref() != Some("fio") || r.flush || r.discard || r.bytes == 0 {
            continue;
        }
        let Some(done) = r.complete_ns else { continue };
        out.push(service::fit::Sample {
            write: r.write,
            bytes: u64::from(r.bytes),
            issue: offset + r.issue_ns,
            complete: offset + done,
        });
        end = end.max(offset + done);
    }
    Ok(end)
}

/// How the completions of `target` reach the CPU, as a strategy of
/// crates/policy, or `None` where they raise no interrupt.
///
/// - The disk is virtio-blk behind a VMM: one interrupt per batch the
///   device serves (`virtio`, crates/policy/src/virtio.rs cites
///   Firecracker's `process_queue` and virtio_blk.c's `virtblk_done`).
/// - The loop device (`--direct-io=on`) completes through its backing
///   file's disk: `lo_rw_aio` submits the request as kiocb to the file,
///   whose completion on the disk's interrupt calls `lo_rw_aio_complete`
///   (Linux drivers/block/loop.c), so its interrupts are the disk's
///   (`virtio`) and the batch is the loop's requests in flight there.
/// - zram has none: `zram_submit_bio` does the work and ends the bio in
///   the submitting task (Linux drivers/block/zram/zram_drv.c). The
///   simulator has no device completed in the submitter's context, so no
///   interrupt count is predicted for it (the metric is left out, not set
///   to the measured 0); its job runs with `default`.
pub fn completion_path(target: Target) -> Option<&'static str> {
    match target {
        Target::Disk | Target::Loop => Some("virtio"),
        Target::Zram => None,
    }
}

/// The fitted device: its profile's text and what the fit said.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Fitted {
    pub target: String,
    pub requests: usize,
    pub profile: String,
}

/// Fits `samples` as `calibrate --device-from` does; `queues`, the
/// hardware queues the target's interrupts come from (sysfs, not in a
/// trace), replaces the fit's shipped default. The profile is checked to
/// be one the simulator reads.
pub fn fit_device(
    target: &str,
    samples: &[service::fit::Sample],
    origin: &str,
    queues: Option<u32>,
) -> Result<Fitted, ValidateError> {
    if samples.len() < 10 {
        return Err(ValidateError::Fit(format!(
            "{target}: {} requests of fio's traced; a fit needs at least 10",
            samples.len()
        )));
    }
    let f = service::fit::fit(samples, 0.0, 1);
    let profile = f
        .profile(&format!("validate-{target}"), origin)
        .ok_or_else(|| ValidateError::Fit(format!("{target}: no direction to fit")))?;
    let profile = match queues {
        Some(q) => with_queues(&profile, q),
        None => profile,
    };
    sim::DeviceProfile::parse(&profile, "the fitted profile")
        .map_err(|e| ValidateError::Fit(format!("{target}: {e}")))?;
    Ok(Fitted {
        target: target.into(),
        requests: samples.len(),
        profile,
    })
}

/// `profile` with its `queues` line set to `q`, said measured.
pub fn with_queues(profile: &str, q: u32) -> String {
    profile
        .lines()
        .map(|l| {
            if l.starts_with("queues = ") {
                format!("# The target's blk-mq hardware queues (/sys/block/NAME/mq).\nqueues = {q}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// The job file of `p` for the model (`runtime` virtual seconds).
pub fn job_text(p: &Point, size: u64, runtime_s: f64) -> String {
    format!(
        "[{}]\n{}\nsize={size}\nruntime={}ms\ntime_based=1\n",
        p.name(),
        p.shape_options(),
        (runtime_s * 1000.0).round() as u64
    )
}

/// Collapses a run's clones into the point's metrics: IOPS summed; the
/// latency direction's mean weighted by samples; its percentiles the
/// sample-weighted mean of the clones' (two clones of one shape are two
/// draws of one distribution; fio merges the samples themselves, which a
/// report of percentiles cannot); interrupts over completions; the jobs'
/// usr + sys CPU over their I/Os.
pub fn metrics_of(r: &report::RunReport, writes: bool) -> Metrics {
    let ios: u64 = r.jobs.iter().map(|j| j.read.io_ops + j.write.io_ops).sum();
    let dirs: Vec<&report::LatencyStats> = r
        .jobs
        .iter()
        .map(|j| if writes { &j.write.clat } else { &j.read.clat })
        .collect();
    let n: f64 = dirs.iter().map(|d| d.samples as f64).sum();
    let weighted = |f: &dyn Fn(&report::LatencyStats) -> f64| {
        dirs.iter().map(|d| d.samples as f64 * f(d)).sum::<f64>() / n
    };
    let cpu: u64 = r.jobs.iter().map(|j| j.usr_ns + j.sys_ns).sum();
    Metrics {
        iops: r.total_iops(),
        mean: weighted(&|d| d.mean),
        p50: weighted(&|d| d.percentile(50.0) as f64),
        p99: weighted(&|d| d.percentile(99.0) as f64),
        p999: weighted(&|d| d.percentile(99.9) as f64),
        irq_per_io: r.interrupts as f64 / ios.max(1) as f64,
        cpu_per_io: cpu as f64 / ios.max(1) as f64,
    }
}

/// `p` in the simulator on `device` (a fitted profile's text) and `host`.
pub fn simulate(
    p: &Point,
    device: &str,
    host: &sim::HostProfile,
    size: u64,
    runtime_s: f64,
) -> Result<(Metrics, report::RunReport), ValidateError> {
    let bad = |e: String| ValidateError::Predict(p.name(), e);
    let text = job_text(p, size, runtime_s);
    let file = jobs::parse_str(&text, &p.name(), &|_| None).map_err(|e| bad(e.to_string()))?;
    let device =
        sim::DeviceProfile::parse(device, "the fitted profile").map_err(|e| bad(e.to_string()))?;
    let config = sim::SimConfig {
        device,
        host: host.clone(),
        policy: policy::PolicySpec::named(completion_path(p.target).unwrap_or("default")),
        seed: 1,
        runtime: None,
    };
    let r = sim::simulate(&file.jobs, &config, &mut |_, _| {}).map_err(|e| bad(e.to_string()))?;
    Ok((
        predicted(p, metrics_of(&r, p.pattern.latency_of_writes())),
        r,
    ))
}

/// `p` on the emulator (`cinterrupts run --device FILE`, crates/emu): the
/// fitted device as a timed model (nothing transferred; each command
/// takes a service time drawn from the profile) behind the emulator's real
/// driver threads on this machine, for `runtime_s` real seconds. The
/// interrupt strategy is the simulator's ("default"); the rest is the
/// emulator's defaults, as `cinterrupts run` has them.
pub fn emulate(
    p: &Point,
    device: &str,
    size: u64,
    runtime_s: f64,
) -> Result<(Metrics, report::RunReport), ValidateError> {
    let bad = |e: String| ValidateError::Predict(format!("{} (emulator)", p.name()), e);
    let text = job_text(p, size, runtime_s);
    let file = jobs::parse_str(&text, &p.name(), &|_| None).map_err(|e| bad(e.to_string()))?;
    let device =
        sim::DeviceProfile::parse(device, "the fitted profile").map_err(|e| bad(e.to_string()))?;
    let config = emu::EmuConfig {
        backend: Some(emu::backend::BackendSpec::device(device, 1)),
        policy: policy::PolicySpec::named(completion_path(p.target).unwrap_or("default")),
        ..emu::EmuConfig::default()
    };
    let r = emu::run(&file.jobs, &config).map_err(|e| bad(e.to_string()))?;
    if r.completed_ios() == 0 {
        return Err(bad("no I/O completed".into()));
    }
    Ok((
        predicted(p, metrics_of(&r, p.pattern.latency_of_writes())),
        r,
    ))
}

/// A model's metrics of `p` as predictions: no interrupt count where the
/// target's completions raise none ([`completion_path`]): NaN, which the
/// table shows as n/a and leaves out of every error.
fn predicted(p: &Point, mut m: Metrics) -> Metrics {
    if completion_path(p.target).is_none() {
        m.irq_per_io = f64::NAN;
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples() -> Vec<service::fit::Sample> {
        (0..100u64)
            .map(|i| service::fit::Sample {
                write: i % 3 == 0,
                bytes: 4096,
                issue: i * 200_000,
                complete: i * 200_000 + 90_000 + (i % 7) * 1_000,
            })
            .collect()
    }

    #[test]
    fn the_measured_queues_replace_the_fits_default_and_the_profile_loads() {
        let f = fit_device("disk", &samples(), "a test", Some(1)).unwrap();
        let d = sim::DeviceProfile::parse(&f.profile, "test").unwrap();
        assert_eq!(d.queues, 1, "{}", f.profile);
        let g = fit_device("zram", &samples(), "a test", None).unwrap();
        let e = sim::DeviceProfile::parse(&g.profile, "test").unwrap();
        assert!(e.queues > 1, "the fit's default kept");
    }

    #[test]
    fn zram_has_no_interrupt_to_predict_and_the_virtio_targets_do() {
        assert_eq!(completion_path(Target::Zram), None);
        assert_eq!(completion_path(Target::Disk), Some("virtio"));
        assert_eq!(completion_path(Target::Loop), Some("virtio"));
        // The strategy is one the catalogue builds.
        policy::build(&policy::PolicySpec::named("virtio")).unwrap();
    }
}
