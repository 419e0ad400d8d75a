//! `cinterrupts bench`: how fast the workbench itself runs, on a fixed
//! workload, so a change to the engine can be measured before and after.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use clap::{Args, Subcommand};
use policy::PolicySpec;
use report::human::count;
use serde_json::json;

use crate::args::{self, OutputFormat};
use crate::sim_cmd;

/// The paper's mixed workload (TOS Fig. 10): a blocking reader beside a
/// libaio batch reader on one core, so the run exercises Urgent, Barrier and
/// coalescing alike.
const WORKLOAD: &str = include_str!("../../../examples/mixed-16.fio");
const WORKLOAD_NAME: &str = "examples/mixed-16.fio";
const DEVICE: &str = "optane";
const HOST: &str = "xeon-e5-2660v4";
const POLICY: &str = "cint";
const SEED: u64 = 1;
/// Timings on a shared machine are noisy: the best of a few says what the
/// code can do, the median what to expect.
const RUNS: usize = 3;

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
    /// Build with --release for meaningful numbers.
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
}

/// One timed run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    pub wall_seconds: f64,
    pub virtual_seconds: f64,
    /// Completions delivered to the host by interrupts.
    pub completions: u64,
    /// The simulated workload's IOPS (all jobs).
    pub iops: f64,
    /// Events the engine processed.
    pub events: u64,
}

impl Timing {
    /// Engine events per delivered completion (where the time goes).
    pub fn events_per_completion(&self) -> f64 {
        if self.completions == 0 {
            0.0
        } else {
            self.events as f64 / self.completions as f64
        }
    }

    /// Wall-clock nanoseconds per engine event.
    pub fn ns_per_event(&self) -> f64 {
        if self.events == 0 {
            0.0
        } else {
            self.wall_seconds * 1e9 / self.events as f64
        }
    }

    /// Simulated completions per wall-clock second: the simulator's speed.
    pub fn completions_per_sec(&self) -> f64 {
        if self.wall_seconds > 0.0 {
            self.completions as f64 / self.wall_seconds
        } else {
            0.0
        }
    }
}

/// The fastest and the median of `runs` (by completions per second).
pub fn best_and_median(runs: &[Timing]) -> Option<(Timing, Timing)> {
    let mut sorted = runs.to_vec();
    sorted.sort_by(|a, b| a.completions_per_sec().total_cmp(&b.completions_per_sec()));
    Some((*sorted.last()?, sorted[sorted.len() / 2]))
}

pub fn run(args: &BenchArgs) -> Result<()> {
    match &args.target {
        BenchTarget::Sim(a) => bench_sim(a),
        BenchTarget::Emu(a) => bench_emu(a),
    }
}

fn bench_sim(args: &BenchSimArgs) -> Result<()> {
    let file = jobs::parse_str(WORKLOAD, WORKLOAD_NAME, &|_| None)?;
    let config = sim_cmd::config(
        PolicySpec::named(POLICY),
        DEVICE,
        HOST,
        SEED,
        Some(args.runtime),
    )?;
    let mut runs = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let start = Instant::now();
        let (report, audit) = sim::simulate_audited(&file.jobs, &config, &mut |_, _| {})
            .map_err(|e| sim_cmd::sim_error(std::path::Path::new(WORKLOAD_NAME), e))?;
        let wall_seconds = start.elapsed().as_secs_f64();
        runs.push(Timing {
            wall_seconds,
            virtual_seconds: report.duration_ns as f64 / 1e9,
            completions: report.completions,
            iops: report.total_iops(),
            events: audit.events,
        });
    }
    let (best, median) = best_and_median(&runs).expect("RUNS > 0");
    let policy = policy::describe(&config.policy);
    let out = match args.output_format {
        OutputFormat::Normal => {
            let mut s = format!(
                "bench sim: {WORKLOAD_NAME} for {:.3}s virtual on {DEVICE} / {HOST}, policy {policy}, seed {SEED}\n",
                args.runtime as f64 / 1e9
            );
            for (i, r) in runs.iter().enumerate() {
                let _ = writeln!(
                    s,
                    "  run {}: {:.3}s wall, {:.3}s virtual, {} completions ({}/s), simulated IOPS {}, {} events ({:.2} per completion, {:.0} ns each)",
                    i + 1,
                    r.wall_seconds,
                    r.virtual_seconds,
                    r.completions,
                    count(r.completions_per_sec()),
                    count(r.iops),
                    r.events,
                    r.events_per_completion(),
                    r.ns_per_event()
                );
            }
            let _ = writeln!(
                s,
                "  completions per wall-clock second: best {}, median {}",
                count(best.completions_per_sec()),
                count(median.completions_per_sec())
            );
            if cfg!(debug_assertions) {
                s.push_str("  (a debug build: timings mean little without --release)\n");
            }
            s
        }
        OutputFormat::Json => {
            let timing = |r: &Timing| {
                json!({
                    "wall_seconds": r.wall_seconds,
                    "virtual_seconds": r.virtual_seconds,
                    "completions": r.completions,
                    "completions_per_sec": r.completions_per_sec(),
                    "iops": r.iops,
                    "events": r.events,
                    "events_per_completion": r.events_per_completion(),
                    "ns_per_event": r.ns_per_event(),
                })
            };
            let v = json!({
                "bench": "sim",
                "workload": WORKLOAD_NAME,
                "device": DEVICE,
                "host": HOST,
                "policy": policy,
                "seed": SEED,
                "runtime_ns": args.runtime,
                "debug_build": cfg!(debug_assertions),
                "completions_per_sec": best.completions_per_sec(),
                "median_completions_per_sec": median.completions_per_sec(),
                "best": timing(&best),
                "median": timing(&median),
                "runs": runs.iter().map(timing).collect::<Vec<_>>(),
            });
            let mut s = serde_json::to_string_pretty(&v).expect("a JSON value always serializes");
            s.push('\n');
            s
        }
    };
    print!("{out}");
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
    print!("{out}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing(wall: f64, completions: u64) -> Timing {
        Timing {
            wall_seconds: wall,
            virtual_seconds: 2.0,
            completions,
            iops: 0.0,
            events: 0,
        }
    }

    #[test]
    fn best_is_fastest_and_median_is_middle() {
        let runs = [timing(2.0, 1000), timing(1.0, 1000), timing(4.0, 1000)];
        let (best, median) = best_and_median(&runs).unwrap();
        assert_eq!(best.completions_per_sec(), 1000.0);
        assert_eq!(median.completions_per_sec(), 500.0);
        assert!(best_and_median(&[]).is_none());
    }

    #[test]
    fn an_instant_run_has_no_rate() {
        assert_eq!(timing(0.0, 10).completions_per_sec(), 0.0);
    }

    #[test]
    fn the_embedded_workload_parses() {
        let file = jobs::parse_str(WORKLOAD, WORKLOAD_NAME, &|_| None).unwrap();
        let names: Vec<&str> = file.jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["sync", "async"]);
    }
}
