//! Every figure's conclusion (issue 36 item 4): the order in which a paper
//! ranks its systems on a metric (`conclusions.toml`, written from the
//! papers' text before any run), checked against the order our runs give.
//! The rule is in the file's header; this is it in code.
//!
//! Our values come from the claims' code ([`crate::claims::Source`]): the
//! metric of each seed of a run, averaged. A strict order must hold in the
//! mean and in every seed ([`beats`]); a tie is the claims' band for
//! "equal" ([`rule::EQUAL`]) or "the same latency" ([`rule::SAME_LATENCY`]).
//! An order says nothing of the size of a gap: the claims check that.

use report::doc::Block;
use report::Mode;
use serde::Deserialize;
use serde_json::json;

use crate::claims::{ModeResults, Source};
use crate::experiment::Experiment;
use crate::metric::Metric;
use crate::rule;
use crate::run::Results;

/// The conclusions shipped with the workbench.
pub const SHIPPED: &str = include_str!("../conclusions.toml");

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    conclusion: Vec<Raw>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    experiment: String,
    metric: String,
    better: String,
    order: String,
    over: Option<String>,
    groups: Option<Vec<String>>,
    tie: Option<String>,
    least: Option<f64>,
    source: String,
    quote: String,
    basis: String,
    note: Option<String>,
}

/// Which value ranks first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Better {
    Lower,
    Higher,
}

/// How the runs of one rank stand to each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Within {
    /// `A = B`: the paper calls them equal; checked against the tie band.
    Tied,
    /// `A, B` (or a rank of one): the paper says nothing between them.
    Unordered,
}

/// One rank of the paper's order: its runs (keys, `*` kept).
#[derive(Clone, Debug, PartialEq)]
pub struct Rank {
    pub runs: Vec<String>,
    pub within: Within,
}

/// How a `*` order's groups are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Over {
    /// No `*`: the runs as named.
    None,
    /// The order holds in every group.
    Each,
    /// Each run's mean over the groups.
    Mean,
}

/// Where an order comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Basis {
    /// The paper's text, tables or captions.
    Paper,
    /// Our own experiment's stated expectation (no paper): counted apart.
    Ours,
}

#[derive(Clone, Debug)]
pub struct Conclusion {
    pub experiment: String,
    pub metric: String,
    pub better: Better,
    /// Best first.
    pub ranks: Vec<Rank>,
    pub over: Over,
    /// The groups `*` stands for (empty without `*`).
    pub groups: Vec<String>,
    /// The tie band (ratio of a rank's member to its first) and its name.
    pub tie: (f64, f64),
    pub tie_name: &'static str,
    /// The least gap a strict step needs, as a fraction of the smaller
    /// value: [`rule::NEUTRAL_FLOOR`], or half the paper's smallest stated
    /// step where that is smaller ([`rule::margin`]'s floor).
    pub floor: f64,
    pub source: String,
    pub quote: String,
    pub basis: Basis,
    pub note: Option<String>,
}

/// Parses `order`: ranks best first, split by ` > `; a rank's runs by
/// ` = ` (tied) or `, ` (not compared), never both. The spaces are part of
/// the separators: run keys may hold `=` (`min-wait=20us`).
pub fn parse_order(order: &str) -> Result<Vec<Rank>, String> {
    let ranks: Vec<Rank> = order
        .split(" > ")
        .map(|rank| {
            let (tied, loose) = (rank.contains(" = "), rank.contains(", "));
            if tied && loose {
                return Err(format!(
                    "order: rank '{}' mixes '=' and ',' (one rank is tied or unordered)",
                    rank.trim()
                ));
            }
            let sep = if tied { " = " } else { ", " };
            let runs: Vec<String> = rank.split(sep).map(|r| r.trim().to_string()).collect();
            if runs.iter().any(String::is_empty) {
                return Err(format!("order '{order}': an empty run key"));
            }
            Ok(Rank {
                runs,
                within: if tied {
                    Within::Tied
                } else {
                    Within::Unordered
                },
            })
        })
        .collect::<Result<_, _>>()?;
    let count: usize = ranks.iter().map(|r| r.runs.len()).sum();
    if count < 2 {
        return Err(format!("order '{order}': name two runs at least"));
    }
    let mut seen: Vec<&String> = Vec::new();
    for r in ranks.iter().flat_map(|r| &r.runs) {
        if seen.contains(&r) {
            return Err(format!("order '{order}': run '{r}' twice"));
        }
        seen.push(r);
    }
    Ok(ranks)
}

