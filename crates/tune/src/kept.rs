//! Tuning with every run kept in a store (issue 28 item 4): the baseline
//! and each candidate (a delta and a thr) under a key of its fully resolved configuration, so
//! a rerun reads what is stored, a killed tuning started again runs only
//! the missing runs, and array tasks split the candidates between them
//! (`store::Shard`: sorted by key, point i to shard i mod N).
//!
//! Every shard needs the candidate deltas, so each runs the baseline, or reads it when an
//! earlier task stored it (shards that run it at once write the same
//! deterministic result, each file whole). The tuning is assembled from
//! the store once every candidate is there, by any task: the last shard to
//! finish, or a final run without a shard, which runs nothing.
//!
//! The simulator only: an emulator run is a measurement (its device
//! thread's timing, the machine's noise), not a function of its
//! configuration, so a stored one would not be a cache of the next.

use jobs::Job;
use policy::PolicySpec;
use rayon::prelude::*;
use report::Gaps;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use store::resolved as part;
use store::{Failed, Finished, Shard, Store, Tally};

use crate::TuneConfig;
use crate::{adaptive_at, assemble, candidates, check, run_one, Candidate, Point, Target};
use crate::{TuneError, Tuning, BASELINE_STEP};

/// Why the emulator's runs are not kept.
pub const EMULATOR_REFUSED: &str = "--store is for --mode sim: an emulator run is a measurement, not a result its configuration determines, so a stored one is no cache";

/// The code version every key holds (issue 42 item 1: the package
/// version and the commit, and the sources' hash for a dirty tree:
/// `report::made_by::Code::id`): another build may simulate differently,
/// so its runs are new runs, never mixed with this one's.
pub fn version() -> String {
    report::made_by::code().id()
}

/// What a stored run holds, in every key: 2 added each run's p99 and CPU
/// (the front's axes, issue 36 item 7). A file of the first layout lacks
/// them, so it has another key and is run again rather than misread.
const LAYOUT: u32 = 2;

/// What the store keeps of a run: its figures and, for the baseline, the
/// completion gaps delta is read from. Exactly what [`tune_kept`] needs to
/// finish a tuning without running it again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Kept {
    pub point: Point,
    pub gaps: Option<Gaps>,
}

/// Where to keep the runs and which of them this task runs.
#[derive(Clone, Copy, Debug)]
pub struct Keep<'a> {
    pub store: &'a Store,
    pub shard: Shard,
    /// The job file's bytes: their hash is in every key, beside the jobs
    /// as parsed (which hold the command line's job options).
    pub job_file: &'a [u8],
}

/// A task's end.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Over the task's runs: the baseline and its share of the candidates.
    pub counts: Tally,
    /// The tuning, when every candidate is in the store.
    pub tuning: Option<Tuning>,
    /// The candidates (a delta and a thr each), and how many of them the
    /// store still lacks (other shards' not yet done).
    pub candidates: usize,
    pub missing: usize,
}

impl Outcome {
    /// `15 runs: 9 stored before, 6 run now, 0 failed`.
    pub fn counts_line(&self) -> String {
        self.counts.line("runs", "stored before")
    }

    /// What the task says after its runs (`tune: ` before each): the
    /// counts, which runs they were and in which store `dir`; and, while
    /// other shards' candidates are missing, how to finish (`out`: the
    /// tuning also writes --out).
    pub fn lines(&self, shard: Shard, dir: &std::path::Path, out: bool) -> Vec<String> {
        let part = if shard == Shard::ALL {
            "every run".to_string()
        } else {
            format!("the baseline and shard {shard} of the candidates, 0-based")
        };
        let mut lines = vec![format!(
            "{} ({part}, in {})",
            self.counts_line(),
            dir.display()
        )];
        if self.tuning.is_none() {
            lines.push(format!(
                "{} of {} candidates are not in {} yet (other shards'); when every shard is done, `tune --store` without --shard prints the tuning{}",
                self.missing,
                self.candidates,
                dir.display(),
                if out { " and writes --out" } else { "" }
            ));
        }
        lines
    }
}

/// One run: its key, the configuration the key is the hash of, the policy.
struct Run {
    key: String,
    config: Value,
    policy: PolicySpec,
    /// `None` for the baseline.
    at: Option<Candidate>,
}

