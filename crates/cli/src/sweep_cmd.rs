//! `cinterrupts sweep`: design-space sweeps (the `sweep` crate). `run`
//! runs a spec's points (or one shard of them) into a store, skipping
//! finished ones; `merge` folds stores into one table and the Pareto
//! fronts; `slurm` prints an `sbatch` array script that runs the shards.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{anyhow, bail, Result};
use clap::{Args, Subcommand};
use sweep::front;
use sweep::picks::{self, Pick};
use sweep::slurm::Script;
use sweep::{RunOptions, Shard, Spec, Store};

#[derive(Args, Debug)]
pub struct SweepArgs {
    #[command(subcommand)]
    pub command: SweepCommand,
}

#[derive(Subcommand, Debug)]
pub enum SweepCommand {
    /// Run a spec's points that the store lacks (all, or one shard)
    Run(RunArgs),
    /// Fold stores into one table (CSV, JSON) and each workload's Pareto
    /// front of interrupts/s against p99 latency
    Merge(MergeArgs),
    /// Print an sbatch job-array script that runs the spec's shards
    Slurm(SlurmArgs),
    /// Search the spec's space for its Pareto fronts in rounds, refining
    /// around the front, instead of running every point
    Search(crate::sweep_search::SearchArgs),
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The sweep's TOML spec (see the sweep crate's spec module)
    pub spec: PathBuf,
    /// Where results go, one file per point [default: sweep-store/ beside
    /// the spec]
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,
    #[command(flatten)]
    pub shard: crate::args::ShardArgs,
    /// Run again the points whose failure is in the store
    #[arg(long)]
    pub retry_failed: bool,
    /// Nothing on stderr but errors (no shard line, no line per point)
    #[arg(long, short)]
    pub quiet: bool,
    /// Count the shard's points and check their entries in the store;
    /// run and write nothing
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The stores to fold (a whole run's, or every shard's)
    #[arg(required = true, value_name = "STORE")]
    pub stores: Vec<PathBuf>,
    /// Write table.csv, table.json, fronts.csv, fronts.json, fronts.svg,
    /// report.md and report.html here (created if missing); without it,
    /// only the fronts are printed
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// A tune.json (`cinterrupts tune --out`): report whether tune's delta
    /// and thr lie on the front of its workload (matched by file name),
    /// device and host; with --out, also picks.json. Repeatable
    #[arg(long = "tune", value_name = "TUNE.JSON")]
    pub tunes: Vec<PathBuf>,
    /// A front to draw, print and write: Y,X, each a metric of the whole
    /// run or of one job (JOB:METRIC, the job as its job file names it);
    /// metrics p99, p50, iops (a job's or all jobs'), interrupts, cpu (CPU
    /// per I/O). E.g. `sync:p99,interrupts`, `sync:p99,async:iops`.
    /// Repeatable [default: the worst job's p99 and each job's against
    /// interrupts and cpu]
    #[arg(long = "front", value_name = "Y,X")]
    pub fronts: Vec<sweep::objective::Objective>,
    /// Merge only the entries this spec made (its identity, as `sweep
    /// run` stamps each entry), leaving other specs' out [default: the
    /// stores must hold one spec's entries]
    #[arg(long, value_name = "SPEC")]
    pub spec: Option<PathBuf>,
    /// Keep entries of different code versions apart (a version column, a
    /// front per version) instead of refusing them
    #[arg(long)]
    pub mixed: bool,
}

#[derive(Args, Debug)]
pub struct SlurmArgs {
    /// The sweep's TOML spec, on a path every node shares (written
    /// absolute into the script)
    pub spec: PathBuf,
    /// Array tasks, one shard each
    #[arg(long, value_name = "N")]
    pub tasks: usize,
    /// The store on a directory every node shares [default: sweep-store/
    /// beside the spec]
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,
    /// CPUs per task: simulator points run in parallel on them
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub cpus_per_task: usize,
    /// The job's name in squeue and the output files
    #[arg(long, default_value = "cinterrupts-sweep", value_name = "NAME")]
    pub job_name: String,
    /// The cinterrupts binary the tasks run [default: this one's path]
    #[arg(long, value_name = "PATH")]
    pub binary: Option<String>,
    /// The partition to submit to [default: the cluster's default
    /// partition]
    #[arg(long, value_name = "NAME")]
    pub partition: Option<String>,
    /// Submit the script with `sbatch` (on its stdin) instead of printing
    /// it; sbatch prints the job id
    #[arg(long)]
    pub submit: bool,
    /// With --submit: return only when every array task has ended, failing
    /// if one failed (sbatch --wait)
    #[arg(long, requires = "submit")]
    pub wait: bool,
    /// Print a driver for `sweep search` instead: a bash script that
    /// submits each round of the search as an array of --tasks tasks and
    /// waits for it (not with --submit)
    #[arg(long, conflicts_with = "submit")]
    pub search: bool,
    /// With --search: the search's seed
    #[arg(long, default_value_t = 1, requires = "search", value_name = "N")]
    pub seed: u64,
    /// With --search: the search's budget in runs
    #[arg(long, requires = "search", value_name = "RUNS")]
    pub budget: Option<u64>,
}

