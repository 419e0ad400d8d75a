//! `cinterrupts sweep search`: the spec's space searched in rounds around
//! the front (`sweep::search`), through the same store as `sweep run`;
//! and `sweep slurm --search`, its round-by-round Slurm driver.

use std::io::IsTerminal;

use anyhow::{anyhow, Result};
use sweep::front;
use sweep::search_run::{compare, search, SearchOptions};
use sweep::slurm::{Script, SearchRounds};
use sweep::{Spec, Store};

use crate::sweep_cmd::{SearchArgs, SlurmArgs};

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
pub fn slurm(a: &SlurmArgs) -> Result<()> {
    if a.budget == Some(0) {
        anyhow::bail!("--budget 0: a search needs at least one run");
    }
    let (script, points) = Script::for_search(
        &a.spec,
        sweep::slurm::Request {
            store: a.store.clone(),
            tasks: a.tasks,
            cpus_per_task: a.cpus_per_task,
            job_name: a.job_name.clone(),
            binary: a.binary.clone(),
            partition: a.partition.clone(),
        },
    )?;
    out!(
        "{}",
        script.search_driver(SearchRounds {
            seed: a.seed,
            budget: a.budget,
        })
    );
    eprintln!(
        "sweep: a search of a {points}-point space, each round in {} tasks; run the driver with bash where sbatch is",
        script.tasks
    );
    Ok(())
}
