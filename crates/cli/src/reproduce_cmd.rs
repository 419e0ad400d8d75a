//! `cinterrupts reproduce`: the paper's microbenchmarks, rerun and written
//! up as a report with its numbers beside ours.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use report::Mode;
use repro::run::Plan;

use crate::args;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Modes {
    /// The simulator, with the paper's device profiles
    Sim,
    /// The emulator, on this machine (one run at a time)
    Emu,
    /// Both
    Both,
    /// The paper's application experiments on real RocksDB (db_bench, ldb)
    /// under `exec --device optane`: Table 3, Fig 22, Table 6 (a few
    /// minutes; never part of --quick's default), and xval-rocksdb, the
    /// RocksDB-like model against real db_bench
    App,
}

#[derive(Args, Debug)]
pub struct ReproduceArgs {
    /// Short runs (about 4 s of CPU in all with the simulator)
    #[arg(long)]
    quick: bool,
    /// Only these experiments, comma-separated (fig8,fig10,fig11,fig12,fig15,fig17,fig18,fig19,fig20,fig21,gyawali; --mode app: table3,fig22,table6,xval-rocksdb)
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Where the experiments run
    #[arg(long, value_enum, default_value = "sim")]
    mode: Modes,
    /// The report's directory: new, empty or an earlier report, which is
    /// replaced whole once the new one is complete (checked before any run)
    #[arg(long, value_name = "DIR", required_unless_present = "ae")]
    out: Option<PathBuf>,
    /// Virtual time per simulated run, at least 30ms [quick: 200ms, full: 1s]
    #[arg(long, value_parser = repro::run::parse_sim_runtime, value_name = "TIME")]
    sim_runtime: Option<u64>,
    /// Seeds per simulated run, averaged [quick: 3, full: 10, as the paper's 10 runs]
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100), value_name = "N")]
    seeds: Option<u32>,
    /// Wall time per emulated run [quick: 300ms, full: 2s]
    #[arg(long, value_parser = args::runtime, value_name = "TIME")]
    emu_runtime: Option<u64>,
    /// Repetitions per emulated run, averaged [quick: 1, full: 3]
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100), value_name = "N")]
    reps: Option<u32>,
    /// Keep every simulated run in this directory, one file per run under
    /// a key of its resolved inputs: a rerun reads them, a killed
    /// reproduce runs only the missing ones (--mode sim only)
    #[arg(long, value_name = "DIR")]
    store: Option<PathBuf>,
    #[command(flatten)]
    shard: args::ShardArgs,
    /// No progress bar
    #[arg(short, long)]
    quiet: bool,
    /// Run the experiments the generated tables of the project's Markdown
    /// name (with --quick, from the workspace root) and rewrite those
    /// tables from this run (crates/repro/src/tables.rs)
    #[arg(long)]
    update_docs: bool,
    /// Write an evaluation bundle into DIR (new, empty or an earlier
    /// bundle): `reproduce --quick` of the `--only` experiments (all by
    /// default) into DIR/results, the source archive with every crate
    /// vendored, the figure map, kick-the-tires.sh, full.sh, SHA256SUMS
    /// (crates/repro/README.md, "Artifact evaluation")
    #[arg(long, value_name = "DIR", conflicts_with_all = ["out", "store", "update_docs", "sim_runtime", "seeds", "emu_runtime", "reps", "ae_check"])]
    ae: Option<PathBuf>,
    /// Compare this run's verdicts with a bundle's stored ones (its
    /// figures.json): `F<n> EXPERIMENT: OK` or `FAIL (claim, stored, now)`
    /// per figure, exit 1 on any FAIL (kick-the-tires.sh)
    #[arg(long, value_name = "FIGURES_JSON")]
    ae_check: Option<PathBuf>,
}

