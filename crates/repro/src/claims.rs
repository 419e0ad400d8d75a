//! The papers' claims as data (`claims.toml`, `app-claims.toml`), each
//! checked against our runs: a verdict per claim, with its band from the
//! one rule ([`crate::rule`]) and its basis (independent, fitted, or by
//! construction).
//!
//! The same code reads and checks the simulator's claims and the
//! application mode's (real programs under `exec`): what differs is where
//! the figures come from ([`Source`]) and what names a run ([`Catalogue`]).

use std::fmt;

use report::Mode;
use serde::Deserialize;

use crate::experiment::Experiment;
use crate::metric::Metric;
use crate::rule::{self};
pub use crate::rule::{Band, Compare, Kind};
use crate::run::Results;

/// The claims shipped with the workbench.
pub const SHIPPED: &str = include_str!("../claims.toml");

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    claim: Vec<Raw>,
}

/// A number as TOML writes it: `2`, `2.74`, or `[12, 15]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
enum Num {
    Float(f64),
    Int(i64),
}

impl Num {
    fn get(&self) -> f64 {
        match *self {
            Num::Float(x) => x,
            Num::Int(i) => i as f64,
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
enum Number {
    One(Num),
    Many(Vec<Num>),
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    experiment: String,
    claim: String,
    source: String,
    metric: String,
    run: String,
    baseline: Option<String>,
    compare: String,
    paper: String,
    kind: String,
    number: Option<Number>,
    basis: String,
    fit: Option<String>,
    basis_reason: Option<String>,
    tolerance_reason: Option<String>,
    holds_if: Option<String>,
    over: Option<String>,
    groups: Option<Vec<String>>,
}

/// How a `*` run's groups combine into one figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Over {
    /// The mean of the groups' figures (FR's "on average").
    #[default]
    Mean,
    /// The least (FR's "reduces ... by up to": the largest cut).
    Min,
    /// The greatest.
    Max,
    /// The last group's figure over the first's, in the claim's `groups`
    /// order (TOS 5.4.1's "the penalty shrinks at 8 threads": the 8-thread
    /// ratio over the 4-thread one).
    Trend,
}

impl Over {
    fn combine(self, v: &[f64]) -> f64 {
        match self {
            Over::Mean => v.iter().sum::<f64>() / v.len() as f64,
            Over::Min => v.iter().copied().fold(f64::INFINITY, f64::min),
            Over::Max => v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            Over::Trend => v[v.len() - 1] / v[0],
        }
    }
}

/// What a claim's verdict rests on (issue 23 item 3), declared in the
/// claims file from the claim's inputs before any run (issue 36 item 1):
/// the check never changes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Basis {
    /// Our model's output, not an input to it nor a target it was fitted
    /// to.
    Independent,
    /// A target of a calibration: `fit` names it and its command.
    Fitted { fit: String },
    /// A model input, or a figure of runs that cannot differ: `reason`.
    Construction { reason: String },
}

impl Basis {
    pub fn as_str(&self) -> &'static str {
        match self {
            Basis::Independent => "independent",
            Basis::Fitted { .. } => "fitted",
            Basis::Construction { .. } => "by construction",
        }
    }

    /// The fit or the reason, for the report.
    pub fn detail(&self) -> &str {
        match self {
            Basis::Independent => "",
            Basis::Fitted { fit } => fit,
            Basis::Construction { reason } => reason,
        }
    }