/// Reads a conclusions file and checks every entry against the
/// experiments: the experiment, its runs (in every group `*` stands for)
/// and the metric must exist. An error names the entry by its position,
/// experiment and order.
pub fn load(
    text: &str,
    origin: &str,
    experiments: &[Experiment],
) -> Result<Vec<Conclusion>, String> {
    let file: File = crate::claims::parse_toml(text, origin)?;
    file.conclusion
        .into_iter()
        .enumerate()
        .map(|(i, raw)| {
            let at = |m: String| {
                format!(
                    "{origin}: conclusion {} ({} {}: '{}'): {m}",
                    i + 1,
                    raw.experiment,
                    raw.metric,
                    raw.order
                )
            };
            one(raw.clone(), experiments).map_err(at)
        })
        .collect()
}

fn one(raw: Raw, experiments: &[Experiment]) -> Result<Conclusion, String> {
    let e = experiments
        .iter()
        .find(|e| e.id == raw.experiment)
        .ok_or_else(|| format!("no experiment '{}'", raw.experiment))?;
    Metric::parse(&raw.metric)?;
    let better = match raw.better.as_str() {
        "lower" => Better::Lower,
        "higher" => Better::Higher,
        other => return Err(format!("better '{other}': lower or higher")),
    };
    let ranks = parse_order(&raw.order)?;
    let keys: Vec<&String> = ranks.iter().flat_map(|r| &r.runs).collect();
    let starred = keys.iter().filter(|k| k.contains('*')).count();
    if starred != 0 && starred != keys.len() {
        return Err("every run key has '*', or none".into());
    }
    let over = match (raw.over.as_deref(), starred > 0) {
        (None, false) => Over::None,
        (Some("each"), true) => Over::Each,
        (Some("mean"), true) => Over::Mean,
        (None, true) => return Err("a run with '*' needs over = \"each\" or \"mean\"".into()),
        (Some(o), true) => return Err(format!("over '{o}': each or mean")),
        (Some(_), false) => return Err("over needs run keys with '*'".into()),
    };
    let groups = match (&raw.groups, starred > 0) {
        (Some(_), false) => return Err("groups needs run keys with '*'".into()),
        (None, false) => Vec::new(),
        (Some(gs), true) => gs.clone(),
        (None, true) => e.groups(),
    };
    let all = e.groups();
    if let Some(g) = groups.iter().find(|g| !all.contains(g)) {
        return Err(format!("experiment '{}' has no group '{g}'", e.id));
    }
    if starred > 0 && groups.is_empty() {
        return Err("groups: name one at least".into());
    }
    for key in &keys {
        let named: Vec<String> = if key.contains('*') {
            groups.iter().map(|g| key.replace('*', g)).collect()
        } else {
            vec![key.to_string()]
        };
        if let Some(missing) = named.iter().find(|k| e.run(k).is_none()) {
            return Err(format!("experiment '{}' has no run '{missing}'", e.id));
        }
    }
    let (tie, tie_name) = match raw.tie.as_deref() {
        None | Some("equal") => (rule::EQUAL, "equal"),
        Some("same-latency") => (rule::SAME_LATENCY, "same-latency"),
        Some(other) => return Err(format!("tie '{other}': equal or same-latency")),
    };
    let floor = match raw.least {
        None => rule::NEUTRAL_FLOOR,
        Some(l) if l > 0.0 && l < 1.0 => rule::NEUTRAL_FLOOR.min(l / 2.0),
        Some(l) => return Err(format!("least {l}: a fraction, 0 < least < 1")),
    };
    let basis = match raw.basis.as_str() {
        "paper" => Basis::Paper,
        "ours" => Basis::Ours,
        other => return Err(format!("basis '{other}': paper or ours")),
    };
    if (basis == Basis::Ours) != e.id.starts_with("ours-") {
        return Err("basis: 'ours' for our own experiments (ours-*), 'paper' for the rest".into());
    }
    if raw.source.trim().is_empty() || raw.quote.trim().is_empty() {
        return Err("source and quote: the paper's section and its words".into());
    }
    Ok(Conclusion {
        experiment: raw.experiment,
        metric: raw.metric,
        better,
        ranks,
        over,
        groups,
        tie,
        tie_name,
        floor,
        source: raw.source,
        quote: raw.quote,
        basis,
        note: raw.note,
    })
}