fn command_line() -> String {
    std::iter::once("cinterrupts".to_string())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `--mode app`: RocksDB under `exec`, one run at a time.
fn run_app(a: &ReproduceArgs, out: &std::path::Path) -> Result<()> {
    let opts = repro::app::Options {
        only: a.only.clone(),
        scale: if a.quick {
            repro::app::Scale::quick()
        } else {
            repro::app::Scale::full()
        },
        out: out.to_path_buf(),
        command: command_line(),
    };
    let started = std::time::Instant::now();
    let quiet = a.quiet;
    let summary = repro::app::reproduce(&opts, &|run| {
        if !quiet {
            eprintln!("[{:>4.0} s] {run}", started.elapsed().as_secs_f64());
        }
    })?;
    out!("{}", repro::app::verdict_table(&summary));
    // Parts not run (xval-rocksdb without db_bench), quiet or not.
    for line in &summary.skipped {
        eprintln!("{line}");
    }
    outln!("{}", summary.last_line(out));
    Ok(())
}

pub fn run(a: &ReproduceArgs) -> Result<()> {
    if let Some(dir) = &a.ae {
        return ae(a, dir);
    }
    let Some(out) = a.out.clone() else {
        anyhow::bail!("--out DIR names the report's directory (or --ae DIR the bundle's)");
    };
    if a.update_docs {
        // The committed tables are those of a plain --quick run in the
        // simulator: anything else would make tables the test cannot repeat.
        if !a.quick
            || a.mode != Modes::Sim
            || !a.only.is_empty()
            || a.store.is_some()
            || a.sim_runtime.is_some()
            || a.seeds.is_some()
        {
            anyhow::bail!("--update-docs takes --quick --out DIR and nothing else: its tables are a plain --quick run's, and their markers name the experiments");
        }
    }
    if a.store.is_none() && (a.shard.shard.is_some() || a.shard.shards.is_some()) {
        anyhow::bail!("--shard and --shards split the runs of a --store: give --store DIR");
    }
    if a.store.is_some() && a.mode != Modes::Sim {
        anyhow::bail!("--store is for --mode sim: an emulator run is a measurement, not a result its configuration determines, so a stored one is no cache");
    }
    let modes = match a.mode {
        Modes::Sim => vec![Mode::Sim],
        Modes::Emu => vec![Mode::Emu],
        Modes::Both => vec![Mode::Sim, Mode::Emu],
        Modes::App => return run_app(a, &out),
    };
    let plan = if a.quick {
        Plan::quick(modes)
    } else {
        Plan::full(modes)
    };
    let root = std::env::current_dir()?;
    let only = if a.update_docs {
        repro::tables::experiments(&root).map_err(anyhow::Error::msg)?
    } else {
        a.only.clone()
    };
    let opts = repro::Options {
        only,
        plan: Plan {
            sim_runtime: a.sim_runtime.unwrap_or(plan.sim_runtime),
            sim_seeds: a.seeds.unwrap_or(plan.sim_seeds),
            emu_runtime: a.emu_runtime.unwrap_or(plan.emu_runtime),
            emu_reps: a.reps.unwrap_or(plan.emu_reps),
            ..plan
        },
        out: out.clone(),
        command: command_line(),
    };
    let bar = (!a.quiet && std::io::stderr().is_terminal()).then(|| {
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} runs, {elapsed} (eta {eta})")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar
    });
    let progress = |done: usize, total: usize| {
        if let Some(bar) = &bar {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        }
    };
    let tally = match &a.store {
        None => repro::reproduce(&opts, &progress)
            .map(Some)
            .map_err(anyhow::Error::from),
        Some(dir) => kept(a, &opts, dir, &progress),
    };
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let tally = tally?;
    if let (Some(map), Some(_)) = (&a.ae_check, &tally) {
        return ae_check(map, &out);
    }
    if let Some(tally) = tally {
        outln!(
            "{tally}; {}; report: {}",
            tally.conclusions,
            out.join("report.html").display()
        );
    }
    if a.update_docs {
        outln!(
            "{}",
            repro::tables::update_docs_from(&root, &out).map_err(anyhow::Error::msg)?
        );
    }
    Ok(())
}

/// `--store`: every simulated run kept in `dir`, this task's shard of
/// them; the report's tally when the store then holds every run.
fn kept(
    a: &ReproduceArgs,
    opts: &repro::Options,
    dir: &std::path::Path,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Option<repro::write::Tally>> {
    let shard = a.shard.resolve()?;
    let store = store::Store::open(dir)?;
    let keep = repro::run::Keep {
        store: &store,
        shard,
    };
    let (tally, counts) = repro::reproduce_kept(opts, keep, progress)?;
    if !a.quiet {
        for line in counts.lines(shard, &store.dir) {
            eprintln!("reproduce: {line}");
        }
    }
    Ok(tally)
}

/// `--ae DIR`: the evaluation bundle (`repro::ae`).
fn ae(a: &ReproduceArgs, dir: &std::path::Path) -> Result<()> {
    if a.mode != Modes::Sim || a.shard.shard.is_some() || a.shard.shards.is_some() {
        anyhow::bail!("--ae runs `reproduce --quick` in the simulator (its verdicts are what kick-the-tires.sh checks): drop --mode, --shard and --shards");
    }
    let opts = repro::ae::Options {
        dir: dir.to_path_buf(),
        only: a.only.clone(),
        cwd: std::env::current_dir()?,
        command: command_line(),
    };
    let quiet = a.quiet;
    let made = repro::ae::make(&opts, &|done, total| {
        if !quiet && done == total {
            eprintln!("reproduce --ae: {total} runs done");
        }
    })?;
    outln!(
        "bundle: {} ({} figures; commit {}{}; reproduce --quick {:.0} s, archive {:.0} s)",
        dir.display(),
        made.figures,
        made.version.commit,
        if made.version.dirty { ", dirty" } else { "" },
        made.quick.secs,
        made.archive_secs
    );
    Ok(())
}

/// `--ae-check FIGURES_JSON`: this run's verdicts against a bundle's.
fn ae_check(map: &std::path::Path, out: &std::path::Path) -> Result<()> {
    let (lines, failed) = repro::ae::check_files(map, &out.join("summary.json"))?;
    for line in &lines {
        outln!("{line}");
    }
    if failed > 0 {
        anyhow::bail!(
            "{failed} of {} figures' verdicts differ from {}",
            lines.len(),
            map.display()
        );
    }
    Ok(())
}