    pub const ALL: [&'static str; 3] = ["independent", "fitted", "by construction"];
}

#[derive(Clone, Debug)]
pub struct Claim {
    pub experiment: String,
    /// The claim as the paper makes it.
    pub claim: String,
    pub source: String,
    pub metric: String,
    pub run: String,
    pub baseline: Option<String>,
    pub compare: Compare,
    /// The paper's figure, as text (`2.74x`, `29 us vs 22 us`).
    pub paper: String,
    /// The paper's number and what it says of it.
    pub kind: Kind,
    pub basis: Basis,
    /// A band other than the rule's, and why (the report lists these).
    pub exception: Option<(Band, String)>,
    /// How a `*` run's groups combine (`over = "min"` in the file).
    pub over: Over,
    /// The groups a `*` run stands for, in this order (`groups = [...]` in
    /// the file); all of the experiment's when absent.
    pub groups: Option<Vec<String>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Holds,
    /// Outside the band, in the paper's direction and within 3x of its
    /// number.
    Qualitatively,
    /// In the paper's direction, beyond 3x of its number: a miss.
    FarOff,
    DoesNotHold,
    /// The experiment was not run in this mode (`--only`, `--mode`), or a
    /// run lacked the metric.
    NotRun,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::Qualitatively => "holds qualitatively",
            Verdict::FarOff => "right direction, far off",
            Verdict::DoesNotHold => "does not hold",
            Verdict::NotRun => "not run",
        }
    }

    pub const ALL: [Verdict; 5] = [
        Verdict::Holds,
        Verdict::Qualitatively,
        Verdict::FarOff,
        Verdict::DoesNotHold,
        Verdict::NotRun,
    ];
}

/// A claim checked against one set of runs.
#[derive(Clone, Debug)]
pub struct Checked {
    /// Our figure, formed as the claim says; infinite (growth from 0) or
    /// NaN (0 / 0) figures never hold.
    pub ours: Option<f64>,
    /// The standard deviation of the figure across seeds (0 with one).
    pub spread: f64,
    pub band: Band,
    pub qualitative: Option<Band>,
    pub verdict: Verdict,
    /// The declared basis: fixed before the run, from the claim's inputs,
    /// never from its outcome (issue 36 item 1).
    pub basis: Basis,
    /// The run and its baseline came out identical in every seed. Not a
    /// basis: an independent effect claim with identical runs is a miss
    /// like any other, and the report says the model lacks the mechanism.
    pub identical: bool,
}

impl Checked {
    /// Our figure for the report and `summary.json`: a number, or a word
    /// for an infinite or undefined one (never JSON's `null`).
    pub fn ours_json(&self) -> serde_json::Value {
        match self.ours {
            Some(v) if v.is_finite() => serde_json::json!(v),
            Some(v) if v.is_nan() => "undefined (0 / 0)".into(),
            Some(v) if v > 0.0 => "infinite (from 0)".into(),
            Some(_) => "-infinite".into(),
            None => "not run".into(),
        }
    }
}

/// What names the runs claims may refer to: the simulator's experiments,
/// or the application mode's.
pub trait Catalogue {
    /// `Err` naming the problem, if `experiment` is unknown.
    fn experiment(&self, experiment: &str) -> Result<(), String>;
    fn has_run(&self, experiment: &str, key: &str) -> bool;
    /// The groups a `*` in a run key stands for, in order.
    fn groups(&self, experiment: &str) -> Vec<String>;
    /// `Err` naming the problem, if `metric` is unknown.
    fn metric(&self, metric: &str) -> Result<(), String>;
}

/// Where the figures come from.
pub trait Source {
    /// `metric` in each seed (or repetition) of a run; `None` if the run
    /// did not happen or lacks the metric.
    fn per_seed(&self, experiment: &str, key: &str, metric: &str) -> Option<Vec<f64>>;
    /// The groups a `*` in a run key stands for, in order.
    fn groups(&self, experiment: &str) -> Vec<String>;
    /// Whether the experiment defines the run (ran or not).
    fn defines(&self, experiment: &str, key: &str) -> bool;
}

impl Catalogue for [Experiment] {
    fn experiment(&self, id: &str) -> Result<(), String> {
        match self.iter().any(|e| e.id == id) {
            true => Ok(()),
            false => Err(format!("no experiment '{id}'")),
        }
    }

