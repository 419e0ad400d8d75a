//! `cinterrupts bench`: how fast the workbench itself runs, on a fixed
//! workload, so a change to the engine can be measured before and after.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Subcommand};
use emu::backend::BackendSpec;
use emu::handler::Delivery;
use emu::EmuConfig;
use policy::PolicySpec;
use report::LatencyStats;
use serde_json::json;

use crate::args::{self, OutputFormat};

#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub target: BenchTarget,
}

#[derive(Subcommand, Debug)]
pub enum BenchTarget {
    /// Time the simulator: simulated completions per wall-clock second
    ///
    /// Runs examples/mixed-16.fio (built in) on optane and xeon-e5-2660v4 with
    /// cint and seed 1, three times, and reports the best and the median.
    /// With --cores N, runs it on each of 1, 2, 4, ... N busy cores (the
    /// device grown with them) and prints the cost per simulated completion
    /// and the memory per core. Build with --release for meaningful numbers.
    Sim(BenchSimArgs),
    /// Measure the emulator against io_uring straight (the paper's Table 2)
    ///
    /// A QD1 4 KiB random read on a 256 MiB file from a thread on CPU 0:
    /// first with io_uring directly, then through the emulator (delivery
    /// poll, then wake); the ratio is the emulator's overhead. Then the
    /// device thread's capacity: completions per second on null:0 at
    /// iodepth 256. Build with --release for meaningful numbers.
    Emu(BenchEmuArgs),
}

#[derive(Args, Debug)]
pub struct BenchEmuArgs {
    /// Results as text or JSON
    #[arg(long, value_enum, default_value = "normal", value_name = "FORMAT")]
    pub output_format: OutputFormat,
    /// The file to read (laid out to 256 MiB when missing or short, and
    /// kept); default: a scratch file in the temporary folder, removed after
    #[arg(long, value_name = "PATH")]
    pub file: Option<PathBuf>,
    /// How long each of the four measurements runs
    #[arg(long, value_parser = args::runtime, default_value = "2s", value_name = "TIME")]
    pub runtime: u64,
}

#[derive(Args, Debug)]
pub struct BenchSimArgs {
    /// Results as text or JSON
    #[arg(long, value_enum, default_value = "normal", value_name = "FORMAT")]
    pub output_format: OutputFormat,
    /// Virtual time each run simulates
    #[arg(long, value_parser = args::runtime, default_value = "2s", value_name = "TIME")]
    pub runtime: u64,
    /// Also run the workload on each of 1, 2, 4, ... N cores (one copy
    /// pinned to each) and print a row per core count
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub cores: Option<u32>,
}

pub fn run(args: &BenchArgs) -> Result<()> {
    match &args.target {
        BenchTarget::Sim(a) => bench_sim(a),
        BenchTarget::Emu(a) => bench_emu(a),
    }
}

fn bench_sim(args: &BenchSimArgs) -> Result<()> {
    let json = |v: serde_json::Value| {
        let mut s = serde_json::to_string_pretty(&v).expect("a JSON value always serializes");
        s.push('\n');
        s
    };
    let out = match args.cores {
        None => {
            let bench = sim::bench::run(args.runtime)?;
            match args.output_format {
                OutputFormat::Normal => bench.text(),
                OutputFormat::Json => json(bench.json()),
            }
        }
        Some(n) => {
            let bench = sim::bench::run_cores(args.runtime, n as usize)?;
            match args.output_format {
                OutputFormat::Normal => bench.text(),
                OutputFormat::Json => json(bench.json()),
            }
        }
    };
    print!("{out}");
    Ok(())
}