/// The outcome of one conclusion in one mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Agreement {
    Agree,
    Disagree,
    /// A run has no value (not selected, not run in this mode, or the
    /// metric is missing from it).
    NotRun,
}

impl Agreement {
    pub fn as_str(self) -> &'static str {
        match self {
            Agreement::Agree => "agree",
            Agreement::Disagree => "disagree",
            Agreement::NotRun => "not run",
        }
    }
}

/// A run's values: the mean over seeds and the value of each seed.
#[derive(Clone, Debug, PartialEq)]
pub struct Values {
    pub mean: f64,
    pub per_seed: Vec<f64>,
}

impl Values {
    pub fn new(per_seed: Vec<f64>) -> Values {
        let mean = per_seed.iter().sum::<f64>() / per_seed.len() as f64;
        Values { mean, per_seed }
    }
}

/// Our order in one set of runs (a group, or the runs as named) against
/// the paper's.
#[derive(Clone, Debug)]
pub struct SetOutcome {
    /// The group, for `over = "each"`; empty otherwise.
    pub group: String,
    /// Our order, best first, with values (`cint 10.2 = default 10.5 >
    /// adaptive 45`).
    pub ours: String,
    /// The paper's comparisons ours breaks (`default not below adaptive`).
    pub broken: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct Checked {
    pub agreement: Agreement,
    pub sets: Vec<SetOutcome>,
}

impl Conclusion {
    /// The paper's order as the report shows it (`*` dropped: the table
    /// says over which groups).
    pub fn paper_order(&self) -> String {
        let ranks: Vec<String> = self
            .ranks
            .iter()
            .map(|r| {
                let sep = match r.within {
                    Within::Tied => " = ",
                    Within::Unordered => ", ",
                };
                r.runs
                    .iter()
                    .map(|k| shown(k))
                    .collect::<Vec<_>>()
                    .join(sep)
            })
            .collect();
        ranks.join(" > ")
    }

    /// What the order is over: the groups, and how.
    pub fn scope(&self) -> String {
        match self.over {
            Over::None => String::new(),
            Over::Each => format!("in each of {}", self.groups.join(", ")),
            Over::Mean => format!("mean over {}", self.groups.join(", ")),
        }
    }

    /// The paper's order against ours, in `mode`.
    pub fn check(&self, results: &Results, mode: Mode) -> Checked {
        self.check_in(&ModeResults::new(results, mode))
    }

    /// The paper's order against the values `source` gives.
    pub fn check_in(&self, source: &dyn Source) -> Checked {
        let sets: Vec<(String, Vec<Named>)> = match self.over {
            Over::None => vec![(
                String::new(),
                self.keys()
                    .map(|k| (k.clone(), self.values(source, k)))
                    .collect(),
            )],
            Over::Each => self
                .groups
                .iter()
                .map(|g| {
                    let runs = self
                        .keys()
                        .map(|k| (k.clone(), self.values(source, &k.replace('*', g))))
                        .collect();
                    (g.clone(), runs)
                })
                .collect(),
            Over::Mean => vec![(
                String::new(),
                self.keys()
                    .map(|k| {
                        let per_group: Option<Vec<Values>> = self
                            .groups
                            .iter()
                            .map(|g| self.values(source, &k.replace('*', g)))
                            .collect();
                        (k.clone(), per_group.map(|v| mean_over(&v)))
                    })
                    .collect(),
            )],
        };
        let mut outcomes = Vec::new();
        let mut missing = false;
        for (group, runs) in sets {
            let have: Option<Vec<(String, Values)>> =
                runs.into_iter().map(|(k, v)| v.map(|v| (k, v))).collect();
            match have {
                None => {
                    missing = true;
                    outcomes.push(SetOutcome {
                        group,
                        ours: "not run".into(),
                        broken: Vec::new(),
                    });
                }
                Some(values) => {
                    let broken = compare(&self.ranks, &values, self.better, self.tie, self.floor);
                    outcomes.push(SetOutcome {
                        group,
                        ours: our_order(&values, self.better, self.floor),
                        broken,
                    });
                }
            }
        }
        let agreement = if missing {
            Agreement::NotRun
        } else if outcomes.iter().all(|o| o.broken.is_empty()) {
            Agreement::Agree
        } else {
            Agreement::Disagree
        };
        Checked {
            agreement,
            sets: outcomes,
        }
    }

