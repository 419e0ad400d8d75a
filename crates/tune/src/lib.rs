//! Tuning adaptive coalescing's delta and thr for a device, by the method
//! of TOS 5.2 (Figs 18 and 19):
//!
//! 1. Run the workload with no coalescing (`default`: an interrupt per
//!    completion, so the gaps between completions are the device's and the
//!    host's, not a policy's) and read the CDF of the time between
//!    consecutive completions posted to the same CQ. delta is the gap at a
//!    percentile, rounded up to the next whole microsecond
//!    ([`pick::delta`]).
//! 2. With delta fixed, sweep thr under `adaptive` and take the smallest
//!    thr after which throughput stops rising ([`pick::plateau`]).
//!
//! 3. Beside that pick, every candidate, adaptive at each candidate delta
//!    (the gap at each of [`DELTA_PERCENTILES`] and at the percentile,
//!    rounded as delta is) and each thr, is a setting of one sweep; its
//!    Pareto fronts are `sweep::front`'s, and the recommendation is the
//!    setting on a front that a stated objective prefers, within optional
//!    budgets ([`recommend`]; issue 36 item 7: TOS 5.2's pick is not a
//!    point of the interrupts/p99 trade-off, and is judged against it).
//!
//! It runs on the simulator (a device and a host profile; the sweep's
//! points run in parallel) or on the emulator (a backend; one run at a
//! time, since each run has a device thread spinning on a CPU). On the
//! simulator [`kept::tune_kept`] keeps every run in a store, so a tuning
//! resumes and its thr points split into shards.

pub mod kept;
pub mod out;
pub mod pick;
pub mod plot;
pub mod recommend;
pub mod render;
pub mod target;

use emu::{EmuConfig, EmuError};
use jobs::Job;
use policy::{Nanos, PolicySpec};
use rayon::prelude::*;
use report::{Gaps, RunReport};
use serde::{Deserialize, Serialize};
use sim::{DeviceProfile, HostProfile, SimError};
use sweep::front::{Front, Setting};

pub use recommend::{Budget, Objective};

/// The thr values swept by default: dense where the paper's plateau starts
/// (16 to 32), sparser above, up to 255 (TOS 5.2 sweeps [0, 256); thr = 0
/// is not a threshold, so 1 is the first point).
pub const THR_POINTS: [u32; 14] = [1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 255];

/// The default percentile: TOS 5.2's choice on the Optane (the P3700's was
/// the 99th).
pub const PERCENTILE: f64 = 90.0;

/// The percentiles of the completion gaps whose deltas are candidates,
/// beside the configured percentile: TOS 5.2's own two (p90 on the Optane,
/// p99 on the P3700) and one either side (the median, p99.9), so the
/// candidates span short deltas that end bursts early and long ones that
/// let thr fill. A grid for the front, not a claim: `--delta-percentiles`
/// replaces it.
pub const DELTA_PERCENTILES: [f64; 4] = [50.0, 90.0, 99.0, 99.9];

/// The default plateau tolerance, 2%. TOS 5.2 does not quantify "plateau"
/// (its Fig 19 reads one "between 16 and 32"). Below the knee each step of
/// the sweep gains several percent; past it the simulated Optane still
/// creeps up 1.6% from thr 32 to 192, as each interrupt saved returns its
/// cost to a saturated core, and the emulator's runs differ by 2-3% from
/// one to the next. A plateau rule finer than that noise would pick noise,
/// so 2%; with 1% the simulated Optane gives 48 instead of 32.
pub const TOLERANCE: f64 = 0.02;

/// Where the workload runs. Built once per tuning run, so the host
/// profile's size (grown by the idle-state keys, issue 37) costs nothing
/// worth a box.
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Target {
    /// The simulator, with these profiles and seed.
    Sim {
        device: DeviceProfile,
        host: HostProfile,
        seed: u64,
    },
    /// The emulator: this configuration, whose policy and runtime each run
    /// replaces.
    Emu(EmuConfig),
}

impl Target {
    pub fn mode(&self) -> &'static str {
        match self {
            Target::Sim { .. } => "sim",
            Target::Emu(_) => "emu",
        }
    }

    /// A run of the tuning as a point of the one runner (`point`): this
    /// target under `policy`, every job `runtime` long (`None`: the job
    /// file's, or the emulator configuration's).
    pub fn point(&self, policy: PolicySpec, runtime: Option<Nanos>) -> point::Point {
        let (front, seed) = match self {
            Target::Sim { device, host, seed } => (
                point::Front::Sim {
                    device: device.clone(),
                    host: host.clone(),
                },
                *seed,
            ),
            Target::Emu(base) => (
                point::Front::Emu {
                    device: None,
                    base: base.clone(),
                },
                base.seed,
            ),
        };
        point::Point {
            front,
            settings: point::Settings::policy(policy),
            seed,
            runtime,
        }
    }
}