/// The read test's file size.
const EMU_FILE_SIZE: u64 = 256 << 20;
const EMU_BS: u32 = 4096;
/// The capacity test: enough in flight, submitted and reaped in batches, that
/// the device thread (and not the host) should be the limit.
const CAPACITY_BACKEND: &str = "null:0,depth=1024";
const CAPACITY_POLICY: &str = "cint";
/// Goals: the paper's emulator adds 3-6% to a QD1 read, and its device
/// thread sustains over 2M completions per second.
const OVERHEAD_GOAL: f64 = 1.06;
const CAPACITY_GOAL: f64 = 2e6;
/// A device thread busy in more than this share of its passes is the limit.
const DEVICE_BOUND_SHARE: f64 = 0.9;

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
    pub cpu: usize,
    pub runtime_ns: u64,
    pub direct: Latency,
    pub emulated: Latency,
    pub wake: Latency,
    pub device_completions_per_sec: f64,
    pub device_busy_share: f64,
}

/// `num / den`, or 0 when `den` is not positive (no NaN in the output).
pub fn ratio(num: f64, den: f64) -> f64 {
    if den > 0.0 && num.is_finite() {
        num / den
    } else {
        0.0
    }
}

/// `32000` as `32,000`.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn us(ns: f64) -> String {
    format!("{:.1} us", ns / 1e3)
}

/// A rate at a readable scale: `2.4M`, `86.1k`, `950`.
pub fn per_sec(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.1}M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.1}k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

/// Which side limited the capacity run, from the device thread's busy share.
pub fn bottleneck(busy_share: f64) -> &'static str {
    if busy_share >= DEVICE_BOUND_SHARE {
        "the device thread is the bottleneck"
    } else {
        "the host side (job thread, interrupt handling) is the bottleneck"
    }
}

impl EmuBench {
    pub fn overhead_ratio(&self) -> f64 {
        ratio(self.emulated.mean, self.direct.mean)
    }

    pub fn wake_ratio(&self) -> f64 {
        ratio(self.wake.mean, self.direct.mean)
    }

    pub fn text(&self) -> String {
        let lat = |l: &Latency| {
            format!(
                "mean {} (p50 {}, p99 {}), {} reads",
                us(l.mean),
                us(l.p50 as f64),
                us(l.p99 as f64),
                grouped(l.reads)
            )
        };
        let mut s = format!(
            "bench emu: QD1 4 KiB random read on {} ({} MiB), job thread on CPU {}, {} per measurement\n",
            self.file,
            EMU_FILE_SIZE >> 20,
            self.cpu,
            policy::format_nanos(self.runtime_ns)
        );
        let _ = writeln!(s, "  direct io_uring        : {}", lat(&self.direct));
        let _ = writeln!(
            s,
            "  through the emulator   : {}  [delivery=poll, policy default]",
            lat(&self.emulated)
        );
        let _ = writeln!(
            s,
            "  overhead ratio         : {:.2} (goal <= {OVERHEAD_GOAL:.2}, the paper's 3-6%)",
            self.overhead_ratio()
        );
        if self.overhead_ratio() < 1.0 {
            // Measured here once: with SCHED_IDLE spinners keeping both
            // CPUs awake, the direct read's mean fell from 122 us to 88 us.
            s.push_str("    (below 1: the direct reader sleeps in io_uring_enter, so each read pays this VM's halt and cross-core wake-up (PLATFORM.md section 3); the emulator's threads busy-poll instead)\n");
        }
        let _ = writeln!(
            s,
            "  with delivery=wake     : {} (ratio {:.2}): a cross-core wake-up per interrupt here",
            lat(&self.wake),
            self.wake_ratio()
        );
        let _ = writeln!(
            s,
            "device capacity ({CAPACITY_BACKEND}, {CAPACITY_POLICY}, io_uring iodepth 256): {} completions/s (goal >= {}), device thread busy {:.0}% of passes: {}",
            per_sec(self.device_completions_per_sec),
            per_sec(CAPACITY_GOAL),
            self.device_busy_share * 100.0,
            bottleneck(self.device_busy_share)
        );
        if cfg!(debug_assertions) {
            s.push_str("  (a debug build: timings mean little without --release)\n");
        }
        s
    }