    fn keys(&self) -> impl Iterator<Item = &String> {
        self.ranks.iter().flat_map(|r| &r.runs)
    }

    fn values(&self, source: &dyn Source, key: &str) -> Option<Values> {
        source
            .per_seed(&self.experiment, key, &self.metric)
            .map(Values::new)
    }
}

/// A run key and its values, if it ran.
type Named = (String, Option<Values>);

/// A run key as the report shows it: `cint/*` is `cint`.
fn shown(key: &str) -> String {
    key.strip_suffix("/*").unwrap_or(key).replace('*', "")
}

/// A run's value as its mean over groups (and per seed, the mean over
/// groups of that seed's values).
fn mean_over(groups: &[Values]) -> Values {
    let seeds = groups.iter().map(|v| v.per_seed.len()).min().unwrap_or(0);
    let per_seed: Vec<f64> = (0..seeds)
        .map(|i| groups.iter().map(|v| v.per_seed[i]).sum::<f64>() / groups.len() as f64)
        .collect();
    Values {
        mean: groups.iter().map(|v| v.mean).sum::<f64>() / groups.len() as f64,
        per_seed,
    }
}

/// Whether `a` beats `b`: better in the mean and in every seed (seeds
/// paired by index, as the claims pair a run with its baseline), by at
/// least `floor` of the smaller mean ([`rule::NEUTRAL_FLOOR`]: "below it a
/// ratio of two of our runs is indistinguishable from none"). An order
/// that flips in one seed is not one we reproduce; identical runs never
/// beat each other. A sign in every seed rather than a multiple of the
/// spread: a heavy-tailed figure (FR Fig 4a's p99.9, 12 ms in one seed and
/// 1.7 ms in two, against 14 us alone) has an order in every seed and a
/// spread larger than its mean gap.
pub fn beats(a: &Values, b: &Values, better: Better, floor: f64) -> bool {
    let gain = |x: f64, y: f64| match better {
        Better::Lower => y - x,
        Better::Higher => x - y,
    };
    let n = a.per_seed.len().min(b.per_seed.len());
    let (lo, hi) = if a.mean.abs() < b.mean.abs() {
        (a.mean.abs(), b.mean.abs())
    } else {
        (b.mean.abs(), a.mean.abs())
    };
    n > 0
        && (0..n).all(|i| gain(a.per_seed[i], b.per_seed[i]) > 0.0)
        && gain(a.mean, b.mean) > 0.0
        && hi > lo * (1.0 + floor)
}

/// Whether `b` ties `a`: b / a within `band`; two zeros are equal.
pub fn ties(a: f64, b: f64, band: (f64, f64)) -> bool {
    if a == 0.0 && b == 0.0 {
        return true;
    }
    if a == 0.0 {
        return false;
    }
    let r = b / a;
    r.is_finite() && band.0 <= r && r <= band.1
}

/// The paper's comparisons `values` break, in words; none when ours
/// agrees. Every run of a rank must beat every run of the next; the runs
/// of a tied rank must tie with its first.
pub fn compare(
    ranks: &[Rank],
    values: &[(String, Values)],
    better: Better,
    tie: (f64, f64),
    floor: f64,
) -> Vec<String> {
    let get = |k: &String| {
        &values
            .iter()
            .find(|(key, _)| key == k)
            .expect("every key")
            .1
    };
    let below = match better {
        Better::Lower => "below",
        Better::Higher => "above",
    };
    let mut broken = Vec::new();
    for r in ranks {
        if r.within == Within::Tied {
            let first = &r.runs[0];
            for other in &r.runs[1..] {
                if !ties(get(first).mean, get(other).mean, tie) {
                    broken.push(format!("{} not equal to {}", shown(other), shown(first)));
                }
            }
        }
    }
    for pair in ranks.windows(2) {
        for a in &pair[0].runs {
            for b in &pair[1].runs {
                if !beats(get(a), get(b), better, floor) {
                    broken.push(format!("{} not clearly {below} {}", shown(a), shown(b)));
                }
            }
        }
    }
    broken
}

/// Our order, best first, with values: `>` where a run beats the next
/// ([`beats`]: in every seed, by `floor` at least), `≈` where it does not.
pub fn our_order(values: &[(String, Values)], better: Better, floor: f64) -> String {
    let mut sorted: Vec<&(String, Values)> = values.iter().collect();
    sorted.sort_by(|a, b| {
        let o = a.1.mean.total_cmp(&b.1.mean);
        match better {
            Better::Lower => o,
            Better::Higher => o.reverse(),
        }
    });
    let mut out = String::new();
    for (i, (k, v)) in sorted.iter().enumerate() {
        if i > 0 {
            let prev = &sorted[i - 1].1;
            out += if beats(prev, v, better, floor) {
                " > "
            } else {
                " ≈ "
            };
        }
        out += &format!("{} {}", shown(k), number(v.mean));
    }
    out
}

fn number(v: f64) -> String {
    let a = v.abs();
    if a >= 10_000.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// One experiment's conclusions in one mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FigureOutcome {
    /// Every conclusion agrees.
    Reproduced,
    /// One disagrees at least.
    NotReproduced,
    /// None disagrees, one at least was not run: out of the count.
    NotRun,
}

/// The figure's outcome from its conclusions'.
pub fn figure_outcome(agreements: &[Agreement]) -> FigureOutcome {
    if agreements.contains(&Agreement::Disagree) {
        FigureOutcome::NotReproduced
    } else if agreements.contains(&Agreement::NotRun) || agreements.is_empty() {
        FigureOutcome::NotRun
    } else {
        FigureOutcome::Reproduced
    }
}

/// Counts of figures for the headline, in one mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub reproduced: usize,
    pub checked: usize,
    pub not_run: usize,
    pub entries_agree: usize,
    pub entries_checked: usize,
}

