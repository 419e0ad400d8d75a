//! `cinterrupts sweep search`: the spec's space searched in rounds around
//! the front (`sweep::search`), through the same store as `sweep run`;
//! and `sweep slurm --search`, its round-by-round Slurm driver.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Result};
use clap::Args;
use sweep::front;
use sweep::search_run::{compare, search, SearchOptions};
use sweep::slurm::{Script, SearchRounds};
use sweep::{Spec, Store};

#[derive(Args, Debug)]
pub struct SearchArgs {
    /// The sweep's TOML spec: its grids are the space searched
    pub spec: PathBuf,
    /// Where results go, one file per point, as `sweep run`'s
    /// [default: sweep-store/ beside the spec]
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,
    /// Draws round 0's coarse grid and which settings a round short of
    /// budget keeps; the same seed makes the same rounds
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub seed: u64,
    /// Runs (points) at most [default: until every grid neighbour of the
    /// front is evaluated]
    #[arg(long, value_name = "RUNS")]
    pub budget: Option<u64>,
    /// Run only round R (0-based): the rounds before it are read from the
    /// store and must be done; with --shard, this task's share of it
    #[arg(long, value_name = "R")]
    pub round: Option<usize>,
    #[command(flatten)]
    pub shard: crate::args::ShardArgs,
    /// With --round: print the number of round R's points (0: the search
    /// has ended before it) and run nothing
    #[arg(long, requires = "round")]
    pub count: bool,
    /// A store holding the spec's whole grid (`sweep run`): print how many
    /// of its front points the search recovered, in how many runs
    #[arg(long, value_name = "STORE")]
    pub compare_grid: Option<PathBuf>,
    /// Write the search's table, fronts and report here, as `sweep merge
    /// --out` does
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Run again the points whose failure is in the store
    #[arg(long)]
    pub retry_failed: bool,
    /// Refine every strategy's own front, not only those holding a part
    /// of the front (more runs; for strategies whose fronts interleave)
    #[arg(long)]
    pub each_strategy: bool,
    /// Nothing on stderr but errors
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn run(a: &SearchArgs) -> Result<()> {
    let shard = a.shard.resolve()?;
    if a.budget == Some(0) {
        anyhow::bail!("--budget 0: a search needs at least one run");
    }
    let spec = Spec::load(&a.spec)?;
    // The grid's store must exist before any run is spent.
    let grid = a.compare_grid.as_deref().map(Store::existing).transpose()?;
    let opts = SearchOptions {
        seed: a.seed,
        budget: a.budget.unwrap_or(u64::MAX),
        shard,
        round: a.round,
        count: a.count,
        retry_failed: a.retry_failed,
        each_strategy: a.each_strategy,
    };
    sweep::search_run::check(&spec, &opts)?;
    let store = Store::open(&sweep::store::store_dir(&a.spec, a.store.as_deref()))?;
    let show = !a.quiet && !a.count;
    let each_point = show && std::io::stderr().is_terminal();
    let report = search(&spec, &store, opts, &|line| {
        // A line per round always; a line per point on a terminal.
        if show && (line.starts_with("round ") || each_point) {
            eprintln!("sweep search: {line}");
        }
    })?;
    if a.count {
        outln!("{}", report.round_points.unwrap_or(0));
        return Ok(());
    }
    if let Some(r) = a.round {
        match report.round_points {
            Some(n) => outln!("round {r}: {n} points; shard {shard}: {}", report.counts),
            None => outln!("round {r}: the search had ended before it; nothing to run"),
        }
        return failed_now(&report.counts, &store);
    }
    outln!("{}", report.summary_line());
    let fronts = report.fronts();
    out!("{}", front::text(&fronts));
    if let Some(grid) = &grid {
        out!("{}", compare(&spec, grid, &report)?.text());
    }
    if let Some(dir) = &a.out {
        sweep::page::write(dir, &report.outcome.evaluated.sorted_table(), &fronts, &[])
            .map_err(|e| anyhow!(e))?;
    }
    failed_now(&report.counts, &store)
}

/// Fails when points failed in this run (as `sweep run` does).
fn failed_now(counts: &sweep::Counts, store: &Store) -> Result<()> {
    let failed_now = counts.failed - counts.failed_before;
    if failed_now > 0 {
        anyhow::bail!(
            "{failed_now} points failed: why is in {}/KEY.failed.json",
            store.dir.display()
        );
    }
    Ok(())
}

/// `sweep slurm --search`: the driver script.
pub fn slurm(
    spec: &Path,
    request: sweep::slurm::Request,
    seed: u64,
    budget: Option<u64>,
) -> Result<()> {
    if budget == Some(0) {
        anyhow::bail!("--budget 0: a search needs at least one run");
    }
    let (script, points) = Script::for_search(spec, request)?;
    out!("{}", script.search_driver(SearchRounds { seed, budget }));
    eprintln!(
        "sweep: a search of a {points}-point space, each round in {} tasks; run the driver with bash where sbatch is",
        script.tasks
    );
    Ok(())
}