    pub fn json(&self) -> serde_json::Value {
        json!({
            "bench": "emu",
            "overhead_ratio": self.overhead_ratio(),
            "direct_mean_us": self.direct.mean / 1e3,
            "emulated_mean_us": self.emulated.mean / 1e3,
            "wake_mean_us": self.wake.mean / 1e3,
            "wake_ratio": self.wake_ratio(),
            "device_completions_per_sec": self.device_completions_per_sec,
            "device_busy_share": self.device_busy_share,
            "file": self.file,
            "cpu": self.cpu,
            "runtime_s": self.runtime_ns as f64 / 1e9,
            "direct_reads": self.direct.reads,
            "emulated_reads": self.emulated.reads,
            "wake_reads": self.wake.reads,
            "debug_build": cfg!(debug_assertions),
        })
    }
}

/// The QD1 read of `path` through the emulator, with `delivery`.
fn emulated_qd1(path: &Path, cpu: usize, runtime: u64, delivery: Delivery) -> Result<Latency> {
    let what = format!("emulated QD1 read (delivery={})", delivery.as_str());
    let file = jobs::parse_str(&qd1_job(cpu), "qd1.fio", &|_| None)?;
    let config = EmuConfig {
        backend: Some(BackendSpec::file(path)),
        policy: PolicySpec::named("default"),
        runtime: Some(runtime),
        delivery,
        ..EmuConfig::default()
    };
    let report = emu::run(&file.jobs, &config).map_err(|e| anyhow!("{what}: {e}"))?;
    let read = &report
        .jobs
        .first()
        .context("the emulator reported no job")?
        .read;
    if read.errors > 0 {
        bail!("{what}: {} read errors", read.errors);
    }
    if read.clat.samples == 0 {
        bail!("{what}: no read completed");
    }
    Ok(Latency::of(&read.clat))
}