impl Counts {
    fn add(&mut self, figure: FigureOutcome, agreements: &[Agreement]) {
        match figure {
            FigureOutcome::Reproduced => {
                self.reproduced += 1;
                self.checked += 1;
            }
            FigureOutcome::NotReproduced => self.checked += 1,
            FigureOutcome::NotRun => self.not_run += 1,
        }
        for a in agreements {
            match a {
                Agreement::Agree => {
                    self.entries_agree += 1;
                    self.entries_checked += 1;
                }
                Agreement::Disagree => self.entries_checked += 1,
                Agreement::NotRun => {}
            }
        }
    }
}

/// The headline of one mode: the papers' figures, then ours apart.
pub fn headline(mode: &str, paper: Counts, ours: Counts) -> String {
    let mut s = format!(
        "{} of {} figures' conclusions reproduced ({mode}; {} of {} orderings agree",
        paper.reproduced, paper.checked, paper.entries_agree, paper.entries_checked
    );
    if paper.not_run > 0 {
        s += &format!("; {} not run", paper.not_run);
    }
    s += &format!("); ours apart: {} of {}", ours.reproduced, ours.checked);
    s
}

/// What the report gets: its blocks, `summary.json`'s `conclusions`
/// array, and the headline line (one per mode, joined by "; ").
pub struct Section {
    pub blocks: Vec<Block>,
    pub json: serde_json::Value,
    pub headline: String,
}

