//! `cinterrupts reproduce`: the paper's microbenchmarks rerun in the
//! simulator (with the paper's device profiles) and on the emulator (on
//! this machine), drawn as the paper draws them, and checked against the
//! claims the paper makes in its text.
//!
//! - [`figures`]: one small file per experiment (runs and panels);
//! - [`run`]: runs them, simulator runs in parallel;
//! - [`claims`]: the claims (`claims.toml`, data) and their verdicts;
//! - [`fits`]: every fit's runs and figures, which make a claim fitted;
//! - [`conclusions`]: each figure's conclusion, the paper's order against ours;
//! - [`mod@write`]: report.md, report.html, the SVG figures and every run's JSON;
//! - [`staging`]: the report's directory, whole or not at all;
//! - [`tables`]: the verdict tables of the project's Markdown, generated
//!   from a run's `summary.json`;
//! - [`ae`]: `reproduce --ae`, the evaluation bundle (source archive with
//!   its crates vendored, figure map, kick-the-tires and full scripts).

pub mod ae;
pub mod app;
mod apprun;
pub mod appwork;
pub mod bench;
pub mod claims;
pub mod conclusions;
pub mod experiment;
pub mod figures;
pub mod fits;
pub mod metric;
pub mod plot;
pub mod provenance;
pub mod rule;
pub mod run;
pub mod staging;
pub mod tables;
pub mod write;
pub mod xval;

pub use experiment::Experiment;

/// A run that failed, or a selection that names nothing: one line.
#[derive(Debug, thiserror::Error)]
pub enum ReproError {
    #[error("{experiment}: run '{run}' ({mode}): {reason}")]
    Run {
        experiment: String,
        run: String,
        mode: &'static str,
        reason: String,
    },
    #[error("--only: no experiment '{0}' (have: {1})")]
    Unknown(String, String),
    #[error("{0}")]
    Claims(String),
    /// A program `--mode app` runs is not installed.
    #[error("{0}")]
    MissingTool(String),
    #[error("{path}: {reason}")]
    Write { path: String, reason: String },
    /// The store of `reproduce --store`: unreadable, or refused.
    #[error("{0}")]
    Store(String),
}

/// The experiments `only` names (comma-separated ids), in the paper's
/// order; all of them when `only` is empty.
pub fn select(only: &[String]) -> Result<Vec<Experiment>, ReproError> {
    let all = figures::all();
    for id in only {
        if !all.iter().any(|e| e.id == id) {
            let have: Vec<&str> = all.iter().map(|e| e.id).collect();
            return Err(ReproError::Unknown(id.clone(), have.join(",")));
        }
    }
    Ok(all
        .into_iter()
        .filter(|e| only.is_empty() || only.iter().any(|id| id == e.id))
        .collect())
}

/// What `cinterrupts reproduce` was asked to do.
#[derive(Clone, Debug)]
pub struct Options {
    pub only: Vec<String>,
    pub plan: run::Plan,
    pub out: std::path::PathBuf,
    /// The command line, for the report.
    pub command: String,
}

/// Runs the selected experiments, saves every run as it finishes, and
/// writes the report. `progress(done, total)` follows the runs. The
/// destination is checked before any run, and the report replaces it whole
/// at the end, or not at all ([`staging`]).
pub fn reproduce(
    opts: &Options,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<write::Tally, ReproError> {
    let (tally, _) = reproduce_with(opts, None, progress)?;
    Ok(tally.expect("without a store every run is this task's"))
}

/// [`reproduce`] with every simulated run kept in a store (`reproduce
/// --store`): stored runs are read, this shard's missing ones run. The
/// report is written when the store then holds every run (the verdicts
/// of one run without a store); else nothing is written and the counts
/// say how many runs are other shards'.
pub fn reproduce_kept(
    opts: &Options,
    keep: run::Keep,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<(Option<write::Tally>, run::KeptCounts), ReproError> {
    reproduce_with(opts, Some(keep), progress)
}

fn reproduce_with(
    opts: &Options,
    keep: Option<run::Keep>,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<(Option<write::Tally>, run::KeptCounts), ReproError> {
    let started = std::time::Instant::now();
    let experiments = select(&opts.only)?;
    let mut claims = claims::load(claims::SHIPPED, "claims.toml", &figures::all())
        .map_err(ReproError::Claims)?;
    // The completion field's claims on the modes this build has (issue 40
    // item 5); the others wait for their branches (listed in its section).
    let (field, _) = claims::load_available(
        figures::field::CLAIMS,
        "field-claims.toml",
        figures::all().as_slice(),
    )
    .map_err(ReproError::Claims)?;
    claims.extend(field);
    let staged = staging::Staged::prepare(&opts.out)?;
    let done = std::sync::atomic::AtomicUsize::new(0);
    let save = |o: &run::Outcome, total: usize| {
        write::save_run(staged.path(), o)?;
        progress(
            done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
            total,
        );
        Ok(())
    };
    let (results, counts) = match keep {
        None => (
            run::run_all(&experiments, &opts.plan, &save)?,
            run::KeptCounts::default(),
        ),
        Some(keep) => run::run_kept(&experiments, &opts.plan, keep, &save)?,
    };
    if counts.missing > 0 {
        // Not every run is here: the staged report is dropped unwritten.
        return Ok((None, counts));
    }
    let ctx = write::Context {
        command: &opts.command,
        plan: &opts.plan,
        wall_secs: started.elapsed().as_secs_f64(),
    };
    let tally = write::report(staged.path(), &experiments, &claims, &results, &ctx)?;
    staged.commit()?;
    Ok((Some(tally), counts))
}