    fn has_run(&self, id: &str, key: &str) -> bool {
        self.iter()
            .find(|e| e.id == id)
            .is_some_and(|e| e.run(key).is_some())
    }

    fn groups(&self, id: &str) -> Vec<String> {
        self.iter()
            .find(|e| e.id == id)
            .map(Experiment::groups)
            .unwrap_or_default()
    }

    fn metric(&self, metric: &str) -> Result<(), String> {
        Metric::parse(metric).map(|_| ())
    }
}

/// The simulator's (or emulator's) runs in one mode, as a [`Source`],
/// with the experiments that name them (built once, not per look-up).
pub struct ModeResults<'a> {
    pub results: &'a Results,
    pub mode: Mode,
    experiments: Vec<Experiment>,
}

impl<'a> ModeResults<'a> {
    pub fn new(results: &'a Results, mode: Mode) -> ModeResults<'a> {
        ModeResults {
            results,
            mode,
            experiments: crate::figures::all(),
        }
    }
}

impl Source for ModeResults<'_> {
    fn per_seed(&self, experiment: &str, key: &str, metric: &str) -> Option<Vec<f64>> {
        let m = Metric::parse(metric).ok()?;
        let v: Vec<f64> = self
            .results
            .reports(experiment, key, self.mode)
            .iter()
            .filter_map(|r| m.of(r))
            .collect();
        (!v.is_empty()).then_some(v)
    }

    fn groups(&self, experiment: &str) -> Vec<String> {
        self.experiments.as_slice().groups(experiment)
    }

    fn defines(&self, experiment: &str, key: &str) -> bool {
        self.experiments.as_slice().has_run(experiment, key)
    }
}

/// Parses a claims file and checks every claim against the experiments it
/// names: the experiment, the runs and the metric must exist, and its kind,
/// number and basis fit the rule. Errors name the claim by its position
/// and text.
pub fn load(text: &str, origin: &str, experiments: &[Experiment]) -> Result<Vec<Claim>, String> {
    load_in(text, origin, experiments)
}

/// [`load`] against any [`Catalogue`].
pub fn load_in<C: Catalogue + ?Sized>(
    text: &str,
    origin: &str,
    catalogue: &C,
) -> Result<Vec<Claim>, String> {
    let file: File = parse_toml(text, origin)?;
    file.claim
        .into_iter()
        .enumerate()
        .map(|(i, raw)| {
            let at = |m: String| format!("{origin}: claim {} ('{}'): {m}", i + 1, raw.claim);
            one(raw.clone(), catalogue).map_err(at)
        })
        .collect()
}

/// A claim waiting for a run this build lacks: its text, and why.
pub type Pending = (String, String);

/// [`load_in`] for claims on runs only some builds define (the completion
/// field's modes, added by other branches: `figures::field`): the claims
/// whose runs this build has, and the rest as (claim, why) pending. Any
/// other problem is an error, as in [`load_in`].
pub fn load_available<C: Catalogue + ?Sized>(
    text: &str,
    origin: &str,
    catalogue: &C,
) -> Result<(Vec<Claim>, Vec<Pending>), String> {
    let file: File = parse_toml(text, origin)?;
    let (mut have, mut pending) = (Vec::new(), Vec::new());
    for (i, raw) in file.claim.into_iter().enumerate() {
        match one(raw.clone(), catalogue) {
            Ok(c) => have.push(c),
            Err(e) if e.contains("has no run") || e.contains("has no group") => {
                pending.push((raw.claim, e))
            }
            Err(e) => return Err(format!("{origin}: claim {} ('{}'): {e}", i + 1, raw.claim)),
        }
    }
    Ok((have, pending))
}