/// The conclusions table of the experiments run, per mode, with the
/// headline: a figure counts as reproduced when every one of its
/// conclusions agrees. The shipped file is checked against every
/// experiment; an error is one line naming the entry.
pub fn section(
    experiments: &[Experiment],
    results: &Results,
    modes: &[Mode],
) -> Result<Section, String> {
    let all = crate::figures::all();
    let conclusions = load(SHIPPED, "conclusions.toml", &all)?;
    let mut blocks = vec![
        Block::Heading(2, "Conclusions".into()),
        Block::Para(
            "Each figure's conclusion as its paper draws it: which system ranks first on which \
             metric, in which order (best first; `=` the paper calls them equal, `,` it does not \
             rank them against each other), written from the papers' text in \
             `crates/repro/conclusions.toml` before any run. Ours is the mean over seeds, best \
             first (`>` better in every seed and by 2% at least, `≈` not). A strict step of the \
             paper's agrees when it holds in the mean and in every seed, by 2% at least (the \
             claims' least clearance from no effect, `rule::NEUTRAL_FLOOR`; half the paper's \
             smallest stated step where that is smaller); a tie when the ratio is within the \
             claims' band for \"equal\" (0.9..1.1) or \"the same latency\" (0.95..1.05). An \
             order says nothing of the size of a gap (the claims check that). A \
             figure's conclusions are reproduced when every one of its orderings agrees. Our own \
             experiments (ours-*) state their own expectation and are counted apart."
                .into(),
        ),
    ];
    let mut json = Vec::new();
    let mut lines = Vec::new();
    for &mode in modes {
        let source = ModeResults::new(results, mode);
        let (mut paper, mut ours) = (Counts::default(), Counts::default());
        let mut rows = Vec::new();
        let mut figures = Vec::new();
        for e in experiments {
            let mine: Vec<&Conclusion> = conclusions
                .iter()
                .filter(|c| c.experiment == e.id)
                .collect();
            let mut agreements = Vec::new();
            for c in &mine {
                let k = c.check_in(&source);
                agreements.push(k.agreement);
                let ours_text = k
                    .sets
                    .iter()
                    .map(|s| match s.group.as_str() {
                        "" => s.ours.clone(),
                        g => format!("[{g}] {}", s.ours),
                    })
                    .collect::<Vec<_>>()
                    .join("; ");
                let broken: Vec<String> = k
                    .sets
                    .iter()
                    .flat_map(|s| {
                        s.broken.iter().map(move |b| match s.group.as_str() {
                            "" => b.clone(),
                            g => format!("{b} ({g})"),
                        })
                    })
                    .collect();
                let verdict = match (k.agreement, broken.is_empty()) {
                    (Agreement::Disagree, false) => format!("disagree: {}", broken.join("; ")),
                    (a, _) => a.as_str().to_string(),
                };
                let better = match c.better {
                    Better::Lower => "lower",
                    Better::Higher => "higher",
                };
                let metric = match c.scope().as_str() {
                    "" => format!("`{}` ({better} first)", c.metric),
                    s => format!("`{}` ({better} first; {s})", c.metric),
                };
                rows.push(vec![
                    e.id.to_string(),
                    metric,
                    c.paper_order(),
                    c.source.clone(),
                    ours_text.clone(),
                    verdict,
                ]);
                json.push(json!({
                    "experiment": e.id, "mode": mode.as_str(),
                    "basis": match c.basis { Basis::Paper => "paper", Basis::Ours => "ours" },
                    "metric": c.metric, "better": better, "scope": c.scope(),
                    "paper_order": c.paper_order(), "tie": c.tie_name,
                    "source": c.source, "quote": c.quote,
                    "ours": ours_text, "broken": broken,
                    "verdict": k.agreement.as_str(),
                }));
            }
            let figure = figure_outcome(&agreements);
            let ours_experiment = mine.iter().any(|c| c.basis == Basis::Ours);
            if ours_experiment {
                ours.add(figure, &agreements);
            } else {
                paper.add(figure, &agreements);
            }
            let agree = agreements
                .iter()
                .filter(|a| **a == Agreement::Agree)
                .count();
            figures.push(vec![
                e.id.to_string(),
                if ours_experiment { "ours" } else { "paper" }.to_string(),
                format!("{agree} of {}", agreements.len()),
                match figure {
                    FigureOutcome::Reproduced => "reproduced",
                    FigureOutcome::NotReproduced => "not reproduced",
                    FigureOutcome::NotRun => "not run",
                }
                .to_string(),
            ]);
        }
        let line = headline(mode.as_str(), paper, ours);
        blocks.push(Block::Heading(
            3,
            format!("Conclusions ({})", mode.as_str()),
        ));
        blocks.push(Block::Para(format!("**{line}.**")));
        blocks.push(Block::Table {
            head: ["experiment", "basis", "orderings agreeing", "conclusions"]
                .map(String::from)
                .to_vec(),
            rows: figures,
        });
        blocks.push(Block::Table {
            head: [
                "figure",
                "metric",
                "the paper's order (best first)",
                "source",
                "ours (mean over seeds, best first)",
                "verdict",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        });
        lines.push(line);
    }
    Ok(Section {
        blocks,
        json: serde_json::Value::Array(json),
        headline: lines.join("; "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const F: f64 = rule::NEUTRAL_FLOOR;

    fn v(per_seed: &[f64]) -> Values {
        Values::new(per_seed.to_vec())
    }

    fn set(pairs: &[(&str, &[f64])]) -> Vec<(String, Values)> {
        pairs.iter().map(|(k, s)| (k.to_string(), v(s))).collect()
    }

    #[test]
    fn an_order_parses_into_ranks_best_first() {
        let r = parse_order("cint = default > adaptive").unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].runs, ["cint", "default"]);
        assert_eq!(r[0].within, Within::Tied);
        assert_eq!(r[1].within, Within::Unordered);
        let r = parse_order("a > b, c").unwrap();
        assert_eq!(r[1].runs, ["b", "c"]);
        assert!(parse_order("a = b, c > d").unwrap_err().contains("mixes"));
        assert!(parse_order("a > a").unwrap_err().contains("twice"));
        assert!(parse_order("a").is_err());
        let r = parse_order("min-wait=20us, defer-taskrun > task-work").unwrap();
        assert_eq!(r[0].runs, ["min-wait=20us", "defer-taskrun"]);
        assert!(parse_order("a > ").is_err());
    }

    #[test]
    fn ties_hold_within_the_band_and_orders_must_clear_the_noise() {
        let ranks = parse_order("cint = default > adaptive").unwrap();
        // Latency: cint and default within 10% of each other, adaptive far
        // above both: agrees.
        let ok = set(&[
            ("cint", &[10.0, 10.2, 9.8]),
            ("default", &[10.6, 10.4, 10.8]),
            ("adaptive", &[44.0, 45.0, 46.0]),
        ]);
        assert!(compare(&ranks, &ok, Better::Lower, rule::EQUAL, F).is_empty());
        assert_eq!(
            our_order(&ok, Better::Lower, F),
            "cint 10.00 > default 10.60 > adaptive 45.00"
        );
        // The same numbers read "higher is better" break both strict steps.
        let broken = compare(&ranks, &ok, Better::Higher, rule::EQUAL, F);
        assert_eq!(broken.len(), 2, "{broken:?}");
        // default 12% above cint: no tie under EQUAL, a tie under none.
        let apart = set(&[
            ("cint", &[10.0, 10.0]),
            ("default", &[11.2, 11.2]),
            ("adaptive", &[45.0, 45.0]),
        ]);
        assert_eq!(
            compare(&ranks, &apart, Better::Lower, rule::EQUAL, F),
            ["default not equal to cint"]
        );
        assert!(compare(&ranks, &apart, Better::Lower, (0.8, 1.25), F).is_empty());
        // adaptive above on the mean but below in one seed: no order.
        let noisy = set(&[
            ("cint", &[10.0, 10.0, 10.0]),
            ("default", &[10.0, 10.0, 10.0]),
            ("adaptive", &[5.0, 15.0, 25.0]),
        ]);
        let broken = compare(&ranks, &noisy, Better::Lower, rule::EQUAL, F);
        assert_eq!(broken.len(), 2, "{broken:?}");
        assert!(broken[0].contains("not clearly below"));
        // A heavy tail: ahead in every seed, with a spread above the mean
        // gap (FR Fig 4a's p99.9): an order.
        assert!(beats(
            &v(&[14.0, 13.6, 14.2]),
            &v(&[12009.0, 1661.0, 1660.0]),
            Better::Lower,
            F
        ));
        // Identical runs never make a strict order.
        assert!(!beats(&v(&[3.0, 3.0]), &v(&[3.0, 3.0]), Better::Lower, F));
        // Ahead in every seed by 1%: under the 2% floor, no order; with a
        // paper's step of 1.2% stated (floor 0.6%), an order.
        let (a, b) = (v(&[100.0, 100.0]), v(&[101.0, 101.0]));
        assert!(!beats(&a, &b, Better::Lower, F));
        assert!(beats(&a, &b, Better::Lower, 0.006));
        // Zeros: two zeros tie, a zero beats a positive latency.
        assert!(ties(0.0, 0.0, rule::EQUAL));
        assert!(!ties(0.0, 1.0, rule::EQUAL));
        assert!(beats(&v(&[0.0, 0.0]), &v(&[7.0, 6.0]), Better::Lower, F));
    }

    #[test]
    fn unordered_runs_of_a_rank_are_not_compared() {
        let ranks = parse_order("a > b, c").unwrap();
        let vals = set(&[("a", &[10.0]), ("b", &[5.0]), ("c", &[1.0])]);
        assert!(compare(&ranks, &vals, Better::Higher, rule::EQUAL, F).is_empty());
        let vals = set(&[("a", &[4.0]), ("b", &[5.0]), ("c", &[1.0])]);
        assert_eq!(
            compare(&ranks, &vals, Better::Higher, rule::EQUAL, F),
            ["a not clearly above b"]
        );
    }

    #[test]
    fn a_figure_is_reproduced_only_when_every_ordering_agrees() {
        use Agreement::*;
        assert_eq!(figure_outcome(&[Agree, Agree]), FigureOutcome::Reproduced);
        assert_eq!(
            figure_outcome(&[Agree, Disagree]),
            FigureOutcome::NotReproduced
        );
        assert_eq!(
            figure_outcome(&[Disagree, NotRun]),
            FigureOutcome::NotReproduced
        );
        assert_eq!(figure_outcome(&[Agree, NotRun]), FigureOutcome::NotRun);
        let mut paper = Counts::default();
        paper.add(FigureOutcome::Reproduced, &[Agree, Agree]);
        paper.add(FigureOutcome::NotReproduced, &[Agree, Disagree]);
        paper.add(FigureOutcome::NotRun, &[NotRun]);
        let mut ours = Counts::default();
        ours.add(FigureOutcome::Reproduced, &[Agree]);
        assert_eq!(
            headline("sim", paper, ours),
            "1 of 2 figures' conclusions reproduced (sim; 3 of 4 orderings agree; 1 not run); \
             ours apart: 1 of 1"
        );
    }

    #[test]
    fn every_experiment_has_a_conclusion_and_the_file_loads() {
        let all = crate::figures::all();
        let conclusions = load(SHIPPED, "conclusions.toml", &all).unwrap_or_else(|e| panic!("{e}"));
        for e in &all {
            assert!(
                conclusions.iter().any(|c| c.experiment == e.id),
                "experiment '{}' has no conclusion in conclusions.toml",
                e.id
            );
        }
        assert!(conclusions
            .iter()
            .all(|c| (c.basis == Basis::Ours) == c.experiment.starts_with("ours-")));
    }

    #[test]
    fn a_wrong_run_key_fails_with_the_entry_named() {
        let all = crate::figures::all();
        let text = r#"
[[conclusion]]
experiment = "fig10"
metric = "irq_rate"
better = "lower"
order = "adaptive > cint > defualt"
source = "TOS 3.3"
quote = "2.7x more interrupts"
basis = "paper"
"#;
        let err = load(text, "conclusions.toml", &all).unwrap_err();
        assert_eq!(
            err,
            "conclusions.toml: conclusion 1 (fig10 irq_rate: 'adaptive > cint > defualt'): \
             experiment 'fig10' has no run 'defualt'"
        );
        // A `*` key must name a run in every group it stands for.
        let starred = text
            .replace("adaptive > cint > defualt", "cint/* > default/*")
            .replace("basis = \"paper\"", "basis = \"paper\"\nover = \"each\"")
            .replace("\"fig10\"", "\"fig12\"");
        assert!(load(&starred, "c", &all).is_ok());
        let missing = starred.replace("cint/* > default/*", "cint/* > nvme6/*");
        assert!(load(&missing, "c", &all)
            .unwrap_err()
            .contains("experiment 'fig12' has no run 'nvme6/1 thread'"));
        let unknown = text.replace("\"fig10\"", "\"fig99\"");
        assert!(load(&unknown, "c", &all)
            .unwrap_err()
            .ends_with("no experiment 'fig99'"));
        let metric = text
            .replace("irq_rate", "irq_rates")
            .replace("defualt", "default");
        assert!(load(&metric, "c", &all)
            .unwrap_err()
            .ends_with("unknown metric 'irq_rates'"));
    }
}
