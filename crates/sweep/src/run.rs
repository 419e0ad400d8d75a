//! Running a shard of a sweep into a store: finished points are skipped,
//! failed ones are retried only when asked, bad entries (cut, emptied,
//! tampered, without a checksum, holding another key: `store::Fault`) are
//! run again and counted, the rest run (simulator points in parallel: each
//! is independent and deterministic). The shard's points are made one
//! chunk at a time ([`crate::point::Points`]), so a task's memory is
//! bounded by [`CHUNK`], not by the spec.

use std::collections::BTreeMap;

use rayon::prelude::*;

use crate::point::{version, Point, Points};
use crate::spec::{Mode, Spec, WorkloadKind};
use crate::store::{Failed, Finished, Results, Store, StoreError};
use ::store::{Checked, Expect, Shard};

/// Points checked and run together: enough to keep every CPU busy, few
/// enough that their configurations (a few KiB each) stay a few MiB.
/// Assumed (our choice).
pub const CHUNK: usize = 1024;

/// What a run found and did, over the shard's points.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// The shard's points.
    pub points: usize,
    /// Found finished in the store: not run.
    pub finished_before: usize,
    /// Run now and finished.
    pub run_now: usize,
    /// Failed now, or failed before and not retried.
    pub failed: usize,
    /// Of `failed`, those left from an earlier run (not retried).
    pub failed_before: usize,
    /// Bad entries found under the shard's keys and run again, by kind
    /// (`store::Fault::kind`).
    pub bad: BTreeMap<&'static str, usize>,
    /// Of `finished_before`, good entries another spec made of the same
    /// configuration, now marked as this spec's.
    pub adopted: usize,
}

impl Counts {
    /// `3 bad entries run again (1 empty, 1 tampered, 1 truncated)`, when
    /// there were any.
    pub fn bad_line(&self) -> Option<String> {
        let n: usize = self.bad.values().sum();
        (n > 0).then(|| {
            let kinds: Vec<String> = self.bad.iter().map(|(k, n)| format!("{n} {k}")).collect();
            format!("{n} bad entries run again ({})", kinds.join(", "))
        })
    }
}

impl std::fmt::Display for Counts {
    /// `N points: F finished before, R run now, X failed`.
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let tally = ::store::Tally {
            runs: self.points,
            before: self.finished_before,
            now: self.run_now,
            failed: self.failed,
        };
        f.write_str(&tally.line("points", "finished before"))?;
        if self.failed_before > 0 {
            write!(
                f,
                " ({} earlier, not retried: --retry-failed)",
                self.failed_before
            )?;
        }
        Ok(())
    }
}

/// How to run.
#[derive(Clone, Copy, Debug)]
pub struct RunOptions {
    pub shard: Shard,
    /// Run points whose `KEY.failed.json` is in the store again.
    pub retry_failed: bool,
}

