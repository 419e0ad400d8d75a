//! One point run for real: fio under `capture` (crates/capture), its JSON
//! and the recorded interrupts read into the point's metrics.
//!
//! - **Latency** is fio's `lat_ns` (from the submit call's start to the
//!   completion reaped; `--lat_percentiles=1` for its percentiles), not
//!   `clat_ns`: the simulator's latency runs "from the start of the submit
//!   call to the return of the call that hands the completion to the
//!   thread" (crates/sim/src/world/thread.rs), and fio's clat for libaio and
//!   io_uring starts only when the submit call has returned (`issue_time`
//!   is taken after `io_submit`, engines/libaio.c `fio_libaio_queued`), so
//!   an I/O served inside the call (zram's, synchronous) has a clat below
//!   1 us and a lat of its whole time. For psync fio records no slat and
//!   lat is clat. A 70/30 mix reports its reads' latency
//!   (`Pattern::latency_of_writes`).
//! - **Interrupts per I/O** are the device's vectors' `irq_handler_entry`
//!   events capture's tracefs instance recorded while fio ran, over fio's
//!   I/Os. The vectors are the device's PCI function's MSI-X vectors
//!   (`/sys/block/DEV/device/../msi_irqs`: 35 and 36 for virtio1 here); a
//!   loop device's are its backing file's disk's (its requests complete
//!   when the disk's do, drivers/block/loop.c `lo_rw_aio_complete`); a
//!   zram device has none (it completes each bio in the submitter's
//!   context, drivers/block/zram/zram_drv.c `zram_submit_bio`). tracefs
//!   rather than /proc/interrupts because it is the measure and it
//!   says which CPU and when; capture sets the kernel's own count beside it
//!   and both are kept.
//! - **CPU per I/O** is fio's `usr_cpu + sys_cpu` over its `job_runtime`
//!   (fio's getrusage of its job processes, summed over the group's jobs
//!   with group_reporting) over its I/Os: the job's own CPU, as the
//!   simulator's `usr_ns + sys_ns` is, and blind to the other programs on
//!   this shared machine (which /proc/stat deltas are not).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::design::{Point, Target};
use crate::devices::{disk_of, Targets};
use crate::ValidateError;

/// One point's measured metrics.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Metrics {
    pub iops: f64,
    /// ns.
    pub mean: f64,
    pub p50: f64,
    pub p99: f64,
    pub p999: f64,
    pub irq_per_io: f64,
    /// ns of CPU per I/O.
    pub cpu_per_io: f64,
}

/// What a real run gave besides the metrics.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Measured {
    pub metrics: Metrics,
    /// fio's completed I/Os (both directions, all jobs).
    pub ios: u64,
    /// fio's `job_runtime`, ms: the jobs' run times summed
    /// (group_reporting); longer than the asked-for time when an I/O
    /// stalled at the end.
    pub job_runtime_ms: f64,
    /// The device vectors' interrupts: recorded by tracefs, counted by
    /// /proc/interrupts, while fio ran.
    pub irqs_recorded: u64,
    pub irqs_counted: u64,
    pub vectors: Vec<u32>,
    /// The I/Os the traced block device completed while fio ran (its
    /// `stat`): above `ios`, another program used the device too.
    pub device_completions: u64,
    /// Trace events the buffer lost.
    pub lost_events: u64,
    /// Seconds the run took on the wall clock, capture's set-up included.
    pub wall_s: f64,
}

