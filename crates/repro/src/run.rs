//! Runs the experiments' configurations: in the simulator in parallel
//! across cores (every run is independent and deterministic for its seed),
//! then on the emulator one at a time (its device thread owns a CPU).
//!
//! With a store ([`Keep`], `reproduce --store`) every simulated run is
//! kept under a key of its fully resolved inputs (the jobs as parsed, the
//! throttle's cap included, or the application's threads; the loaded
//! profiles with the run's host settings; the policy, seed and runtime)
//! and read back instead of run again; a shard runs only its share of the
//! runs the store lacks.

use std::collections::BTreeMap;

use policy::{Nanos, MS};
use rayon::prelude::*;
use report::{Mode, RunReport};

use crate::experiment::{Experiment, RunSpec, Workload};
use crate::metric::Metric;
use crate::ReproError;

/// The code version every key holds (issue 42 item 1: the package
/// version and the commit, and the sources' hash for a dirty tree:
/// `report::made_by::Code::id`): another build may simulate differently,
/// so its runs are new runs, never mixed with this one's.
pub fn version() -> String {
    report::made_by::code().id()
}

/// Where simulated runs are kept, and which of them this task runs.
#[derive(Clone, Copy, Debug)]
pub struct Keep<'a> {
    pub store: &'a store::Store,
    pub shard: store::Shard,
}

/// What a task with a store found and did, over the simulated runs it
/// owns or found stored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeptCounts {
    pub tally: store::Tally,
    /// Runs neither stored nor this shard's: the results are not whole.
    pub missing: usize,
}

impl KeptCounts {
    /// `900 runs: 850 stored before, 50 run now, 0 failed`.
    pub fn line(&self) -> String {
        self.tally.line("runs", "stored before")
    }

    /// What the task says after its runs (`reproduce: ` before each): the
    /// counts, which runs they were and in which store `dir`; and, while
    /// other shards' runs are missing, how to finish.
    pub fn lines(&self, shard: store::Shard, dir: &std::path::Path) -> Vec<String> {
        let part = if shard == store::Shard::ALL {
            "every run".to_string()
        } else {
            format!("shard {shard} of the runs, 0-based")
        };
        let mut lines = vec![format!("{} ({part}, in {})", self.line(), dir.display())];
        if self.missing > 0 {
            lines.push(format!(
                "{} runs are not in {} yet (other shards'); when every shard is done, `reproduce --store` without --shard writes the report",
                self.missing,
                dir.display()
            ));
        }
        lines
    }
}

/// The shortest simulated run `reproduce` takes: below it some jobs of the
/// experiments complete no I/O at all, and their figures read 0 (issue 12:
/// `--sim-runtime 1ns` exited 0 with IOPS 0). Measured with
/// `cinterrupts reproduce --quick --seeds 3 --sim-runtime T` and counting the
/// jobs with no I/O in `runs/`: 17 at 10ms, 2 at 25ms, none at 30ms (the
/// sync jobs beside a batch job in fig11, fig15 and fig21 come last).
pub const MIN_SIM_RUNTIME: Nanos = 30 * MS;

/// `reproduce --sim-runtime`: a run length (as `jobs::units` reads one,
/// a bare number in seconds) of at least [`MIN_SIM_RUNTIME`].
pub fn parse_sim_runtime(s: &str) -> Result<Nanos, String> {
    match jobs::units::parse_duration(s, Some(policy::SEC))? {
        0 => Err("must be more than 0".to_string()),
        ns if ns < MIN_SIM_RUNTIME => Err(format!(
            "shorter than {}, the least in which every experiment's jobs all complete I/O (shorter runs report 0 IOPS)",
            policy::format_nanos(MIN_SIM_RUNTIME)
        )),
        ns => Ok(ns),
    }
}

/// How much to run.
#[derive(Clone, Debug)]
pub struct Plan {
    pub modes: Vec<Mode>,
    /// Virtual time per simulated run, and how many seeds (the paper
    /// averaged 10 runs of 60 s).
    pub sim_runtime: Nanos,
    pub sim_seeds: u32,
    /// Wall time per emulated run, and how many repetitions.
    pub emu_runtime: Nanos,
    pub emu_reps: u32,
}

impl Plan {
    /// Short runs: about 4 s of CPU in all with the simulator (3.7 s user
    /// measured with `/usr/bin/time cinterrupts reproduce --quick`).
    pub fn quick(modes: Vec<Mode>) -> Plan {
        Plan {
            modes,
            sim_runtime: 200 * MS,
            sim_seeds: 3,
            emu_runtime: 300 * MS,
            emu_reps: 1,
        }
    }

