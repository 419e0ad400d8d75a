//! The emulator measured (`cinterrupts bench emu`): the paper's Table 2
//! experiment, a QD1 4 KiB random read through the emulator against the
//! same read with io_uring straight from a pinned thread, then the device
//! thread's capacity (completions per second on a null device with enough
//! in flight that the device, not the host, should be the limit).
//!
//! [`run`] returns the measurements as an [`EmuBench`], which renders as
//! text ([`EmuBench::text`]) or JSON ([`EmuBench::json`]).

use std::path::PathBuf;

use policy::{Nanos, PolicySpec};
use report::LatencyStats;

use crate::backend::BackendSpec;
use crate::config::{Delivery, EmuConfig};
use crate::direct;
use crate::error::EmuError;
use crate::run::{run as run_jobs, run_audited};
use crate::sys;

mod render;

/// The read test's file size.
pub const FILE_SIZE: u64 = 256 << 20;
/// The read test's block size.
pub const BS: u32 = 4096;
/// The capacity test: enough in flight, submitted and reaped in batches,
/// that the device thread (and not the host) should be the limit.
pub const CAPACITY_BACKEND: &str = "null:0,depth=1024";
pub const CAPACITY_POLICY: &str = "cint";
/// Goals: the paper's emulator adds 3-6% to a QD1 read, and its device
/// thread sustains over 2M completions per second.
pub const OVERHEAD_GOAL: f64 = 1.06;
pub const CAPACITY_GOAL: f64 = 2e6;
/// A device thread busy in more than this share of its passes is the limit.
pub const DEVICE_BOUND_SHARE: f64 = 0.9;

/// What to measure on.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    /// The file to read (laid out to [`FILE_SIZE`] when missing or short,
    /// and kept); `None`: a scratch file in the temporary folder, removed
    /// after.
    pub file: Option<PathBuf>,
    /// How long each of the four measurements runs.
    pub runtime: Nanos,
}

/// One latency distribution, ns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Latency {
    pub mean: f64,
    pub p50: u64,
    pub p99: u64,
    pub reads: u64,
}

impl Latency {
    fn of(s: &LatencyStats) -> Latency {
        Latency {
            mean: s.mean,
            p50: s.percentile(50.0),
            p99: s.percentile(99.0),
            reads: s.samples,
        }
    }
}

/// What `bench emu` measured.
#[derive(Clone, Debug, PartialEq)]
pub struct EmuBench {
    pub file: String,
    /// The job thread's CPU (and the direct reader's).
    pub cpu: usize,
    pub runtime_ns: u64,
    pub direct: Latency,
    /// Through the emulator, polled delivery.
    pub emulated: Latency,
    /// Through the emulator, wake-up delivery.
    pub wake: Latency,
    pub device_completions_per_sec: f64,
    pub device_busy_share: f64,
}

impl EmuBench {
    pub fn overhead_ratio(&self) -> f64 {
        ratio(self.emulated.mean, self.direct.mean)
    }

    pub fn wake_ratio(&self) -> f64 {
        ratio(self.wake.mean, self.direct.mean)
    }
}

/// `num / den`, or 0 when `den` is not positive (no NaN in the output).
fn ratio(num: f64, den: f64) -> f64 {
    if den > 0.0 && num.is_finite() {
        num / den
    } else {
        0.0
    }
}

/// The QD1 read through the emulator; the baseline reads the same way.
fn qd1_job(cpu: usize) -> String {
    format!(
        "[qd1]\nioengine=io_uring\niodepth=1\nrw=randread\nbs=4k\ndirect=1\ncpus_allowed={cpu}\nsize=256m\ntime_based\nruntime=1\n"
    )
}

fn capacity_job(cpu: usize) -> String {
    format!(
        "[cap]\nioengine=io_uring\niodepth=256\niodepth_batch_submit=32\niodepth_batch_complete_min=32\nrw=randread\nbs=4k\ncpus_allowed={cpu}\nsize=1g\ntime_based\nruntime=1\n"
    )
}

fn parse(text: &str, name: &str) -> Result<Vec<jobs::Job>, EmuError> {
    jobs::parse_str(text, name, &|_| None)
        .map(|f| f.jobs)
        .map_err(|e| EmuError::Bench(e.to_string()))
}

/// The bench's file: removed on drop (on success and on error alike) when
/// the bench made it up, kept when the user named it.
struct BenchFile {
    path: PathBuf,
    remove: bool,
}

