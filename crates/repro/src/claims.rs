//! The paper's claims as data (`claims.toml`), each checked against our
//! runs with a stated tolerance: a verdict per claim, per mode.

use std::fmt;

use report::Mode;
use serde::Deserialize;

use crate::experiment::Experiment;
use crate::metric::Metric;
use crate::run::Results;

/// The claims shipped with the workbench.
pub const SHIPPED: &str = include_str!("../claims.toml");

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    claim: Vec<Raw>,
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
    holds_if: String,
    qualitative: Option<String>,
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

/// How our figure is formed from the runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compare {
    /// run / baseline
    Ratio,
    /// run - baseline, in the metric's unit
    Diff,
    /// the run's own value
    Value,
}

/// The tolerance: what our figure must satisfy for the claim to hold.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bound {
    AtLeast(f64),
    AtMost(f64),
    Within(f64, f64),
}

impl Bound {
    fn parse(s: &str) -> Result<Bound, String> {
        let num = |t: &str| {
            t.trim()
                .parse::<f64>()
                .map_err(|_| format!("holds_if '{s}': '{}' is not a number", t.trim()))
        };
        let s = s.trim();
        if let Some(x) = s.strip_prefix(">=") {
            Ok(Bound::AtLeast(num(x)?))
        } else if let Some(x) = s.strip_prefix("<=") {
            Ok(Bound::AtMost(num(x)?))
        } else if let Some((a, b)) = s.split_once("..") {
            let (a, b) = (num(a)?, num(b)?);
            if a > b {
                return Err(format!("holds_if '{s}': an empty range"));
            }
            Ok(Bound::Within(a, b))
        } else {
            Err(format!("holds_if '{s}': write '>= X', '<= X' or 'A..B'"))
        }
    }

    pub fn admits(&self, v: f64) -> bool {
        match *self {
            Bound::AtLeast(x) => v >= x,
            Bound::AtMost(x) => v <= x,
            Bound::Within(a, b) => (a..=b).contains(&v),
        }
    }
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bound::AtLeast(x) => write!(f, ">= {x}"),
            Bound::AtMost(x) => write!(f, "<= {x}"),
            Bound::Within(a, b) => write!(f, "{a} .. {b}"),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Claim {
    pub experiment: String,
    /// The claim as the paper makes it.
    pub claim: String,
    pub source: String,
    pub metric: Metric,
    pub run: String,
    pub baseline: Option<String>,
    pub compare: Compare,
    /// The paper's figure, as text (`2.74x`, `29 us vs 22 us`).
    pub paper: String,
    pub holds_if: Bound,
    /// The claim's direction alone (`>= 1.0`: more, whatever the factor),
    /// for claims whose number the paper gives: a figure that misses the
    /// number but keeps the direction holds qualitatively.
    pub qualitative: Option<Bound>,
    /// How a `*` run's groups combine (`over = "min"` in the file).
    pub over: Over,
    /// The groups a `*` run stands for, in this order (`groups = [...]` in
    /// the file); all of the experiment's when absent.
    pub groups: Option<Vec<String>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Holds,
    /// Outside the tolerance, but in the paper's direction.
    Qualitatively,
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
            Verdict::DoesNotHold => "does not hold",
            Verdict::NotRun => "not run",
        }
    }
}

/// A claim checked in one mode.
#[derive(Clone, Debug)]
pub struct Checked {
    pub mode: Mode,
    /// Our figure, formed as the claim says.
    pub ours: Option<f64>,
    pub verdict: Verdict,
}