    /// Longer runs, 10 seeds per simulated point as the paper's 10 runs.
    pub fn full(modes: Vec<Mode>) -> Plan {
        Plan {
            modes,
            sim_runtime: 1000 * MS,
            sim_seeds: 10,
            emu_runtime: 2000 * MS,
            emu_reps: 3,
        }
    }
}

/// One finished run.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub experiment: &'static str,
    pub key: String,
    pub mode: Mode,
    pub seed: u64,
    pub report: RunReport,
}

/// Mean, standard deviation and count of a metric over seeds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stat {
    pub mean: f64,
    pub sd: f64,
    pub n: usize,
}

/// Every run's reports, by experiment, run key and mode.
#[derive(Clone, Debug, Default)]
pub struct Results {
    runs: BTreeMap<(String, String, &'static str), Vec<RunReport>>,
}

impl Results {
    pub fn add(&mut self, o: Outcome) {
        self.runs
            .entry((o.experiment.to_string(), o.key, o.mode.as_str()))
            .or_default()
            .push(o.report);
    }

    pub fn reports(&self, experiment: &str, key: &str, mode: Mode) -> &[RunReport] {
        self.runs
            .get(&(experiment.to_string(), key.to_string(), mode.as_str()))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// `metric` over the run's seeds; `None` if the run did not happen or
    /// has no such value.
    pub fn stat(&self, experiment: &str, key: &str, mode: Mode, metric: &Metric) -> Option<Stat> {
        let values: Vec<f64> = self
            .reports(experiment, key, mode)
            .iter()
            .filter_map(|r| metric.of(r))
            .collect();
        if values.is_empty() {
            return None;
        }
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
        Some(Stat {
            mean,
            sd: var.sqrt(),
            n: values.len(),
        })
    }

    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }
}

struct Task<'a> {
    experiment: &'a Experiment,
    run: &'a RunSpec,
    mode: Mode,
    seed: u64,
}

/// Runs every configuration of `experiments` under `plan`. `done` hears of
/// each finished run (to save it and move a progress bar) and is told how
/// many runs there are in all; its error (a run that cannot be saved) stops
/// the runs not yet started.
pub fn run_all(
    experiments: &[Experiment],
    plan: &Plan,
    done: &(dyn Fn(&Outcome, usize) -> Result<(), ReproError> + Sync),
) -> Result<Results, ReproError> {
    run_tasks(experiments, plan, None, done).map(|(results, _)| results)
}

/// [`run_all`] with every simulated run kept in `keep.store`: those stored
/// are read, this shard's missing ones run. The results are whole when the
/// counts' `missing` is 0. The emulator's runs are refused: a measurement,
/// not a result its configuration determines.
pub fn run_kept(
    experiments: &[Experiment],
    plan: &Plan,
    keep: Keep,
    done: &(dyn Fn(&Outcome, usize) -> Result<(), ReproError> + Sync),
) -> Result<(Results, KeptCounts), ReproError> {
    if plan.modes.contains(&Mode::Emu) {
        return Err(ReproError::Store(
            "--store is for --mode sim: an emulator run is a measurement, not a result its configuration determines, so a stored one is no cache".into(),
        ));
    }
    run_tasks(experiments, plan, Some(keep), done)
}

/// A simulated run's place with a store: whether it is this shard's, and
/// whether every run before its batch is here (a throttled run's cap is
/// the mean of another run's seeds: from some of them it would be another
/// cap, so another run).
#[derive(Clone, Copy)]
struct Share<'a> {
    keep: Keep<'a>,
    owned: bool,
    whole: bool,
    /// The task's counts, which every run adds to.
    counts: &'a std::sync::Mutex<KeptCounts>,
}