pub fn run(args: &SweepArgs) -> Result<()> {
    match &args.command {
        SweepCommand::Run(a) => run_cmd(a),
        SweepCommand::Merge(a) => merge_cmd(a),
        SweepCommand::Slurm(a) => slurm_cmd(a),
        SweepCommand::Search(a) => crate::sweep_search::run(a),
    }
}

fn run_cmd(a: &RunArgs) -> Result<()> {
    let shard = a.shard.resolve()?;
    let spec = Spec::load(&a.spec)?;
    // A trace the spec replays that is marked partial is warned of, and
    // said beside the counts.
    let partial: Vec<(String, String)> = spec
        .workloads
        .iter()
        .filter(|w| matches!(w.kind, sweep::spec::WorkloadKind::Trace { .. }))
        .filter_map(|w| Some((w.shown.clone(), crate::trace_input::partial(&w.path)?)))
        .collect();
    let store = Store::open(&sweep::store::store_dir(&a.spec, a.store.as_deref()))?;
    if !a.quiet {
        let part = if shard == Shard::ALL {
            "all points".to_string()
        } else {
            format!("shard {shard} (0-based)")
        };
        eprintln!("sweep: {part} into {}", store.dir.display());
    }
    let show = !a.quiet && std::io::stderr().is_terminal();
    let opts = RunOptions {
        shard,
        retry_failed: a.retry_failed,
    };
    if a.dry_run {
        outln!("{}", sweep::plan(&spec, &store, opts)?);
        return Ok(());
    }
    let counts = sweep::run(&spec, &store, opts, &|line| {
        if show {
            eprintln!("sweep: {line}");
        }
    })?;
    outln!("{counts}");
    if let Some(line) = counts.bad_line() {
        outln!("{line}");
    }
    for (trace, loss) in &partial {
        out!("{trace}: {}", crate::trace_input::partial_line(loss));
    }
    let failed_now = counts.failed - counts.failed_before;
    if failed_now > 0 {
        bail!(
            "{failed_now} points failed: why is in {}/KEY.failed.json",
            store.dir.display()
        );
    }
    Ok(())
}

fn merge_cmd(a: &MergeArgs) -> Result<()> {
    let stores = a
        .stores
        .iter()
        .map(|s| Store::existing(s))
        .collect::<Result<Vec<_>, _>>()?;
    let picks = a
        .tunes
        .iter()
        .map(|p| Pick::load(p).map_err(|e| anyhow!(e)))
        .collect::<Result<Vec<_>>>()?;
    let how = sweep::merge::Merge {
        spec: match &a.spec {
            Some(path) => Some(Spec::load(path)?.identity()),
            None => None,
        },
        mixed: a.mixed,
    };
    let table = match sweep::merge::merge_with(&stores, &how) {
        Ok(table) => table,
        // Every reason at once, a line each; nothing written.
        Err(sweep::merge::MergeError::Refused(lines)) => {
            for line in &lines {
                eprintln!("sweep merge: {line}");
            }
            bail!(
                "merge refused ({} reasons above): nothing written",
                lines.len()
            );
        }
        Err(e) => return Err(e.into()),
    };
    for line in &table.left_out {
        eprintln!("sweep: {line}");
    }
    let fronts = front::fronts_named(&table, &a.fronts).map_err(|e| anyhow!(e))?;
    let judged: Vec<(Pick, picks::Standing)> = picks
        .into_iter()
        .map(|p| {
            let s = picks::judge(&p, &fronts);
            (p, s)
        })
        .collect();
    outln!("{}", table.summary_line(stores.len()));
    if let Some(warning) = table.versions_warning() {
        eprintln!("sweep: {warning}");
    }
    out!("{}", front::text(&fronts));
    out!("{}", picks::text(&judged));
    if let Some(dir) = &a.out {
        sweep::page::write(dir, &table, &fronts, &judged).map_err(|e| anyhow!(e))?;
    }
    Ok(())
}

fn slurm_cmd(a: &SlurmArgs) -> Result<()> {
    if a.tasks == 0 {
        bail!("--tasks 0: an array needs at least 1 task");
    }
    if a.cpus_per_task == 0 {
        bail!("--cpus-per-task 0: a task needs at least 1 CPU");
    }
    let request = sweep::slurm::Request {
        store: a.store.clone(),
        tasks: a.tasks,
        cpus_per_task: a.cpus_per_task,
        job_name: a.job_name.clone(),
        binary: a.binary.clone(),
        partition: a.partition.clone(),
    };
    if a.search {
        return crate::sweep_search::slurm(&a.spec, request, a.seed, a.budget);
    }
    let (script, points) = Script::for_spec(&a.spec, request)?;
    if !a.submit {
        out!("{}", script.text());
        eprintln!("sweep: {}; submit with sbatch", script.share(points));
        return Ok(());
    }
    let said = format!("sweep: submitting {}", script.share(points));
    submit(&script, a.wait, &said)
}

/// Submits the script (`Script::submit`), saying `said` once sbatch runs.
fn submit(script: &Script, wait: bool, said: &str) -> Result<()> {
    script
        .submit(wait, &mut || eprintln!("{said}"))
        .map_err(|e| anyhow!(e))?;
    if wait {
        eprintln!(
            "sweep: every task ended; merge with: cinterrupts sweep merge {}",
            script.store
        );
    }
    Ok(())
}