/// Parses a claims file and checks every claim against the experiments it
/// names: the experiment, the runs and the metric must exist. Errors name
/// the claim by its position and text.
pub fn load(text: &str, origin: &str, experiments: &[Experiment]) -> Result<Vec<Claim>, String> {
    let file: File = toml::from_str(text).map_err(|e| {
        let line = e
            .span()
            .map(|s| text[..s.start].lines().count().max(1))
            .unwrap_or(0);
        format!("{origin}:{line}: {}", e.message())
    })?;
    file.claim
        .into_iter()
        .enumerate()
        .map(|(i, raw)| {
            let at = |m: String| format!("{origin}: claim {} ('{}'): {m}", i + 1, raw.claim);
            let metric = Metric::parse(&raw.metric).map_err(at)?;
            let compare = match raw.compare.as_str() {
                "ratio" => Compare::Ratio,
                "diff" => Compare::Diff,
                "value" => Compare::Value,
                other => return Err(at(format!("compare '{other}': ratio, diff or value"))),
            };
            if (compare == Compare::Value) != raw.baseline.is_none() {
                return Err(at(
                    "a ratio or a diff needs a baseline run, a value none".into()
                ));
            }
            let e = experiments
                .iter()
                .find(|e| e.id == raw.experiment)
                .ok_or_else(|| at(format!("no experiment '{}'", raw.experiment)))?;
            if let Some(gs) = &raw.groups {
                if !raw.run.contains('*') {
                    return Err(at("groups needs a run with '*'".into()));
                }
                if let Some(g) = gs.iter().find(|g| !e.groups().contains(g)) {
                    return Err(at(format!("experiment '{}' has no group '{g}'", e.id)));
                }
            }
            if raw.run.contains('*') {
                if expand(e, &raw.run, raw.baseline.as_deref(), raw.groups.as_deref()).is_empty() {
                    return Err(at(format!(
                        "experiment '{}' has no group where '{}' names a run",
                        e.id, raw.run
                    )));
                }
            } else {
                for key in std::iter::once(&raw.run).chain(raw.baseline.as_ref()) {
                    if e.run(key).is_none() {
                        return Err(at(format!("experiment '{}' has no run '{key}'", e.id)));
                    }
                }
            }
            let over = match raw.over.as_deref() {
                None | Some("mean") => Over::Mean,
                Some("min") => Over::Min,
                Some("max") => Over::Max,
                Some("trend") => Over::Trend,
                Some(other) => return Err(at(format!("over '{other}': mean, min, max or trend"))),
            };
            if over == Over::Trend {
                let named = raw.groups.as_ref().map_or(0, Vec::len);
                let pairs = expand(e, &raw.run, raw.baseline.as_deref(), raw.groups.as_deref());
                if named < 2 || pairs.len() != named {
                    return Err(at(
                        "over 'trend' needs groups = [FIRST, ..., LAST], two at least, each \
                         naming the run and its baseline"
                            .into(),
                    ));
                }
            }
            if raw.over.is_some() && !raw.run.contains('*') {
                return Err(at("over needs a run with '*' (its groups)".into()));
            }
            Ok(Claim {
                over,
                groups: raw.groups,
                holds_if: Bound::parse(&raw.holds_if).map_err(at)?,
                qualitative: raw
                    .qualitative
                    .as_deref()
                    .map(Bound::parse)
                    .transpose()
                    .map_err(at)?,
                experiment: raw.experiment,
                claim: raw.claim,
                source: raw.source,
                metric,
                run: raw.run,
                baseline: raw.baseline,
                compare,
                paper: raw.paper,
            })
        })
        .collect()
}

/// A run key with `*` (`bs-opt/*`) for each group of the experiment (or
/// each of `groups`, in order) where it and its baseline name runs: the
/// (run, baseline) pairs.
fn expand(
    e: &Experiment,
    run: &str,
    baseline: Option<&str>,
    groups: Option<&[String]>,
) -> Vec<(String, Option<String>)> {
    let all = e.groups();
    groups
        .map(<[String]>::to_vec)
        .unwrap_or(all)
        .iter()
        .map(|g| (run.replace('*', g), baseline.map(|b| b.replace('*', g))))
        .filter(|(r, b)| e.run(r).is_some() && b.as_deref().map_or(true, |b| e.run(b).is_some()))
        .collect()
}

impl Claim {
    /// Our figure for the claim in `mode`, and whether it is within the
    /// tolerance. A run key with `*` stands for every group: the figure is
    /// the mean of the groups' figures (FR's "on average" over its
    /// workloads), and needs every group's.
    pub fn check(&self, results: &Results, mode: Mode) -> Checked {
        let ours = if self.run.contains('*') {
            let pairs = crate::figures::all()
                .into_iter()
                .find(|e| e.id == self.experiment)
                .map(|e| {
                    expand(
                        &e,
                        &self.run,
                        self.baseline.as_deref(),
                        self.groups.as_deref(),
                    )
                })
                .unwrap_or_default();
            let figs: Option<Vec<f64>> = pairs
                .iter()
                .map(|(r, b)| self.figure(results, mode, r, b.as_deref()))
                .collect();
            figs.filter(|v| !v.is_empty()).map(|v| match self.over {
                Over::Mean => v.iter().sum::<f64>() / v.len() as f64,
                Over::Min => v.iter().copied().fold(f64::INFINITY, f64::min),
                Over::Max => v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                Over::Trend => v[v.len() - 1] / v[0],
            })
        } else {
            self.figure(results, mode, &self.run, self.baseline.as_deref())
        };
        // An infinite ratio (a figure that grows from nothing, FR Fig 5b's
        // T_D2) is checked as it is: `>= X` admits it, a range does not.
        let verdict = match ours {
            Some(v) if !v.is_nan() && self.holds_if.admits(v) => Verdict::Holds,
            Some(v) if !v.is_nan() && self.qualitative.is_some_and(|q| q.admits(v)) => {
                Verdict::Qualitatively
            }
            Some(v) if !v.is_nan() => Verdict::DoesNotHold,
            _ => Verdict::NotRun,
        };
        Checked {
            mode,
            ours,
            verdict,
        }
    }

    /// The figure of one run against its baseline.
    fn figure(
        &self,
        results: &Results,
        mode: Mode,
        run: &str,
        baseline: Option<&str>,
    ) -> Option<f64> {
        let stat = |key: &str| {
            results
                .stat(&self.experiment, key, mode, &self.metric)
                .map(|s| s.mean)
        };
        match (self.compare, stat(run), baseline.map(stat)) {
            (Compare::Value, Some(v), _) => Some(v),
            (Compare::Ratio, Some(v), Some(Some(b))) if b != 0.0 => Some(v / b),
            // From nothing to something: infinitely more.
            (Compare::Ratio, Some(v), Some(Some(_))) if v > 0.0 => Some(f64::INFINITY),
            (Compare::Diff, Some(v), Some(Some(b))) => Some(v - b),
            _ => None,
        }
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
}
