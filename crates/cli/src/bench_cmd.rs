//! `cinterrupts bench`: how fast the workbench itself runs, on a fixed
//! workload, so a change to the engine can be measured before and after.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};

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
    /// and the memory per core. With --apps, runs 16 closed-loop application
    /// threads on a 24-core host for a million operations and for four
    /// million, and prints the wall time of each and the simulator's state
    /// (flat with run length). Build with --release for meaningful numbers.
    Sim(BenchSimArgs),
    /// Measure the emulator against io_uring straight (the paper's Table 2)
    ///
    /// A QD1 4 KiB random read on a 256 MiB file from a thread on CPU 0:
    /// first with io_uring directly, then through the emulator (delivery
    /// poll, then wake); the ratio is the emulator's overhead. Then the
    /// device thread's capacity: completions per second on null:0 at
    /// iodepth 256. Build with --release for meaningful numbers.
    Emu(BenchEmuArgs),
    /// Cross-validate: one fio job under `run` (our fio loop) and under
    /// `exec` with the real fio, same policy and device (issue 14 item 7)
    ///
    /// Prints IOPS, mean latency and interrupts per completion of each
    /// side, the ratio exec/run and whether it is within the bounds
    /// (15%, 15%, 10%). Jobs: examples/crossval/*.fio. Build with --release.
    Exec(BenchExecArgs),
    /// Time reading, coalescing and replaying traces (issue 41 item 7)
    ///
    /// Generates traces in memory (Alibaba CSV, blkparse text,
    /// libCacheSim's oracleGeneral binary) and prints lines per second of
    /// parsing each, requests per second of `coalesce --trace` (cint, and
    /// every strategy) and of `sim --trace` open loop, the replay's peak
    /// bytes per request, each beside its goal and the committed baseline
    /// (crates/sim/bench/baseline-traces.json) with the ratio, and the load
    /// average. Build with --release for meaningful numbers.
    Traces(BenchTracesArgs),
}

#[derive(Args, Debug)]
pub struct BenchTracesArgs {
    /// Results as text or JSON
    #[arg(long, value_enum, default_value = "normal", value_name = "FORMAT")]
    pub output_format: OutputFormat,
    /// A CI-sized run (a few thousand requests instead of 400K): shows
    /// every figure; its ratios compare unlike runs
    #[arg(long)]
    pub quick: bool,
    /// Requests to generate, instead of 400K (or --quick's)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1000..=100_000_000), conflicts_with = "quick")]
    pub requests: Option<u64>,
    /// Compare with this baseline (saved by --save-baseline) instead of
    /// the committed one
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Save this run's figures, the date, the machine and its load as a
    /// baseline (JSON)
    #[arg(long, value_name = "FILE")]
    pub save_baseline: Option<PathBuf>,
    /// With --save-baseline: the commit the binary was built from, kept in
    /// the baseline
    #[arg(long, value_name = "REV", requires = "save_baseline")]
    pub commit: Option<String>,
}

#[derive(Args, Debug)]
pub struct BenchExecArgs {
    /// fio job file (both sides read it; real fio lays out its file)
    #[arg(required_unless_present = "cost")]
    pub job_file: Option<PathBuf>,
    /// Instead: what routing costs (issue 38 item 2). fio natively and under
    /// `exec` on FILE (put it on a fast device: zram), psync QD1, io_uring
    /// QD1 and QD16, each with native beside it and its delay split;
    /// then an idle program's exec CPU. Run it alone, under
    /// `flock /tmp/cint-measure.lock`
    #[arg(long, value_name = "FILE", conflicts_with = "job_file")]
    pub cost: Option<PathBuf>,
    /// With --cost: a JSON of an earlier `--cost --output-format json`
    /// run, whose exec figures are set beside these as ratios
    #[arg(long, value_name = "FILE", requires = "cost")]
    pub baseline: Option<PathBuf>,
    /// The modelled device, as `run --device` and `exec --device` take it
    #[arg(long, default_value = "optane", value_name = "NAME|FILE.toml")]
    pub device: String,
    /// The policy, as `run --policy` and `exec --policy` take it (the
    /// authors' system names carry parameters: cint-6-32)
    #[arg(long, default_value = "cint", value_name = "POLICY")]
    pub policy: String,
    /// Every job's runtime on both sides (e.g. 2s), instead of the job
    /// file's runtime=
    #[arg(long, value_name = "TIME")]
    pub runtime: Option<String>,
    /// Runs of each side, alternated (run, exec, run, ...); the median of
    /// each figure is compared
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100), value_name = "N")]
    pub repeat: u32,
    /// Results as text or JSON
    #[arg(long, value_enum, default_value = "normal", value_name = "FORMAT")]
    pub output_format: OutputFormat,
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
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024), conflicts_with = "apps")]
    pub cores: Option<u32>,
    /// Instead, the application case (issue 16): 16 application threads on
    /// a 24-core host, --ops operations and four times as many
    #[arg(long)]
    pub apps: bool,
    /// Operations of the shorter --apps run
    #[arg(long, value_name = "N", default_value_t = sim::bench::APP_OPS, value_parser = clap::value_parser!(u64).range(16..=100_000_000), requires = "apps")]
    pub ops: u64,
    /// Compare with a baseline saved by --save-baseline: each figure's
    /// ratio to the baseline's (completions/s, events per completion, ns
    /// per event), so a regression shows as a ratio
    #[arg(long, value_name = "FILE", conflicts_with_all = ["cores", "apps"])]
    pub baseline: Option<PathBuf>,
    /// Save this run's figures, the date, the machine and its load average
    /// as a baseline (JSON) for --baseline; crates/sim/bench/baseline.json
    /// is the one kept in the repository
    #[arg(long, value_name = "FILE", conflicts_with_all = ["cores", "apps"])]
    pub save_baseline: Option<PathBuf>,
}