impl Drop for BenchFile {
    fn drop(&mut self) {
        if self.remove {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Takes the four measurements: the direct read, the emulated read with
/// polled and with wake-up delivery, and the device's capacity.
pub fn run(cfg: &BenchConfig) -> Result<EmuBench, EmuError> {
    let file = match &cfg.file {
        Some(path) => BenchFile {
            path: path.clone(),
            remove: false,
        },
        None => BenchFile {
            path: std::env::temp_dir()
                .join(format!("cinterrupts-bench-{}.dat", std::process::id())),
            remove: true,
        },
    };
    let path = file.path.as_path();
    // The emulator lays out a missing or short file; the backend it opens is
    // dropped at once (each run below opens its own).
    drop(
        BackendSpec::file(path)
            .open(Some(FILE_SIZE), 8)
            .map_err(EmuError::Backend)?,
    );
    // The device thread takes the highest CPU no job names: the job names
    // the lowest CPU (0 here), and the baseline reads from it too, so both
    // measure a job thread on the same CPU.
    let cpu = sys::allowed_cpus().first().copied().unwrap_or(0);
    let runtime = cfg.runtime;

    let direct = direct::qd1_randread(path, FILE_SIZE, BS, cpu, runtime)
        .map_err(|e| EmuError::Bench(format!("direct QD1 read: {e}")))?;
    if direct.is_empty() {
        return Err(EmuError::Bench("direct QD1 read: no read completed".into()));
    }
    let direct = Latency::of(&LatencyStats::from_histogram(&direct));
    let emulated = emulated_qd1(path, cpu, runtime, Delivery::Poll)?;
    let wake = emulated_qd1(path, cpu, runtime, Delivery::Wake)?;
    let (device_completions_per_sec, device_busy_share) = capacity(cpu, runtime)?;
    Ok(EmuBench {
        file: path.display().to_string(),
        cpu,
        runtime_ns: runtime,
        direct,
        emulated,
        wake,
        device_completions_per_sec,
        device_busy_share,
    })
}

/// The QD1 read of `path` through the emulator, with `delivery`.
fn emulated_qd1(
    path: &std::path::Path,
    cpu: usize,
    runtime: Nanos,
    delivery: Delivery,
) -> Result<Latency, EmuError> {
    let what = format!("emulated QD1 read (delivery={})", delivery.as_str());
    let jobs = parse(&qd1_job(cpu), "qd1.fio")?;
    let config = EmuConfig {
        backend: Some(BackendSpec::file(path)),
        policy: PolicySpec::named("default"),
        runtime: Some(runtime),
        delivery,
        ..EmuConfig::default()
    };
    let report = run_jobs(&jobs, &config).map_err(|e| EmuError::Bench(format!("{what}: {e}")))?;
    let read = &report
        .jobs
        .first()
        .ok_or_else(|| EmuError::Bench("the emulator reported no job".into()))?
        .read;
    if read.errors > 0 {
        return Err(EmuError::Bench(format!(
            "{what}: {} read errors",
            read.errors
        )));
    }
    if read.clat.samples == 0 {
        return Err(EmuError::Bench(format!("{what}: no read completed")));
    }
    Ok(Latency::of(&read.clat))
}

/// The device thread's capacity: completions per second in the measured
/// window, and the share of its passes that found work.
fn capacity(cpu: usize, runtime: Nanos) -> Result<(f64, f64), EmuError> {
    let jobs = parse(&capacity_job(cpu), "cap.fio")?;
    let config = EmuConfig {
        backend: Some(BackendSpec::parse(CAPACITY_BACKEND).map_err(EmuError::Bench)?),
        policy: PolicySpec::named(CAPACITY_POLICY),
        runtime: Some(runtime),
        ..EmuConfig::default()
    };
    let (report, audit) = run_audited(&jobs, &config)
        .map_err(|e| EmuError::Bench(format!("device capacity run: {e}")))?;
    // report.completions over report.duration_ns rather than
    // audit.device.completed: the report's two cover the same measured
    // window (from the jobs' start to the last job's stop), while the
    // device's count runs over the device thread's whole life (before the
    // jobs start and through the drain after they stop), longer than the
    // window it would be divided by. In the window the host reaps what the
    // device completes (a closed loop), so the two differ only by the
    // commands in flight at the edges.
    let seconds = report.duration_ns as f64 / 1e9;
    if report.completions == 0 || seconds <= 0.0 {
        return Err(EmuError::Bench(
            "device capacity run: no completion in the measured window".into(),
        ));
    }
    // The share of the device loop's passes that fetched or completed a
    // command. A busy pass takes longer than an idle one, so the share of
    // time is higher than this; a low share still says the device thread
    // waited for the host.
    Ok((
        ratio(report.completions as f64, seconds),
        ratio(audit.device.busy_passes as f64, audit.device.passes as f64),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_are_never_nan() {
        assert_eq!(ratio(5.0, 0.0), 0.0);
        assert_eq!(ratio(f64::NAN, 2.0), 0.0);
        assert_eq!(ratio(3.0, 2.0), 1.5);
    }

    #[test]
    fn the_bench_jobs_parse_on_the_named_cpu() {
        for text in [qd1_job(0), capacity_job(0)] {
            let file = jobs::parse_str(&text, "bench.fio", &|_| None).unwrap();
            assert_eq!(file.jobs.len(), 1);
            assert_eq!(file.jobs[0].cpus(), Some(vec![0]));
        }
    }
}