fn one<C: Catalogue + ?Sized>(raw: Raw, catalogue: &C) -> Result<Claim, String> {
    catalogue.metric(&raw.metric)?;
    let compare = match raw.compare.as_str() {
        "ratio" => Compare::Ratio,
        "diff" => Compare::Diff,
        "value" => Compare::Value,
        other => return Err(format!("compare '{other}': ratio, diff or value")),
    };
    if (compare == Compare::Value) != raw.baseline.is_none() {
        return Err("a ratio or a diff needs a baseline run, a value none".into());
    }
    let number: Option<Vec<f64>> = raw.number.as_ref().map(|n| match n {
        Number::One(x) => vec![x.get()],
        Number::Many(v) => v.iter().map(Num::get).collect(),
    });
    let kind = Kind::parse(&raw.kind, number.as_deref())?;
    kind.check(compare)?;
    let basis = match (raw.basis.as_str(), raw.fit, raw.basis_reason) {
        ("independent", None, None) => Basis::Independent,
        ("fitted", Some(fit), None) => Basis::Fitted { fit },
        ("construction", None, Some(reason)) => Basis::Construction { reason },
        ("independent" | "fitted" | "construction", ..) => {
            return Err(
                "basis: 'independent' alone, 'fitted' with fit = \"the fit and its command\", \
                 'construction' with basis_reason = \"why\""
                    .into(),
            )
        }
        (other, ..) => {
            return Err(format!(
                "basis '{other}': independent, fitted or construction"
            ))
        }
    };
    let exception = match (raw.holds_if, raw.tolerance_reason) {
        (None, None) => None,
        (Some(h), Some(why)) => Some((Band::parse(&h)?, why)),
        (Some(_), None) => {
            return Err(
                "holds_if replaces the rule's band: give tolerance_reason, citing the paper".into(),
            )
        }
        (None, Some(_)) => return Err("tolerance_reason without holds_if".into()),
    };
    catalogue.experiment(&raw.experiment)?;
    let all = catalogue.groups(&raw.experiment);
    if let Some(gs) = &raw.groups {
        if !raw.run.contains('*') {
            return Err("groups needs a run with '*'".into());
        }
        if let Some(g) = gs.iter().find(|g| !all.contains(g)) {
            return Err(format!(
                "experiment '{}' has no group '{g}'",
                raw.experiment
            ));
        }
    }
    let pairs = |groups: &[String]| -> Vec<(String, Option<String>)> {
        expand(&raw.run, raw.baseline.as_deref(), groups)
            .into_iter()
            .filter(|(r, b)| {
                catalogue.has_run(&raw.experiment, r)
                    && b.as_deref()
                        .map_or(true, |b| catalogue.has_run(&raw.experiment, b))
            })
            .collect()
    };
    let groups = raw.groups.clone().unwrap_or_else(|| all.clone());
    if raw.run.contains('*') {
        if pairs(&groups).is_empty() {
            return Err(format!(
                "experiment '{}' has no group where '{}' names a run",
                raw.experiment, raw.run
            ));
        }
    } else {
        for key in std::iter::once(&raw.run).chain(raw.baseline.as_ref()) {
            if !catalogue.has_run(&raw.experiment, key) {
                return Err(format!(
                    "experiment '{}' has no run '{key}'",
                    raw.experiment
                ));
            }
        }
    }
    let over = match raw.over.as_deref() {
        None | Some("mean") => Over::Mean,
        Some("min") => Over::Min,
        Some("max") => Over::Max,
        Some("trend") => Over::Trend,
        Some(other) => return Err(format!("over '{other}': mean, min, max or trend")),
    };
    if over == Over::Trend {
        let named = raw.groups.as_ref().map_or(0, Vec::len);
        if named < 2 || pairs(&groups).len() != named {
            return Err(
                "over 'trend' needs groups = [FIRST, ..., LAST], two at least, each \
                        naming the run and its baseline"
                    .into(),
            );
        }
    }
    if raw.over.is_some() && !raw.run.contains('*') {
        return Err("over needs a run with '*' (its groups)".into());
    }
    Ok(Claim {
        over,
        groups: raw.groups,
        kind,
        basis,
        exception,
        experiment: raw.experiment,
        claim: raw.claim,
        source: raw.source,
        metric: raw.metric,
        run: raw.run,
        baseline: raw.baseline,
        compare,
        paper: raw.paper,
    })
}