fn run_tasks(
    experiments: &[Experiment],
    plan: &Plan,
    keep: Option<Keep>,
    done: &(dyn Fn(&Outcome, usize) -> Result<(), ReproError> + Sync),
) -> Result<(Results, KeptCounts), ReproError> {
    let mut tasks: Vec<Task> = Vec::new();
    for &mode in &plan.modes {
        let seeds = match mode {
            Mode::Sim => plan.sim_seeds,
            Mode::Emu => plan.emu_reps,
        };
        for e in experiments {
            for r in &e.runs {
                // The emulator has neither FastResponse's host mechanisms
                // nor another host: those runs are the simulator's only.
                // Application models run in the simulator only.
                let app = e.workload(r.workload).is_some_and(|w| w.app);
                if mode == Mode::Emu && (!r.emulated() || app) {
                    continue;
                }
                for seed in 1..=u64::from(seeds.max(1)) {
                    tasks.push(Task {
                        experiment: e,
                        run: r,
                        mode,
                        seed,
                    });
                }
            }
        }
    }
    let total = tasks.len();
    let mut results = Results::default();
    let counts = std::sync::Mutex::new(KeptCounts::default());
    // Throttled runs take their cap from another run, so they go second.
    let (first, second): (Vec<Task>, Vec<Task>) =
        tasks.into_iter().partition(|t| t.run.throttle.is_none());
    for batch in [first, second] {
        let (sims, emus): (Vec<&Task>, Vec<&Task>) =
            batch.iter().partition(|t| t.mode == Mode::Sim);
        // A simulated run is a function of its configuration and seed, so
        // runs an experiment repeats only to draw them in every group (Fig
        // 11's one cint line) are simulated once and their report shared.
        let mut first_of: BTreeMap<String, usize> = BTreeMap::new();
        let owners: Vec<usize> = sims
            .iter()
            .enumerate()
            .map(|(i, t)| *first_of.entry(t.signature()).or_insert(i))
            .collect();
        let unique: Vec<usize> = (0..sims.len()).filter(|&i| owners[i] == i).collect();
        // The shard's share: the unique runs in the order of their
        // signatures' hashes, the same in every task (keys need the
        // throttled runs' caps, which only whole results give).
        let mut order: Vec<(String, usize)> = unique
            .iter()
            .map(|&i| (store::canon::hex(sims[i].signature().as_bytes()), i))
            .collect();
        order.sort();
        let owned: BTreeMap<usize, bool> = order
            .iter()
            .enumerate()
            .map(|(pos, &(_, i))| (i, keep.map_or(true, |k| k.shard.owns(pos))))
            .collect();
        let whole = counts.lock().is_ok_and(|c| c.missing == 0);
        // Collected into a Result, the first error stops the rest.
        let outcomes: Vec<(usize, Option<Outcome>)> = unique
            .par_iter()
            .map(|&i| {
                let o = one(
                    sims[i],
                    plan,
                    &results,
                    keep.map(|keep| Share {
                        keep,
                        owned: owned[&i],
                        whole,
                        counts: &counts,
                    }),
                )?;
                if let Some(o) = &o {
                    done(o, total)?;
                }
                Ok((i, o))
            })
            .collect::<Result<_, ReproError>>()?;
        let by_task: BTreeMap<usize, Option<Outcome>> = outcomes.into_iter().collect();
        for (i, t) in sims.iter().enumerate() {
            let Some(o) = &by_task[&owners[i]] else {
                continue;
            };
            let mut o = o.clone();
            if owners[i] != i {
                o.key = t.run.key.clone();
                o.experiment = t.experiment.id;
                done(&o, total)?;
            }
            results.add(o);
        }
        for t in emus {
            let Some(o) = one(t, plan, &results, None)? else {
                continue;
            };
            done(&o, total)?;
            results.add(o);
        }
    }
    let counts = counts.into_inner().unwrap_or_else(|e| e.into_inner());
    Ok((results, counts))
}

impl Task<'_> {
    /// Everything a simulated run depends on, beside the experiment's
    /// panels and the key it is drawn under.
    fn signature(&self) -> String {
        let r = self.run;
        let text = self.experiment.workload(r.workload).map(|w| w.text);
        format!(
            "{text:?}|{}|{}|{:?}{}|{:?}|{:?}|{:?}|{:?}|{}|{}",
            r.device,
            r.host,
            r.host_settings,
            // Only a run with idle states set says so: every other run's
            // signature (and stored result) stays what it was.
            r.idle.as_ref().map_or(String::new(), |i| format!("|{i:?}")),
            r.min_runtime,
            r.policy,
            r.fio_args,
            r.throttle
                .as_ref()
                .map(|t| (t.job, t.like.clone(), self.experiment.id)),
            self.mode.as_str(),
            self.seed
        )
    }
}