/// The interrupt vectors of the block device `dev` (`/dev/NAME`), as the
/// module says.
pub fn vectors(dev: &Path, targets: &Targets, target: Target) -> Vec<u32> {
    let real = match target {
        Target::Zram => return Vec::new(),
        Target::Loop => match disk_of(&targets.dir.join("loop.data")) {
            Ok(d) => d,
            Err(_) => return Vec::new(),
        },
        Target::Disk => dev.to_path_buf(),
    };
    let name = real
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let Ok(function) = std::fs::canonicalize(format!("/sys/block/{name}/device/..")) else {
        return Vec::new();
    };
    let mut v: Vec<u32> = std::fs::read_dir(function.join("msi_irqs"))
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// fio's command line for `p` on `file` for `runtime_s` seconds.
pub fn fio_args(p: &Point, file: &Path, size: u64, runtime_s: f64, json: &Path) -> Vec<String> {
    let mut a = vec![
        "fio".to_string(),
        format!("--name={}", p.name()),
        format!("--filename={}", file.display()),
        format!("--size={size}"),
        format!("--runtime={}ms", (runtime_s * 1000.0).round() as u64),
        "--time_based=1".into(),
        "--group_reporting=1".into(),
        "--output-format=json".into(),
        "--lat_percentiles=1".into(),
        format!("--output={}", json.display()),
    ];
    for l in p.shape_options().lines() {
        a.push(format!("--{l}"));
    }
    a
}

fn num(v: &serde_json::Value, path: &[&str]) -> Result<f64, String> {
    let mut x = v;
    for k in path {
        x = x.get(*k).ok_or_else(|| format!("no {}", path.join(".")))?;
    }
    x.as_f64()
        .ok_or_else(|| format!("{} is not a number", path.join(".")))
}

/// The metrics of fio's JSON (`--group_reporting`: one job entry).
pub fn from_fio_json(text: &str, p: &Point) -> Result<(Metrics, u64, f64), String> {
    let doc: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("fio's JSON: {e}"))?;
    let job = doc
        .get("jobs")
        .and_then(|j| j.get(0))
        .ok_or("fio's JSON: no jobs")?;
    let dir = if p.pattern.latency_of_writes() {
        "write"
    } else {
        "read"
    };
    let ios = num(job, &["read", "total_ios"])? + num(job, &["write", "total_ios"])?;
    let iops = num(job, &["read", "iops"])? + num(job, &["write", "iops"])?;
    let pct = |q: &str| num(job, &[dir, "lat_ns", "percentile", q]);
    let cpu_pct = num(job, &["usr_cpu"])? + num(job, &["sys_cpu"])?;
    let runtime_ms = num(job, &["job_runtime"])?;
    if ios <= 0.0 {
        return Err("fio completed no I/O".into());
    }
    Ok((
        Metrics {
            iops,
            mean: num(job, &[dir, "lat_ns", "mean"])?,
            p50: pct("50.000000")?,
            p99: pct("99.000000")?,
            p999: pct("99.900000")?,
            irq_per_io: f64::NAN,
            cpu_per_io: cpu_pct / 100.0 * runtime_ms * 1e6 / ios,
        },
        ios as u64,
        runtime_ms,
    ))
}

/// Runs `p` under capture; the trace is left at `trace`.
pub fn run_point(
    p: &Point,
    targets: &Targets,
    runtime_s: f64,
    trace: &Path,
) -> Result<Measured, ValidateError> {
    let file = targets.filename(p.target);
    let dev = targets.block_device(p.target)?;
    let json = PathBuf::from(format!("{}.fio.json", trace.display()));
    let args = fio_args(p, file, targets.size, runtime_s, &json);
    let start = std::time::Instant::now();
    let s = capture::run(&capture::Options {
        out: trace.to_path_buf(),
        devices: vec![dev.clone()],
        duration: None,
        program: args.iter().map(Into::into).collect(),
        buffer_kb: None,
    })
    .map_err(|e| ValidateError::Run(p.name(), e.to_string()))?;
    let wall_s = start.elapsed().as_secs_f64();
    // A recording that lost events is kept (the point's table row shows
    // the count) but marked partial, and said, as capture --allow-loss
    // does (issue 41 item 0).
    if s.loss.any() {
        let _ = traces::partial::mark(trace, &s.loss.line());
        eprintln!(
            "validate: {}",
            traces::partial::warning(trace, &s.loss.line())
        );
    } else {
        let _ = traces::partial::unmark(trace);
    }
    if !s.status.is_some_and(|st| st.success()) {
        return Err(ValidateError::Run(
            p.name(),
            format!("fio failed ({:?}): {}", s.status, args.join(" ")),
        ));
    }
    let text = std::fs::read_to_string(&json)
        .map_err(|e| ValidateError::Run(p.name(), format!("{}: {e}", json.display())))?;
    let _ = std::fs::remove_file(&json);
    let (mut metrics, ios, job_runtime_ms) =
        from_fio_json(&text, p).map_err(|e| ValidateError::Run(p.name(), e))?;
    let vectors = vectors(&dev, targets, p.target);
    let (mut recorded, mut counted) = (0, 0);
    for v in &vectors {
        if let Some((r, c)) = s.per_irq.get(v) {
            recorded += r;
            counted += c;
        }
    }
    metrics.irq_per_io = recorded as f64 / ios as f64;
    let device_completions = s.per_device.values().map(|c| c.counted).sum();
    let _ = std::fs::remove_file(&s.irq_out);
    Ok(Measured {
        metrics,
        ios,
        job_runtime_ms,
        irqs_recorded: recorded,
        irqs_counted: counted,
        vectors,
        device_completions,
        lost_events: s.lost,
        wall_s,
    })
}