/// A data file of ours (`claims.toml`, `conclusions.toml`) parsed, a
/// syntax error named by the file and line.
pub(crate) fn parse_toml<T: serde::de::DeserializeOwned>(
    text: &str,
    origin: &str,
) -> Result<T, String> {
    toml::from_str(text).map_err(|e| {
        let line = e
            .span()
            .map(|s| text[..s.start].lines().count().max(1))
            .unwrap_or(0);
        format!("{origin}:{line}: {}", e.message())
    })
}

/// A run key with `*` (`bs-opt/*`) for each of `groups`: the (run,
/// baseline) pairs.
fn expand(run: &str, baseline: Option<&str>, groups: &[String]) -> Vec<(String, Option<String>)> {
    groups
        .iter()
        .map(|g| (run.replace('*', g), baseline.map(|b| b.replace('*', g))))
        .collect()
}

/// Population standard deviation (as [`crate::run::Stat`]'s).
fn sd(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt()
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// One (run, baseline) pair's figure from the two means, and per seed.
struct Pair {
    figure: f64,
    per_seed: Vec<f64>,
    /// The run and the baseline gave the same value in every seed.
    identical: bool,
}

impl Claim {
    /// The simulator's (or emulator's) check in `mode` (for many claims,
    /// build one [`ModeResults`] and call [`Claim::check_in`]).
    pub fn check(&self, results: &Results, mode: Mode) -> Checked {
        self.check_in(&ModeResults::new(results, mode))
    }

    /// Our figure, its spread across seeds, the bands the rule gives, and
    /// the verdict. A run key with `*` stands for its groups, combined as
    /// `over` says.
    pub fn check_in(&self, source: &dyn Source) -> Checked {
        let pairs: Option<Vec<Pair>> = if self.run.contains('*') {
            let groups = self
                .groups
                .clone()
                .unwrap_or_else(|| source.groups(&self.experiment));
            let defined: Vec<(String, Option<String>)> =
                expand(&self.run, self.baseline.as_deref(), &groups)
                    .into_iter()
                    .filter(|(r, b)| {
                        source.defines(&self.experiment, r)
                            && b.as_deref()
                                .map_or(true, |b| source.defines(&self.experiment, b))
                    })
                    .collect();
            // Every group's figure, or none: a mean over some is not the
            // claim's.
            defined
                .iter()
                .map(|(r, b)| self.pair(source, r, b.as_deref()))
                .collect::<Option<Vec<Pair>>>()
                .filter(|ps| !ps.is_empty())
        } else {
            self.pair(source, &self.run, self.baseline.as_deref())
                .map(|p| vec![p])
        };
        let (ours, spread, identical) = match &pairs {
            None => (None, 0.0, false),
            Some(ps) => {
                let figs: Vec<f64> = ps.iter().map(|p| p.figure).collect();
                let ours = if ps.len() == 1 && !self.run.contains('*') {
                    figs[0]
                } else {
                    self.over.combine(&figs)
                };
                // Per seed, the groups combined the same way.
                let seeds = ps.iter().map(|p| p.per_seed.len()).min().unwrap_or(0);
                let per_seed: Vec<f64> = (0..seeds)
                    .map(|i| {
                        let v: Vec<f64> = ps.iter().map(|p| p.per_seed[i]).collect();
                        if self.run.contains('*') {
                            self.over.combine(&v)
                        } else {
                            v[0]
                        }
                    })
                    .filter(|v| v.is_finite())
                    .collect();
                (Some(ours), sd(&per_seed), ps.iter().all(|p| p.identical))
            }
        };
        let stated = self.exception.as_ref().map(|(b, _)| *b);
        let (band, qualitative) = rule::bands(self.kind, self.compare, stated, spread);
        let verdict = match ours {
            None => Verdict::NotRun,
            Some(v) if band.admits(v) => Verdict::Holds,
            Some(v) if qualitative.is_some_and(|q| q.admits(v)) => Verdict::Qualitatively,
            Some(v) if rule::right_direction(self.kind, self.compare, spread, v) => Verdict::FarOff,
            Some(_) => Verdict::DoesNotHold,
        };
        Checked {
            ours,
            spread,
            band,
            qualitative,
            verdict,
            basis: self.basis.clone(),
            identical: identical && self.baseline.is_some(),
        }
    }

    /// The figure of one run against its baseline.
    fn pair(&self, source: &dyn Source, run: &str, baseline: Option<&str>) -> Option<Pair> {
        let r = source.per_seed(&self.experiment, run, &self.metric)?;
        let form = |v: f64, b: f64| match self.compare {
            Compare::Value => v,
            Compare::Ratio if b != 0.0 => v / b,
            // From nothing to something: infinitely more; 0 / 0 is undefined.
            Compare::Ratio if v > 0.0 => f64::INFINITY,
            Compare::Ratio => f64::NAN,
            Compare::Diff => v - b,
        };
        match (self.compare, baseline) {
            (Compare::Value, _) => Some(Pair {
                figure: mean(&r),
                per_seed: r,
                identical: false,
            }),
            (_, Some(b)) => {
                let b = source.per_seed(&self.experiment, b, &self.metric)?;
                let n = r.len().min(b.len());
                Some(Pair {
                    figure: form(mean(&r), mean(&b)),
                    per_seed: (0..n).map(|i| form(r[i], b[i])).collect(),
                    identical: r.len() == b.len() && r == b,
                })
            }
            _ => None,
        }
    }

    /// The paper the claim is from, for the per-paper counts.
    pub fn paper_name(&self) -> &'static str {
        paper_of(&self.experiment)
    }

    /// How the figure is formed, for the report (`irq_rate default / cint`).
    pub fn formula(&self) -> String {
        let f = match (self.compare, &self.baseline) {
            (Compare::Ratio, Some(b)) => format!("{} {} / {}", self.metric, self.run, b),
            (Compare::Diff, Some(b)) => format!("{} {} - {}", self.metric, self.run, b),
            _ => format!("{} {}", self.metric, self.run),
        };
        if self.run.contains('*') {
            f + match self.over {
                Over::Mean => ", mean over the groups",
                Over::Min => ", least over the groups",
                Over::Max => ", greatest over the groups",
                Over::Trend => ", the last group's over the first's",
            } + &self
                .groups
                .as_ref()
                .map(|g| format!(" ({})", g.join(", ")))
                .unwrap_or_default()
        } else {
            f
        }
    }

    /// What the claim's kind and number say (`ratio 2.74`, `range 12..15`).
    pub fn kind_text(&self) -> String {
        match self.kind.numbers().as_slice() {
            [] => self.kind.name().to_string(),
            [n] => format!("{} {n}", self.kind.name()),
            [a, b, ..] => format!("{} {a}..{b}", self.kind.name()),
        }
    }
}

/// The paper an experiment reproduces: TOS (with the OSDI bar labels),
/// FastResponse, Gyawali and Aryal, Kristo's cover letters, or ours.
pub fn paper_of(experiment: &str) -> &'static str {
    if experiment.starts_with("fr-") {
        "FastResponse (ICS'22)"
    } else if experiment.starts_with("gyawali") {
        "Gyawali and Aryal"
    } else if experiment.starts_with("kristo") {
        "Kristo's blk-mq CPU latency proposal (not merged)"
    } else if experiment.starts_with("ours-") || experiment.starts_with("xval-") {
        "ours (no paper)"
    } else {
        "TOS'22 / OSDI'21"
    }
}

impl fmt::Display for Basis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