fn bench_emu(args: &BenchEmuArgs) -> Result<()> {
    let file = match &args.file {
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
            .open(Some(EMU_FILE_SIZE), 8)
            .map_err(|e| anyhow!(e))?,
    );
    // The device thread takes the highest CPU no job names: the job names
    // the lowest CPU (0 here), and the baseline reads from it too, so both
    // measure a job thread on the same CPU.
    let cpu = emu::sys::allowed_cpus().first().copied().unwrap_or(0);
    let runtime = args.runtime;

    let direct = emu::direct::qd1_randread(path, EMU_FILE_SIZE, EMU_BS, cpu, runtime)
        .map_err(|e| anyhow!("direct QD1 read: {e}"))?;
    if direct.is_empty() {
        bail!("direct QD1 read: no read completed");
    }
    let direct = Latency::of(&LatencyStats::from_histogram(&direct));
    let emulated = emulated_qd1(path, cpu, runtime, Delivery::Poll)?;
    let wake = emulated_qd1(path, cpu, runtime, Delivery::Wake)?;

    let cap = jobs::parse_str(&capacity_job(cpu), "cap.fio", &|_| None)?;
    let config = EmuConfig {
        backend: Some(BackendSpec::parse(CAPACITY_BACKEND).map_err(|e| anyhow!(e))?),
        policy: PolicySpec::named(CAPACITY_POLICY),
        runtime: Some(runtime),
        ..EmuConfig::default()
    };
    let (report, audit) =
        emu::run_audited(&cap.jobs, &config).map_err(|e| anyhow!("device capacity run: {e}"))?;
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
        bail!("device capacity run: no completion in the measured window");
    }
    let device_completions_per_sec = ratio(report.completions as f64, seconds);
    // The share of the device loop's passes that fetched or completed a
    // command. A busy pass takes longer than an idle one, so the share of
    // time is higher than this; a low share still says the device thread
    // waited for the host.
    let device_busy_share = ratio(audit.device.busy_passes as f64, audit.device.passes as f64);

    let bench = EmuBench {
        file: path.display().to_string(),
        cpu,
        runtime_ns: runtime,
        direct,
        emulated,
        wake,
        device_completions_per_sec,
        device_busy_share,
    };
    let out = match args.output_format {
        OutputFormat::Normal => bench.text(),
        OutputFormat::Json => {
            let mut s = serde_json::to_string_pretty(&bench.json())
                .expect("a JSON value always serializes");
            s.push('\n');
            s
        }
    };
    print!("{out}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bench() -> EmuBench {
        let lat = |mean: f64, reads: u64| Latency {
            mean,
            p50: 60_000,
            p99: 120_500,
            reads,
        };
        EmuBench {
            file: "/tmp/b.dat".into(),
            cpu: 0,
            runtime_ns: 2_000_000_000,
            direct: lat(61_200.0, 32_000),
            emulated: lat(63_036.0, 31_000),
            wake: lat(95_000.0, 21_000),
            device_completions_per_sec: 2_400_000.0,
            device_busy_share: 0.37,
        }
    }

    #[test]
    fn ratios_are_over_the_direct_mean_and_never_nan() {
        let b = bench();
        assert!((b.overhead_ratio() - 1.03).abs() < 1e-9);
        assert!((b.wake_ratio() - 95.0 / 61.2).abs() < 1e-9);
        assert_eq!(ratio(5.0, 0.0), 0.0);
        assert_eq!(ratio(f64::NAN, 2.0), 0.0);
        assert_eq!(ratio(3.0, 2.0), 1.5);
    }

    #[test]
    fn counts_and_rates_read_easily() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1_000), "1,000");
        assert_eq!(grouped(32_000), "32,000");
        assert_eq!(grouped(1_234_567), "1,234,567");
        assert_eq!(per_sec(2_400_000.0), "2.4M");
        assert_eq!(per_sec(86_100.0), "86.1k");
        assert_eq!(per_sec(950.0), "950");
    }

    #[test]
    fn the_busy_share_names_the_bottleneck() {
        assert!(bottleneck(0.37).starts_with("the host side"));
        assert!(bottleneck(0.95).starts_with("the device thread"));
    }

    #[test]
    fn the_text_gives_each_measurement_a_line() {
        let text = bench().text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "bench emu: QD1 4 KiB random read on /tmp/b.dat (256 MiB), job thread on CPU 0, 2s per measurement"
        );
        assert_eq!(
            lines[1],
            "  direct io_uring        : mean 61.2 us (p50 60.0 us, p99 120.5 us), 32,000 reads"
        );
        assert!(lines[2].starts_with("  through the emulator   : mean 63.0 us"));
        assert!(lines[2].ends_with("[delivery=poll, policy default]"));
        assert_eq!(
            lines[3],
            "  overhead ratio         : 1.03 (goal <= 1.06, the paper's 3-6%)"
        );
        assert!(lines[4].starts_with("  with delivery=wake     : mean 95.0 us"));
        assert!(lines[4].contains("(ratio 1.55)"));
        assert!(!text.contains("below 1"));
        assert!(lines[5].starts_with(
            "device capacity (null:0,depth=1024, cint, io_uring iodepth 256): 2.4M completions/s (goal >= 2.0M), device thread busy 37% of passes"
        ));
    }

    #[test]
    fn a_ratio_below_one_is_explained() {
        let mut b = bench();
        b.emulated.mean = 50_000.0;
        let text = b.text();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[3].contains(": 0.82 (goal"), "{text}");
        assert!(lines[4].starts_with("    (below 1: the direct reader sleeps"));
        assert!(lines[5].starts_with("  with delivery=wake"));
    }

    #[test]
    fn the_json_has_every_key_as_measured() {
        let v = bench().json();
        assert!((v["overhead_ratio"].as_f64().unwrap() - 1.03).abs() < 1e-9);
        assert_eq!(v["direct_mean_us"], 61.2);
        assert_eq!(v["emulated_mean_us"], 63.036);
        assert_eq!(v["wake_mean_us"], 95.0);
        assert_eq!(v["device_completions_per_sec"], 2_400_000.0);
        assert_eq!(v["device_busy_share"], 0.37);
        assert_eq!(v["file"], "/tmp/b.dat");
        assert_eq!(v["runtime_s"], 2.0);
        assert!(v["wake_ratio"].as_f64().unwrap() > 1.5);
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