/// Tunes `jobs` as [`crate::tune`] does, keeping every run in
/// `keep.store` and running only this shard's candidates that it lacks.
/// `progress` hears a line per step that runs something.
pub fn tune_kept(
    jobs: &[Job],
    cfg: &TuneConfig,
    keep: Keep,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Outcome, TuneError> {
    if let Target::Emu(_) = cfg.target {
        return Err(TuneError::Config(EMULATOR_REFUSED.into()));
    }
    check(cfg)?;
    let mut counts = Tally {
        runs: 1,
        ..Tally::default()
    };
    let base = run_of(jobs, cfg, keep, PolicySpec::named("default"), None);
    let base = match keep.store.get::<Kept>(&base.key)? {
        Some(f) => {
            counts.before += 1;
            f.results
        }
        None => {
            progress(BASELINE_STEP);
            let kept = measure(jobs, cfg, keep, &base)?;
            counts.now += 1;
            kept
        }
    };
    let gaps = base.gaps.clone().ok_or(TuneError::NoGaps)?;

    let all = candidates(cfg, &gaps);
    let mut by_key: Vec<Run> = all
        .iter()
        .map(|&c| run_of(jobs, cfg, keep, adaptive_at(c.delta, c.thr), Some(c)))
        .collect();
    by_key.sort_by(|a, b| a.key.cmp(&b.key));
    let mine: Vec<&Run> = by_key
        .iter()
        .enumerate()
        .filter(|(i, _)| keep.shard.owns(*i))
        .map(|(_, r)| r)
        .collect();
    counts.runs += mine.len();
    let mut todo = Vec::new();
    for r in mine {
        match keep.store.get::<Kept>(&r.key)? {
            Some(_) => counts.before += 1,
            None => todo.push(r),
        }
    }
    if !todo.is_empty() {
        progress(&crate::sweep_step(&all, todo.len()));
    }
    // Simulations are independent and deterministic: run them at once.
    let outcomes: Vec<Result<Kept, TuneError>> = todo
        .par_iter()
        .map(|r| measure(jobs, cfg, keep, r))
        .collect();
    let mut first_error = None;
    for o in outcomes {
        match o {
            Ok(_) => counts.now += 1,
            Err(e) => {
                counts.failed += 1;
                first_error.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }

    // The candidates in their order, from the store: what this task ran
    // and what the other shards did are read alike.
    let mut points = Vec::new();
    for c in &all {
        let key = &by_key.iter().find(|r| r.at == Some(*c)).expect("keyed").key;
        if let Some(f) = keep.store.get::<Kept>(key)? {
            points.push(f.results.point);
        }
    }
    let missing = all.len() - points.len();
    let tuning = (missing == 0).then(|| assemble(cfg, gaps, base.point, points));
    Ok(Outcome {
        counts,
        tuning,
        candidates: all.len(),
        missing,
    })
}

/// A run of `policy` and its key.
fn run_of(
    jobs: &[Job],
    cfg: &TuneConfig,
    keep: Keep,
    policy: PolicySpec,
    at: Option<Candidate>,
) -> Run {
    let config = resolved(jobs, cfg, keep, &policy);
    Run {
        key: store::key(&config, &version()),
        config,
        policy,
        at,
    }
}

/// Runs `r` and stores what it gives: its figures and gaps, or why it
/// failed (then also the error).
fn measure(jobs: &[Job], cfg: &TuneConfig, keep: Keep, r: &Run) -> Result<Kept, TuneError> {
    match run_one(jobs, cfg, r.policy.clone()) {
        Ok(report) => {
            let kept = Kept {
                point: Point::of(r.at.map(|c| c.delta), r.at.map(|c| c.thr), &report),
                // Only the baseline's are read (delta); a candidate's would
                // only fill the store.
                gaps: if r.at.is_none() {
                    report.completion_gaps
                } else {
                    None
                },
            };
            keep.store.put_finished(&Finished {
                key: r.key.clone(),
                version: version(),
                // No spec: the key is the whole configuration (store::Finished::spec).
                spec: String::new(),
                config: r.config.clone(),
                results: kept.clone(),
            })?;
            Ok(kept)
        }
        Err(e) => {
            keep.store.put_failed(&Failed {
                key: r.key.clone(),
                version: version(),
                // No spec: the key is the whole configuration (store::Finished::spec).
                spec: String::new(),
                config: r.config.clone(),
                error: e.to_string(),
            })?;
            Err(e)
        }
    }
}

/// The configuration a run is keyed on: everything its result depends on.
/// The percentiles, the tolerance, the objective and the budget are not
/// in it: the baseline is the same run whatever they are, and the
/// percentiles reach the candidates through their delta.
fn resolved(jobs: &[Job], cfg: &TuneConfig, keep: Keep, policy: &PolicySpec) -> Value {
    let Target::Sim { device, host, seed } = &cfg.target else {
        unreachable!("tune_kept refuses the emulator first");
    };
    json!({
        "experiment": "tune",
        "workload": {
            "file": store::canon::hex(keep.job_file),
            "jobs": store::fingerprint(&jobs),
        },
        "device": part::profile(&device.name, device),
        "host": part::profile(&host.name, host),
        "mode": "sim",
        "seed": seed,
        "runtime_ns": cfg.runtime,
        "policy": part::policy(policy),
        "kept": LAYOUT,
    })
}