pub fn run(args: &BenchArgs) -> Result<()> {
    match &args.target {
        BenchTarget::Sim(a) => bench_sim(a),
        BenchTarget::Emu(a) => bench_emu(a),
        BenchTarget::Exec(a) => bench_exec(a),
        BenchTarget::Traces(a) => bench_traces(a),
    }
}

/// `bench traces` (`sim::bench::traces`).
fn bench_traces(a: &BenchTracesArgs) -> Result<()> {
    use sim::bench::traces::{self, TracesBaseline};
    let base = match &a.baseline {
        Some(path) => TracesBaseline::load(path),
        None => TracesBaseline::committed(),
    }
    .map_err(anyhow::Error::msg)?;
    let n = match (a.quick, a.requests) {
        (true, _) => traces::QUICK_REQUESTS,
        (false, Some(n)) => n as usize,
        (false, None) => traces::REQUESTS,
    };
    let bench = traces::run(n)?;
    if let Some(path) = &a.save_baseline {
        let mut s = serde_json::to_string_pretty(&bench.baseline_now(a.commit.clone()).json())
            .expect("a JSON value always serializes");
        s.push('\n');
        crate::output::write_file(path, s.as_bytes())?;
    }
    let out = match a.output_format {
        OutputFormat::Normal => bench.text(&base),
        OutputFormat::Json => {
            let mut s = serde_json::to_string_pretty(&bench.json(&base))
                .expect("a JSON value always serializes");
            s.push('\n');
            s
        }
    };
    print!("{out}");
    Ok(())
}

/// `bench exec`: the cross-validation, or with `--cost` what routing
/// costs (`repro::bench`), each running this binary.
fn bench_exec(a: &BenchExecArgs) -> Result<()> {
    use repro::bench::{cost, crossval};
    let binary = std::env::current_exe().context("cannot find this program")?;
    let (text, json) = match &a.cost {
        Some(file) => {
            let c = cost::measure(&cost::CostConfig {
                binary,
                file: file.clone(),
                runtime: a.runtime.clone(),
                baseline: a.baseline.clone(),
            })?;
            (c.text(), c.json())
        }
        None => {
            let c = crossval::measure(&crossval::Crossval {
                binary,
                job_file: a.job_file.clone().expect("clap: required without --cost"),
                device: a.device.clone(),
                policy: a.policy.clone(),
                runtime: a.runtime.clone(),
                repeat: a.repeat,
            })?;
            (c.text(), c.json())
        }
    };
    out!(
        "{}",
        match a.output_format {
            OutputFormat::Normal => text,
            OutputFormat::Json => json,
        }
    );
    Ok(())
}

fn bench_sim(args: &BenchSimArgs) -> Result<()> {
    let json = |v: serde_json::Value| {
        let mut s = serde_json::to_string_pretty(&v).expect("a JSON value always serializes");
        s.push('\n');
        s
    };
    if args.apps {
        let bench = sim::bench::run_apps(args.ops)?;
        let out = match args.output_format {
            OutputFormat::Normal => bench.text(),
            OutputFormat::Json => json(bench.json()),
        };
        out!("{out}");
        return Ok(());
    }
    let out = match args.cores {
        None => {
            let baseline = match &args.baseline {
                Some(path) => Some(sim::bench::Baseline::load(path).map_err(anyhow::Error::msg)?),
                None => None,
            };
            let bench = sim::bench::run(args.runtime)?;
            if let Some(path) = &args.save_baseline {
                crate::output::write_file(path, json(bench.baseline_now().json()).as_bytes())?;
            }
            match args.output_format {
                OutputFormat::Normal => {
                    bench.report_text(baseline.as_ref(), args.save_baseline.as_deref())
                }
                OutputFormat::Json => json(bench.report_json(baseline.as_ref())),
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
    out!("{out}");
    Ok(())
}

fn bench_emu(args: &BenchEmuArgs) -> Result<()> {
    let bench = emu::bench::run(&emu::bench::BenchConfig {
        file: args.file.clone(),
        runtime: args.runtime,
    })?;
    let out = match args.output_format {
        OutputFormat::Normal => bench.text(),
        OutputFormat::Json => {
            let mut s = serde_json::to_string_pretty(&bench.json())
                .expect("a JSON value always serializes");
            s.push('\n');
            s
        }
    };
    out!("{out}");
    Ok(())
}