/// Runs this shard's points of `spec` that the store lacks or holds bad.
/// `progress` hears a line per point finished or failed and per bad entry
/// found.
pub fn run(
    spec: &Spec,
    store: &Store,
    opts: RunOptions,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Counts, StoreError> {
    let points = Points::new(spec).ok_or_else(|| StoreError::Io {
        path: spec.file.display().to_string(),
        reason: "more points than a u64 counts".into(),
    })?;
    let identity = spec.identity();
    let mut counts = Counts::default();
    let mut shard = points.shard(opts.shard).peekable();
    while shard.peek().is_some() {
        let chunk: Vec<Point> = shard.by_ref().take(CHUNK).collect();
        run_chunk(spec, store, &identity, opts, &chunk, &mut counts, progress)?;
    }
    Ok(counts)
}

/// Runs those of `points` (of `spec`) that the store lacks or holds bad,
/// as [`run`] does a shard's, a [`CHUNK`] at a time: `sweep search` hands
/// it each round's points.
pub fn run_points(
    spec: &Spec,
    store: &Store,
    points: Vec<Point>,
    retry_failed: bool,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Counts, StoreError> {
    let identity = spec.identity();
    let opts = RunOptions {
        shard: Shard::ALL,
        retry_failed,
    };
    let mut counts = Counts::default();
    for chunk in points.chunks(CHUNK) {
        run_chunk(spec, store, &identity, opts, chunk, &mut counts, progress)?;
    }
    Ok(counts)
}

fn run_chunk(
    spec: &Spec,
    store: &Store,
    identity: &str,
    opts: RunOptions,
    chunk: &[Point],
    counts: &mut Counts,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<(), StoreError> {
    counts.points += chunk.len();
    // Any spec's entry is this point's result if it is good: the key names
    // the whole configuration and the code version.
    let version = version();
    let expect = Expect {
        spec: None,
        version: Some(&version),
    };
    let mut todo = Vec::new();
    for p in chunk {
        match store.check::<Results>(&p.key, expect)? {
            Checked::Finished(mut f) => {
                counts.finished_before += 1;
                if f.spec != identity {
                    f.spec = identity.to_string();
                    store.put_finished(&f)?;
                    counts.adopted += 1;
                }
            }
            Checked::Failed(_) if !opts.retry_failed => {
                counts.failed += 1;
                counts.failed_before += 1;
            }
            Checked::Failed(_) | Checked::Missing => todo.push(p),
            Checked::Bad { path, fault } => {
                progress(&format!("{}: {fault}: run again", path.display()));
                *counts.bad.entry(fault.kind()).or_default() += 1;
                todo.push(p);
            }
        }
    }
    // Simulator points in parallel; emulator points one at a time after
    // them (each spins a device thread on a CPU of its own).
    let (emu, sim): (Vec<&Point>, Vec<&Point>) = todo.iter().partition(|p| p.mode == Mode::Emu);
    let one = |p: &&Point| -> Result<bool, StoreError> {
        let ok = match run_point(spec, p) {
            Ok(results) => {
                store.put_finished(&Finished {
                    key: p.key.clone(),
                    version: version.clone(),
                    spec: identity.to_string(),
                    config: p.config.clone(),
                    results,
                })?;
                progress(&format!("{} finished", p.key));
                true
            }
            Err(error) => {
                progress(&format!("{} failed: {error}", p.key));
                store.put_failed(&Failed {
                    key: p.key.clone(),
                    version: version.clone(),
                    spec: identity.to_string(),
                    config: p.config.clone(),
                    error,
                })?;
                false
            }
        };
        Ok(ok)
    };
    let mut outcomes: Vec<Result<bool, StoreError>> = sim.par_iter().map(one).collect();
    outcomes.extend(emu.iter().map(one));
    for o in outcomes {
        if o? {
            counts.run_now += 1;
        } else {
            counts.failed += 1;
        }
    }
    Ok(())
}

/// One point's run on the one runner (`point`); `Err` is why it failed,
/// one line, naming the workload.
fn run_point(spec: &Spec, p: &Point) -> Result<Results, String> {
    let w = &spec.workloads[p.workload];
    let device = spec.devices[p.device].clone();
    let front = match p.mode {
        Mode::Sim => ::point::Front::Sim {
            device,
            host: spec.hosts[p.host].clone(),
        },
        // On the spec's backend, or the device's model behind the
        // emulated controller.
        Mode::Emu => match &spec.emu_backend {
            Some((_, backend)) => ::point::Front::Emu {
                device: None,
                base: emu::EmuConfig {
                    backend: Some(backend.clone()),
                    ..emu::EmuConfig::default()
                },
            },
            None => ::point::Front::emu_on(device),
        },
    };
    let at = ::point::Point {
        front,
        settings: ::point::Settings::policy(p.policy.clone()),
        seed: p.seed,
        runtime: Some(spec.runtime),
    };
    let workload = match &w.kind {
        WorkloadKind::Jobs(jobs) => ::point::Workload::Jobs(jobs),
        WorkloadKind::App(app) => ::point::Workload::App(app),
        WorkloadKind::Trace { ios, replay } => ::point::Workload::Trace {
            ios,
            replay: *replay,
        },
    };
    let report = at.run(workload).map_err(|e| format!("{}: {e}", w.shown))?;
    Ok(Results::of(&report))
}

/// What a run would do, without running (`sweep run --dry-run`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// The spec's points, all shards.
    pub total: u64,
    /// This shard's, found finished, failed (not retried), to run.
    pub counts: Counts,
    pub to_run: usize,
    /// The shard's first point's key, if it has one.
    pub first: Option<String>,
}

impl std::fmt::Display for Plan {
    /// `N of T points in this shard: F finished before, X failed, R to run`.
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(
            f,
            "{} of {} points in this shard: {} finished before, {} failed, {} to run",
            self.counts.points,
            self.total,
            self.counts.finished_before,
            self.counts.failed,
            self.to_run
        )?;
        if let Some(first) = &self.first {
            write!(f, " (first {first})")?;
        }
        Ok(())
    }
}

/// What [`run`] would do with this shard: each point made and checked in
/// the store, nothing run or written.
pub fn plan(spec: &Spec, store: &Store, opts: RunOptions) -> Result<Plan, StoreError> {
    let points = Points::new(spec).ok_or_else(|| StoreError::Io {
        path: spec.file.display().to_string(),
        reason: "more points than a u64 counts".into(),
    })?;
    let version = version();
    let expect = Expect {
        spec: None,
        version: Some(&version),
    };
    let mut plan = Plan {
        total: points.len(),
        ..Plan::default()
    };
    for p in points.shard(opts.shard) {
        plan.counts.points += 1;
        plan.first.get_or_insert_with(|| p.key.clone());
        match store.check::<Results>(&p.key, expect)? {
            Checked::Finished(_) => plan.counts.finished_before += 1,
            Checked::Failed(_) if !opts.retry_failed => plan.counts.failed += 1,
            Checked::Failed(_) | Checked::Missing => plan.to_run += 1,
            Checked::Bad { fault, .. } => {
                *plan.counts.bad.entry(fault.kind()).or_default() += 1;
                plan.to_run += 1;
            }
        }
    }
    Ok(plan)
}
