//! Running a shard of a sweep into a store: finished points are skipped,
//! failed ones are retried only when asked, the rest run (simulator points
//! in parallel: each is independent and deterministic).

use rayon::prelude::*;

use crate::point::{expand, Point, VERSION};
use crate::spec::{Mode, Spec, WorkloadKind};
use crate::store::{Failed, Finished, Results, State, Store, StoreError};
use ::store::Shard;

/// What a run found and did, over the shard's points.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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

/// Runs this shard's points of `spec` that the store lacks. `progress`
/// hears a line per point finished or failed.
pub fn run(
    spec: &Spec,
    store: &Store,
    opts: RunOptions,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Counts, StoreError> {
    run_points(
        spec,
        store,
        opts.shard.select(&expand(spec)),
        opts.retry_failed,
        progress,
    )
}

/// Runs those of `points` (of `spec`) that the store lacks, as [`run`]
/// does a shard's: `sweep search` hands it each round's points.
pub fn run_points(
    spec: &Spec,
    store: &Store,
    points: Vec<Point>,
    retry_failed: bool,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Counts, StoreError> {
    let mut counts = Counts {
        points: points.len(),
        ..Counts::default()
    };
    let mut todo = Vec::new();
    for p in points {
        match store.state(&p.key) {
            State::Finished => counts.finished_before += 1,
            State::Failed if !retry_failed => {
                counts.failed += 1;
                counts.failed_before += 1;
            }
            State::Failed | State::Missing => todo.push(p),
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
                    version: VERSION.to_string(),
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
                    version: VERSION.to_string(),
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
    Ok(counts)
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