impl Task<'_> {
    /// This run's failure, naming the experiment, the run and the mode.
    fn fail(&self, reason: String) -> ReproError {
        ReproError::Run {
            experiment: self.experiment.id.to_string(),
            run: self.run.key.clone(),
            mode: self.mode.as_str(),
            reason,
        }
    }

    /// This run as a point of the one runner (`point`): on the simulator,
    /// its host profile with the run's host settings and idle states, the
    /// plan's runtime or the run's own least; on the emulator, the
    /// device's model behind the controller for the plan's runtime, with
    /// the run's host settings (an emulated run has none but io_uring's
    /// wait: `RunSpec::emulated`).
    fn point(
        &self,
        plan: &Plan,
        device: sim::DeviceProfile,
        jobs: &[jobs::Job],
    ) -> Result<point::Point, String> {
        let mut settings = point::Settings {
            policy: self.run.policy.clone(),
            host: self.run.host_settings.clone(),
            idle: self.run.idle.clone(),
        };
        let (front, runtime) = match self.mode {
            Mode::Sim => {
                let host = sim::HostProfile::load(self.run.host).map_err(|err| err.to_string())?;
                let runtime = plan.sim_runtime.max(self.run.min_runtime.unwrap_or(0));
                (point::Front::Sim { device, host }, runtime)
            }
            Mode::Emu => {
                // io_uring jobs wait as the run says, min-complete (the
                // emulator's own) unless a host strategy is set: named, so
                // that their wake-ups are reported (`run --uring`).
                if jobs.iter().any(|j| j.ioengine == jobs::Engine::IoUring) {
                    settings.host.uring = settings
                        .host
                        .uring
                        .or(Some(host::uring::Strategy::MinComplete));
                }
                (point::Front::emu_on(device), plan.emu_runtime)
            }
        };
        Ok(point::Point {
            front,
            settings,
            seed: self.seed,
            runtime: Some(runtime),
        })
    }
}

/// One run; `None` when it is kept elsewhere: not in the store and not
/// this shard's (`keep` with whether it is), or throttled to a run missing.
fn one(
    t: &Task,
    plan: &Plan,
    so_far: &Results,
    keep: Option<Share>,
) -> Result<Option<Outcome>, ReproError> {
    let e = t.experiment;
    let fail = |reason: String| t.fail(reason);
    let workload = e
        .workload(t.run.workload)
        .ok_or_else(|| fail(format!("no workload '{}'", t.run.workload)))?;
    if workload.app {
        return one_app(t, plan, workload, keep);
    }
    let origin = format!("{}/{}.fio", e.id, workload.name);
    // The artifact's scripts pass fio options on fio's command line.
    let mut cmd = jobs::CommandLine::default();
    for arg in &t.run.fio_args {
        cmd.push_arg(arg.trim_start_matches("--"));
    }
    let mut jobs = jobs::parse_str_with(workload.text, &origin, &|_| None, &cmd)
        .map_err(|err| fail(err.to_string()))?
        .jobs;
    if let Some(th) = &t.run.throttle {
        if let Some(k) = keep.filter(|k| !k.whole) {
            // Its cap comes from runs of other shards not stored yet.
            count(k.counts, |c| c.missing += 1);
            return Ok(None);
        }
        let cap = so_far
            .stat(e.id, &th.like, t.mode, &Metric::Iops(th.job.to_string()))
            .ok_or_else(|| {
                fail(format!(
                    "no IOPS of '{}' in run '{}' to throttle to",
                    th.job, th.like
                ))
            })?;
        // Per clone: fio's rate_iops caps each job clone.
        let clones = jobs.iter().filter(|j| j.name == th.job).count().max(1) as f64;
        let per_clone = (cap.mean / clones).round().max(1.0) as u64;
        for j in jobs.iter_mut().filter(|j| j.name == th.job) {
            j.rate_iops = Some((per_clone, 0));
        }
    }
    let device = sim::DeviceProfile::load(t.run.device).map_err(|err| fail(err.to_string()))?;
    let at = t.point(plan, device, &jobs).map_err(fail)?;
    let run = || at.run(point::Workload::Jobs(&jobs));
    let report = match at.sim_config() {
        Some(config) => {
            let inputs = store::fingerprint(&(&jobs, &config));
            let Some(report) = kept(t, &config, inputs, keep, run)? else {
                return Ok(None);
            };
            report
        }
        None => run().map_err(|err| fail(err.to_string()))?,
    };
    Ok(Some(Outcome {
        experiment: e.id,
        key: t.run.key.clone(),
        mode: t.mode,
        seed: t.seed,
        report,
    }))
}