/// What to tune and how.
#[derive(Clone, Debug)]
pub struct TuneConfig {
    pub target: Target,
    /// Every run's length (the jobs become time-based); `None`: the job
    /// file's own.
    pub runtime: Option<Nanos>,
    /// The percentile of the gaps delta is read at, in (0, 100].
    pub percentile: f64,
    /// How far below the best later point a thr may be and still be the
    /// plateau, as a fraction in [0, 1).
    pub tolerance: f64,
    /// The thr values swept, each at least 1; sorted and deduplicated
    /// before use.
    pub thr_points: Vec<u32>,
    /// The percentiles, each in (0, 100], whose gaps give the candidate
    /// deltas beside `percentile`'s.
    pub delta_percentiles: Vec<f64>,
    /// What the recommendation minimises, and the bounds it must meet.
    pub objective: Objective,
    pub budget: Budget,
}

impl TuneConfig {
    /// The defaults: p90, 2%, [`THR_POINTS`], [`DELTA_PERCENTILES`],
    /// `balanced` without budgets, the job file's runtime.
    pub fn new(target: Target) -> TuneConfig {
        TuneConfig {
            target,
            runtime: None,
            percentile: PERCENTILE,
            tolerance: TOLERANCE,
            thr_points: THR_POINTS.to_vec(),
            delta_percentiles: DELTA_PERCENTILES.to_vec(),
            objective: recommend::DEFAULT_OBJECTIVE,
            budget: Budget::default(),
        }
    }
}

/// One run's outcome, as the sweep table shows it (and as a store keeps
/// it: [`kept`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// The delta and thr of a candidate; `None` for the run under
    /// `default`.
    pub delta: Option<Nanos>,
    pub thr: Option<u32>,
    /// All jobs' reads and writes per second.
    #[serde(deserialize_with = "report::readback::nan_if_null")]
    pub iops: f64,
    #[serde(deserialize_with = "report::readback::nan_if_null")]
    pub irq_per_sec: f64,
    #[serde(deserialize_with = "report::readback::nan_if_null")]
    pub completions_per_irq: f64,
    /// Mean completion latency over all the jobs' I/Os, ns.
    #[serde(deserialize_with = "report::readback::nan_if_null")]
    pub mean_clat_ns: f64,
    /// The worst job's p99 completion latency, ns, and the workload cores'
    /// mean busy share: the front's axes, as a sweep measures them
    /// (`sweep::store::Results`).
    pub p99_ns: u64,
    #[serde(deserialize_with = "report::readback::nan_if_null")]
    pub cpu: f64,
}

impl Point {
    fn of(delta: Option<Nanos>, thr: Option<u32>, r: &RunReport) -> Point {
        let dirs = r.jobs.iter().flat_map(|j| [&j.read, &j.write]);
        let (n, sum) = dirs.fold((0u64, 0.0), |(n, sum), d| {
            (
                n + d.clat.samples,
                sum + d.clat.mean * d.clat.samples as f64,
            )
        });
        // The front's axes exactly as a sweep's point keeps them, so tune's
        // front and `sweep merge`'s agree on the same runs.
        let kept = sweep::store::Results::of(r);
        Point {
            delta,
            thr,
            iops: r.total_iops(),
            irq_per_sec: r.interrupts_per_sec(),
            completions_per_irq: r.completions_per_interrupt(),
            mean_clat_ns: if n > 0 { sum / n as f64 } else { 0.0 },
            p99_ns: kept.p99_ns,
            cpu: kept.cpu,
        }
    }
}

