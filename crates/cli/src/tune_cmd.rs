//! `cinterrupts tune`: picks adaptive coalescing's delta and thr for a
//! device and a workload by TOS 5.2's method (the `tune` crate), runs
//! every candidate delta and thr as one sweep, recommends the setting on
//! its Pareto front that `--objective` prefers within the budgets, prints
//! both and the candidates, and with `--out` writes the two figures and
//! every number. No setting on the front within the budgets: the report,
//! then one line on stderr and exit 1. With `--store` every run is kept (`tune::kept`): a
//! rerun or a killed tuning runs only what is missing, and `--shard`
//! runs one shard of the thr points.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, ValueEnum};
use emu::backend::BackendSpec;
use store::Store;
use tune::kept::Keep;
use tune::render::Setup;
use tune::{Budget, Objective, Target, TuneConfig, TuneError, Tuning};

use crate::args;
use crate::jobs_cmd::print_notes;
use crate::run_cmd::emu_error;
use crate::sim_cmd::sim_error;

#[derive(Args, Debug)]
pub struct TuneArgs {
    /// fio job file: the workload the gaps are measured on and thr is swept
    /// on (TOS Fig 18: examples/tune-libaio.fio, tune-libaio-batch.fio)
    pub job_file: PathBuf,
    #[command(flatten)]
    pub fio: crate::args::FioArgs,
    /// Where the workload runs: the simulator, or the emulator on real I/O
    #[arg(long, value_enum, default_value = "sim", value_name = "MODE")]
    pub mode: ModeArg,
    /// sim: device profile, a shipped name or a .toml file [default: optane]
    #[arg(long, value_name = "NAME|FILE")]
    pub device: Option<String>,
    /// sim: host profile, a shipped name or a .toml file [default:
    /// xeon-e5-2660v4]
    #[arg(long, value_name = "NAME|FILE")]
    pub host: Option<String>,
    /// emu: where commands run, file:PATH or null:LATENCY[,depth=N]
    /// [default: the job file's filename=]
    #[arg(long, value_parser = BackendSpec::parse, value_name = "SPEC")]
    pub backend: Option<BackendSpec>,
    /// The percentile of the completion gaps delta is read at (TOS 5.2: 90
    /// on the Optane, 99 on the P3700)
    #[arg(long, default_value = "90", value_parser = tune::render::parse_percentile, value_name = "P", allow_hyphen_values = true)]
    pub percentile: f64,
    /// How far below the best later point a thr may be and still start the
    /// plateau
    #[arg(long, default_value = "2%", value_parser = tune::render::parse_tolerance, value_name = "PERCENT", allow_hyphen_values = true)]
    pub tolerance: f64,
    /// What the recommendation minimises, on the candidates' Pareto front:
    /// p99 (the lowest p99), interrupts (the fewest interrupts/s), cpu (the
    /// least CPU per I/O, on the front of CPU per I/O against p99), or
    /// balanced (the least sum of interrupts/s and p99, each
    /// log-normalised over the front)
    #[arg(long, value_enum, default_value = "balanced", value_name = "OBJECTIVE")]
    pub objective: ObjectiveArg,
    /// Recommend only a setting whose p99 (the worst job's) is at most this
    /// (6us, 100us, 1ms)
    #[arg(long, value_parser = args::duration, value_name = "TIME")]
    pub p99_budget: Option<u64>,
    /// Recommend only a setting with at most this many interrupts per
    /// second (100k, 1.5m, 250000)
    #[arg(long, value_parser = args::rate, value_name = "RATE")]
    pub irq_budget: Option<u64>,
    /// The percentiles of the completion gaps whose deltas are candidates
    /// beside --percentile's (each with every thr)
    #[arg(long, default_value = "50,90,99,99.9", value_delimiter = ',', value_parser = tune::render::parse_percentile, value_name = "P,P,...", allow_hyphen_values = true)]
    pub delta_percentiles: Vec<f64>,
    /// Each run's length (the baseline and every sweep point), instead of
    /// the job file's runtime
    #[arg(long, default_value = "200ms", value_parser = args::runtime, value_name = "TIME")]
    pub runtime: u64,
    /// Seed of every random draw; the same seed gives the same results on
    /// the simulator
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub seed: u64,
    /// Write tune-cdf.svg, tune-thr.svg and tune.json into this directory
    /// (created if missing); without it, nothing is written
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Keep every run (the baseline and each thr point) in this directory,
    /// one file per run under a key of its configuration: a rerun reads
    /// them, a killed tuning runs only the missing ones (simulator only)
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,
    #[command(flatten)]
    pub shard: crate::args::ShardArgs,
    /// Nothing on stderr but errors: no notes, no progress lines (shown
    /// only on a terminal anyway), no list of the files written
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ObjectiveArg {
    P99,
    Interrupts,
    Cpu,
    Balanced,
}

impl From<ObjectiveArg> for Objective {
    fn from(o: ObjectiveArg) -> Objective {
        match o {
            ObjectiveArg::P99 => Objective::P99,
            ObjectiveArg::Interrupts => Objective::Interrupts,
            ObjectiveArg::Cpu => Objective::Cpu,
            ObjectiveArg::Balanced => Objective::Balanced,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// The simulator (--device, --host)
    Sim,
    /// The emulator on real I/O (--backend)
    Emu,
}

pub fn run(args: &TuneArgs) -> Result<()> {
    let file = jobs::parse_file_with(&args.job_file, &args.fio.command_line())?;
    if file.jobs.is_empty() {
        bail!("{}: no jobs to run", args.job_file.display());
    }
    let (target, setup) = tune::target::target(&tune::target::Where {
        job_file: &args.job_file,
        emu: args.mode == ModeArg::Emu,
        device: args.device.as_deref(),
        host: args.host.as_deref(),
        backend: args.backend.as_ref(),
        seed: args.seed,
        runtime: args.runtime,
        say: (!args.quiet).then_some(crate::run_cmd::say as fn(&str)),
    })
    .map_err(|e| anyhow!(e))?;
    if args.store.is_none() && (args.shard.shard.is_some() || args.shard.shards.is_some()) {
        bail!("--shard and --shards split the runs of a --store: give --store DIR");
    }
    if args.store.is_some() && args.mode == ModeArg::Emu {
        bail!(tune::kept::EMULATOR_REFUSED);
    }
    if let Some(dir) = &args.out {
        tune::out::prepare(dir).map_err(|e| anyhow!(e))?;
    }
    if !args.quiet {
        print_notes(&file);
        if let Target::Emu(config) = &target {
            crate::run_cmd::say_stand_in(&args.job_file, &file.jobs, config);
        }
    }
    let cfg = TuneConfig {
        runtime: Some(args.runtime),
        percentile: args.percentile,
        tolerance: args.tolerance,
        delta_percentiles: args.delta_percentiles.clone(),
        objective: args.objective.into(),
        budget: Budget {
            p99_ns: args.p99_budget,
            interrupts_per_sec: args.irq_budget.map(|b| b as f64),
        },
        ..TuneConfig::new(target)
    };
    // A line per run started, on a terminal only (as the other verbs'
    // progress bars), so that an error stays the one line on stderr.
    let show = !args.quiet && std::io::stderr().is_terminal();
    let progress = |step: &str| {
        if show {
            eprintln!("tune: {step}");
        }
    };
    let t = match &args.store {
        None => tune::tune(&file.jobs, &cfg, &progress).map_err(|e| tune_error(args, e))?,
        Some(dir) => match kept(args, &file.jobs, &cfg, dir, &progress)? {
            Some(t) => t,
            None => return Ok(()),
        },
    };
    out!("{}", tune::render::text(&t, &setup));
    if let Some(dir) = &args.out {
        write_out(dir, &t, &setup, args.quiet)?;
    }
    // Nothing within the budgets: the report above shows every candidate;
    // the failure is one line and exit 1 (the command ran, and has no
    // setting to recommend), so a script can tell.
    if let Some(line) = t.none_meets() {
        bail!(line);
    }
    Ok(())
}

fn tune_error(args: &TuneArgs, e: TuneError) -> anyhow::Error {
    match e {
        TuneError::Sim(e) => sim_error(&args.job_file, e),
        TuneError::Emu(e) => emu_error(&args.job_file, e),
        TuneError::NoGaps => anyhow!("{}: {e}", args.job_file.display()),
        TuneError::Config(e) => anyhow!(e),
        TuneError::Store(e) => anyhow!(e),
    }
}

/// Tunes with every run kept in the store at `dir`, this task's shard of
/// them; the tuning when the store then holds every run, else `None`
/// (said on stderr: other shards' runs are still to come).
fn kept(
    args: &TuneArgs,
    jobs: &[jobs::Job],
    cfg: &TuneConfig,
    dir: &Path,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Option<Tuning>> {
    let shard = args.shard.resolve()?;
    let job_file = std::fs::read(&args.job_file)
        .with_context(|| format!("{}: cannot read", args.job_file.display()))?;
    let store = Store::open(dir)?;
    let keep = Keep {
        store: &store,
        shard,
        job_file: &job_file,
    };
    let o = tune::kept::tune_kept(jobs, cfg, keep, progress).map_err(|e| tune_error(args, e))?;
    if !args.quiet {
        // After the runs, not before: an error stays the one line on stderr.
        for line in o.lines(shard, &store.dir, args.out.is_some()) {
            eprintln!("tune: {line}");
        }
    }
    Ok(o.tuning)
}

/// The two figures and the numbers (`tune::out`), and where they went.
fn write_out(dir: &Path, t: &Tuning, setup: &Setup, quiet: bool) -> Result<()> {
    let written = tune::out::write(dir, t, setup).map_err(|e| anyhow!(e))?;
    if !quiet {
        eprintln!(
            "tune: wrote {}, {} and {}",
            written[0].display(),
            written[1].display(),
            written[2].display()
        );
    }
    Ok(())
}