fn count(counts: &std::sync::Mutex<KeptCounts>, f: impl FnOnce(&mut KeptCounts)) {
    f(&mut counts.lock().unwrap_or_else(|e| e.into_inner()));
}

/// A simulated run through the store, when there is one: read if stored,
/// else run (`run`) and stored if this shard's, else left missing (`None`). Its key
/// is the hash of `inputs` (the fingerprint of everything the simulation
/// is given) beside the run's names, policy, seed and runtime.
fn kept<E: std::fmt::Display>(
    t: &Task,
    config: &sim::SimConfig,
    inputs: String,
    keep: Option<Share>,
    run: impl FnOnce() -> Result<RunReport, E>,
) -> Result<Option<RunReport>, ReproError> {
    let fail = |reason: String| t.fail(reason);
    let Some(Share {
        keep,
        owned,
        counts,
        ..
    }) = keep
    else {
        return run().map(Some).map_err(|err| fail(err.to_string()));
    };
    // The policy the simulator ran (`sim` fills in the device's tuned
    // delta and thr): a report read back takes its policy from it.
    let policy = service::with_device_defaults(config.policy.clone(), &config.device);
    let resolved = serde_json::json!({
        "experiment": "reproduce",
        "inputs": inputs,
        "device": store::resolved::profile(&config.device.name, &config.device),
        "host": store::resolved::profile(&config.host.name, &config.host),
        "policy": store::resolved::policy(&policy),
        "seed": config.seed,
        "runtime_ns": config.runtime,
    });
    let key = store::key(&resolved, &version());
    let io = |e: store::StoreError| ReproError::Store(e.to_string());
    if let Some(f) = keep.store.get::<RunReport>(&key).map_err(io)? {
        count(counts, |c| {
            c.tally.runs += 1;
            c.tally.before += 1;
        });
        let mut report = f.results;
        report.policy = report::PolicyInfo::of(&policy);
        return Ok(Some(report));
    }
    if !owned {
        count(counts, |c| c.missing += 1);
        return Ok(None);
    }
    count(counts, |c| c.tally.runs += 1);
    match run() {
        Ok(mut report) => {
            // Kept with what made it, so that its run file says so when a
            // later reproduce reads it back (issue 42 item 1).
            report.made_by = Some(report::made_by::current(&[config.seed]));
            keep.store
                .put_finished(&store::Finished {
                    key,
                    version: version(),
                    // No spec: the key is the whole configuration (store::Finished::spec).
                    spec: String::new(),
                    config: resolved,
                    results: report.clone(),
                })
                .map_err(io)?;
            count(counts, |c| c.tally.now += 1);
            Ok(Some(report))
        }
        Err(err) => {
            count(counts, |c| c.tally.failed += 1);
            keep.store
                .put_failed(&store::Failed {
                    key,
                    version: version(),
                    // No spec: the key is the whole configuration (store::Finished::spec).
                    spec: String::new(),
                    config: resolved,
                    error: err.to_string(),
                })
                .map_err(io)?;
            Err(fail(err.to_string()))
        }
    }
}

/// A run of an application file (issue 16): the simulator's only.
fn one_app(
    t: &Task,
    plan: &Plan,
    workload: &Workload,
    keep: Option<Share>,
) -> Result<Option<Outcome>, ReproError> {
    let e = t.experiment;
    let fail = |reason: String| t.fail(reason);
    let origin = format!("{}/{}.toml", e.id, workload.name);
    let text = crate::appwork::with_overrides(workload.text, &t.run.fio_args).map_err(fail)?;
    let file = apps::file::AppFile::parse(&text, &origin).map_err(|err| fail(err.to_string()))?;
    let device = sim::DeviceProfile::load(t.run.device).map_err(|err| fail(err.to_string()))?;
    let at = t.point(plan, device, &[]).map_err(fail)?;
    let config = at
        .sim_config()
        .ok_or_else(|| fail("an application model runs in the simulator only".into()))?;
    // The file with its overrides and the seed make the threads.
    let inputs = store::fingerprint(&(&text, &origin, &config));
    let run = || at.run(point::Workload::App(&file));
    let Some(report) = kept(t, &config, inputs, keep, run)? else {
        return Ok(None);
    };
    Ok(Some(Outcome {
        experiment: e.id,
        key: t.run.key.clone(),
        mode: t.mode,
        seed: t.seed,
        report,
    }))
}