/// TOS 5.2's pick, the recommendation from the front, and everything they
/// were read from.
#[derive(Clone, Debug)]
pub struct Tuning {
    /// The completion gaps under `default`.
    pub gaps: Gaps,
    pub percentile: f64,
    /// The gap at `percentile`, ns, before rounding.
    pub gap_at_percentile: Nanos,
    /// The recommended delta: the next whole microsecond above that gap.
    pub delta: Nanos,
    /// The run under `default` the gaps came from.
    pub baseline: Point,
    /// `adaptive` at `delta`, one point per thr, in increasing thr.
    pub sweep: Vec<Point>,
    pub tolerance: f64,
    /// TOS 5.2's thr.
    pub thr: u32,
    /// Every candidate (adaptive at each candidate delta and thr, the
    /// sweep's among them), by increasing delta, then thr.
    pub candidates: Vec<Point>,
    /// The candidates' fronts (`sweep::front`).
    pub front: Front,
    pub objective: Objective,
    pub budget: Budget,
    /// The setting the objective prefers on its front within the budget;
    /// `None` when no setting on it meets the budget.
    pub recommended: Option<Setting>,
}

/// Why tuning could not finish. One line each.
#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    #[error("{0}")]
    Sim(#[from] SimError),
    #[error("{0}")]
    Emu(#[from] EmuError),
    #[error("no completion gaps in the measured window (fewer than two completions on any queue): nothing to read delta from")]
    NoGaps,
    #[error("{0}")]
    Config(String),
    #[error("{0}")]
    Store(#[from] store::StoreError),
}

/// Tunes delta and thr for `jobs` (TOS 5.2) and recommends a setting from
/// the candidates' front. `progress` hears a line per run started (the
/// candidates on the simulator run in parallel, so their lines come
/// together).
pub fn tune(
    jobs: &[Job],
    cfg: &TuneConfig,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Tuning, TuneError> {
    check(cfg)?;

    // TOS 5.2: the CDF is measured without coalescing, so the gaps are the
    // workload's on this device, not an artefact of a policy holding
    // completions back.
    progress(BASELINE_STEP);
    let base = run_one(jobs, cfg, PolicySpec::named("default"))?;
    let gaps = base.completion_gaps.clone().ok_or(TuneError::NoGaps)?;
    let all = candidates(cfg, &gaps);
    let reports: Vec<RunReport> = match &cfg.target {
        // Simulations are independent and deterministic: run them at once.
        Target::Sim { .. } => {
            progress(&sweep_step(&all, all.len()));
            all.par_iter()
                .map(|c| run_one(jobs, cfg, adaptive_at(c.delta, c.thr)))
                .collect::<Result<_, _>>()?
        }
        // One emulation at a time: each spins a device thread on a CPU.
        Target::Emu(_) => all
            .iter()
            .enumerate()
            .map(|(i, c)| {
                progress(&format!(
                    "adaptive delta={} thr={} ({}/{})",
                    policy::format_nanos(c.delta),
                    c.thr,
                    i + 1,
                    all.len()
                ));
                run_one(jobs, cfg, adaptive_at(c.delta, c.thr))
            })
            .collect::<Result<_, _>>()?,
    };
    let points: Vec<Point> = all
        .iter()
        .zip(&reports)
        .map(|(c, r)| Point::of(Some(c.delta), Some(c.thr), r))
        .collect();
    Ok(assemble(cfg, gaps, Point::of(None, None, &base), points))
}

/// The progress line of the baseline run.
const BASELINE_STEP: &str = "default (no coalescing): measuring completion gaps";

/// One candidate setting: adaptive at this delta and thr.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Candidate {
    delta: Nanos,
    thr: u32,
}

/// The candidates: every candidate delta (the gap at `percentile` and at
/// each of `delta_percentiles`, rounded as [`pick::delta`] rounds, each
/// once) with every thr, by increasing delta, then thr.
fn candidates(cfg: &TuneConfig, gaps: &Gaps) -> Vec<Candidate> {
    let mut deltas: Vec<Nanos> = std::iter::once(cfg.percentile)
        .chain(cfg.delta_percentiles.iter().copied())
        .map(|p| pick::delta(gaps, p))
        .collect();
    deltas.sort_unstable();
    deltas.dedup();
    let thrs = thr_list(cfg);
    deltas
        .iter()
        .flat_map(|&delta| thrs.iter().map(move |&thr| Candidate { delta, thr }))
        .collect()
}

/// The progress line of the candidates' runs: `run` of them here.
fn sweep_step(all: &[Candidate], run: usize) -> String {
    let mut deltas: Vec<String> = all.iter().map(|c| policy::format_nanos(c.delta)).collect();
    deltas.dedup();
    let of = if run == all.len() {
        String::new()
    } else {
        format!(" ({run} of them here)")
    };
    format!(
        "adaptive at delta {} x {} thr points: {} candidates{of}",
        deltas.join(", "),
        all.len() / deltas.len().max(1),
        all.len()
    )
}

/// The thr values swept: the configured ones, sorted, each once.
fn thr_list(cfg: &TuneConfig) -> Vec<u32> {
    let mut thrs = cfg.thr_points.clone();
    thrs.sort_unstable();
    thrs.dedup();
    thrs
}

/// A candidate's strategy. TOS 5.2 sweeps thr "with delta fixed" under its
/// adaptive strategy, not cint: Urgent and Barrier would hide thr's effect.
fn adaptive_at(delta: Nanos, thr: u32) -> PolicySpec {
    PolicySpec {
        delta: Some(delta),
        thr: Some(thr),
        ..PolicySpec::named("adaptive")
    }
}

/// The tuning read from the baseline's gaps and figures and the
/// candidates' points (by increasing delta, then thr), wherever they were
/// measured: in this process or, kept, in a store.
fn assemble(cfg: &TuneConfig, gaps: Gaps, baseline: Point, candidates: Vec<Point>) -> Tuning {
    let gap_at_percentile = gaps.value_at(cfg.percentile / 100.0);
    // TOS 5.2 does not say how its 6 us and 15 us were rounded: the next
    // whole microsecond above the gap (see pick::delta for why above).
    let delta = pick::delta(&gaps, cfg.percentile);
    let sweep: Vec<Point> = candidates
        .iter()
        .filter(|p| p.delta == Some(delta))
        .cloned()
        .collect();
    // TOS 5.2: "the lowest thr after which throughput plateaus", judged on
    // total IOPS alone (not the interrupt rate), with the plateau defined
    // by the tolerance (see pick::plateau).
    let iops: Vec<f64> = sweep.iter().map(|p| p.iops).collect();
    let chosen = pick::plateau(&iops, cfg.tolerance).expect("at least one thr point");
    let front = recommend::front(&candidates).expect("at least one candidate");
    let recommended = recommend::recommend(&front, cfg.objective, cfg.budget);
    Tuning {
        gaps,
        percentile: cfg.percentile,
        gap_at_percentile,
        delta,
        baseline,
        thr: sweep[chosen].thr.expect("a sweep point has a thr"),
        sweep,
        tolerance: cfg.tolerance,
        candidates,
        front,
        objective: cfg.objective,
        budget: cfg.budget,
        recommended,
    }
}

/// A run's failure as the front end said it, so that the caller can name
/// the job file's line (a job's error) as `sim` and `run` do.
impl From<point::PointError> for TuneError {
    fn from(e: point::PointError) -> TuneError {
        match e {
            point::PointError::Sim(e) => TuneError::Sim(e),
            point::PointError::Emu(e) => TuneError::Emu(e),
            other => TuneError::Config(other.to_string()),
        }
    }
}

fn check(cfg: &TuneConfig) -> Result<(), TuneError> {
    if !(cfg.percentile > 0.0 && cfg.percentile <= 100.0) {
        return Err(TuneError::Config(format!(
            "percentile {} is not in (0, 100]",
            cfg.percentile
        )));
    }
    if let Some(p) = cfg
        .delta_percentiles
        .iter()
        .find(|p| !(**p > 0.0 && **p <= 100.0))
    {
        return Err(TuneError::Config(format!(
            "delta percentile {p} is not in (0, 100]"
        )));
    }
    if !(0.0..1.0).contains(&cfg.tolerance) {
        return Err(TuneError::Config(format!(
            "tolerance {} is not a fraction in [0, 1)",
            cfg.tolerance
        )));
    }
    if cfg.thr_points.is_empty() || cfg.thr_points.contains(&0) {
        return Err(TuneError::Config(
            "thr points must be at least 1, and there must be some".into(),
        ));
    }
    if cfg
        .budget
        .interrupts_per_sec
        .is_some_and(|b| b.is_nan() || b < 0.0)
    {
        return Err(TuneError::Config(
            "the interrupt budget must be a number of interrupts/s, at least 0".into(),
        ));
    }
    Ok(())
}

fn run_one(jobs: &[Job], cfg: &TuneConfig, policy: PolicySpec) -> Result<RunReport, TuneError> {
    Ok(cfg
        .target
        .point(policy, cfg.runtime)
        .run(point::Workload::Jobs(jobs))?)
}

impl Tuning {
    /// TOS 5.2's pick as the front's setting.
    pub fn tos_pick(&self) -> &Setting {
        let policy = recommend::policy_of(
            self.sweep
                .iter()
                .find(|p| p.thr == Some(self.thr))
                .expect("the pick is a sweep point"),
        );
        self.front
            .all
            .iter()
            .find(|s| s.policy == policy)
            .expect("every candidate is a setting of the front's group")
    }

    /// Where TOS 5.2's pick stands against the front of `axes`.
    pub fn tos_standing(&self, axes: recommend::Axes) -> recommend::Standing {
        recommend::standing(self.tos_pick(), &self.front, axes)
    }

    /// Why nothing was recommended (when nothing was), one line.
    pub fn none_meets(&self) -> Option<String> {
        self.recommended
            .is_none()
            .then(|| recommend::none_meets(&self.front, self.objective, self.budget))
    }

    /// Every number as JSON: the choice, the CDF, the baseline and the
    /// sweep. Times in ns, as in the run reports.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        let point = |p: &Point| {
            let mut v = serde_json::Map::new();
            if let Some(delta) = p.delta {
                v.insert("delta_ns".into(), json!(delta));
            }
            if let Some(thr) = p.thr {
                v.insert("thr".into(), json!(thr));
            }
            v.insert("iops".into(), json!(finite(p.iops)));
            v.insert("interrupts_per_sec".into(), json!(finite(p.irq_per_sec)));
            v.insert(
                "completions_per_interrupt".into(),
                json!(finite(p.completions_per_irq)),
            );
            v.insert("mean_clat_ns".into(), json!(finite(p.mean_clat_ns)));
            v.insert("p99_ns".into(), json!(p.p99_ns));
            v.insert("cpu".into(), json!(finite(p.cpu)));
            serde_json::Value::Object(v)
        };
        let setting = |s: &Setting| {
            json!({
                "policy": s.policy,
                "interrupts_per_sec": finite(s.interrupts_per_sec),
                "p99_ns": finite(s.p99_ns),
                "iops": finite(s.iops),
                "cpu": finite(s.cpu),
                "cpu_per_io_ns": finite(s.cpu_per_io_ns()),
            })
        };
        let standing = |axes: recommend::Axes| match self.tos_standing(axes) {
            recommend::Standing::OnFront => json!({ "on_front": true }),
            recommend::Standing::Dominated { by, of, less } => json!({
                "on_front": false,
                "dominated_by": setting(&by),
                "front_settings_dominating": of,
                "fewer_x_fraction": finite(less.0),
                "lower_p99_fraction": finite(less.1),
            }),
        };
        let recommended = match &self.recommended {
            Some(s) => {
                let mut v = setting(s);
                let c = self
                    .candidates
                    .iter()
                    .find(|p| recommend::policy_of(p) == s.policy)
                    .expect("a recommendation is a candidate");
                v["delta_ns"] = json!(c.delta);
                v["delta"] = json!(c.delta.map(policy::format_nanos));
                v["thr"] = json!(c.thr);
                v
            }
            None => serde_json::Value::Null,
        };
        json!({
            "delta_ns": self.delta,
            "delta": policy::format_nanos(self.delta),
            "percentile": self.percentile,
            "gap_at_percentile_ns": self.gap_at_percentile,
            "thr": self.thr,
            "tolerance": self.tolerance,
            "baseline": point(&self.baseline),
            "sweep": self.sweep.iter().map(point).collect::<Vec<_>>(),
            "completion_gaps": {
                "N": self.gaps.count,
                "min": self.gaps.min(),
                "max": self.gaps.max(),
                "cdf": self.gaps.cdf().iter().map(|&(ns, f)| json!([ns, f])).collect::<Vec<_>>(),
            },
            "objective": self.objective.name(),
            "budget": {
                "p99_ns": self.budget.p99_ns,
                "interrupts_per_sec": self.budget.interrupts_per_sec,
            },
            "recommended": recommended,
            "no_setting_meets_budget": self.none_meets(),
            "tos_pick": {
                "policy": self.tos_pick().policy,
                "interrupts_front": standing(recommend::Axes::Interrupts),
                "cpu_front": standing(recommend::Axes::Cpu),
            },
            "candidates": self.candidates.iter().map(point).collect::<Vec<_>>(),
            "front": self.front.front.iter().map(setting).collect::<Vec<_>>(),
            "cpu_front": self.front.cpu_front.iter().map(setting).collect::<Vec<_>>(),
        })
    }
}

/// `x`, or 0 where it is NaN or infinite, so the JSON never has `null`.
fn finite(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}
