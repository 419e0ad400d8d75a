//! Writes the report: `report.md`, `report.html`, `figures/*.svg`,
//! `runs/MODE/EXPERIMENT/RUN.seedN.json` and `summary.json`, into the
//! staging directory that replaces the report whole ([`crate::staging`]).

use std::path::{Path, PathBuf};

use report::Mode;
use serde_json::json;

use crate::claims::{Checked, Claim, Verdict};
use crate::experiment::Experiment;
use crate::plot;
use crate::run::{Outcome, Plan, Results};
use crate::ReproError;
use report::doc::{self, Block};

pub fn atomic(path: &Path, contents: &str) -> Result<(), ReproError> {
    let fail = |e: std::io::Error| ReproError::Write {
        path: path.display().to_string(),
        reason: e.to_string(),
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    report::file::write_atomically(path, contents.as_bytes()).map_err(fail)
}

/// Where one run's fio-shaped JSON goes, relative to the report.
pub fn run_file(o: &Outcome) -> PathBuf {
    let key: String = o
        .key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '+' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    PathBuf::from("runs")
        .join(o.mode.as_str())
        .join(o.experiment)
        .join(format!("{key}.seed{}.json", o.seed))
}

pub fn save_run(out: &Path, o: &Outcome) -> Result<(), ReproError> {
    let mut v = report::json::render(&o.report);
    v["cinterrupts_reproduce"] =
        json!({ "experiment": o.experiment, "run": o.key, "seed": o.seed });
    let text = serde_json::to_string_pretty(&v).unwrap_or_default();
    atomic(&out.join(run_file(o)), &text)
}

/// What the report is about: how it was run.
pub struct Context<'a> {
    pub command: &'a str,
    pub plan: &'a Plan,
    pub wall_secs: f64,
}

/// Counts of verdicts by paper and basis (issue 23 item 3): the headline
/// counts independent evidence; fitted and by-construction results are
/// counted apart.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// (paper, basis) -> counts per verdict, in [`Verdict::ALL`]'s order.
    pub by: std::collections::BTreeMap<(String, String), [usize; 5]>,
    /// Independent effect claims missed with their run and baseline
    /// identical in every seed: the model lacks the mechanism (issue 36
    /// item 1: they stay misses, counted in the headline).
    pub identical_misses: usize,
    /// The conclusions' headline ([`crate::conclusions::headline`]), empty
    /// until the report is written.
    pub conclusions: String,
}

impl Tally {
    pub fn add(&mut self, paper: &str, basis: &str, v: Verdict) {
        let i = Verdict::ALL.iter().position(|x| *x == v).unwrap_or(4);
        self.by
            .entry((paper.to_string(), basis.to_string()))
            .or_default()[i] += 1;
    }

    /// Counts one checked claim, and an identical-run miss among the
    /// independent ones.
    pub fn add_checked(&mut self, c: &Claim, k: &Checked) {
        self.add(c.paper_name(), k.basis.as_str(), k.verdict);
        if k.basis == crate::claims::Basis::Independent && identical_miss(c, k) {
            self.identical_misses += 1;
        }
    }

    /// Counts over every paper for `basis` (all bases when `None`).
    pub fn counts(&self, basis: Option<&str>) -> [usize; 5] {
        let mut out = [0; 5];
        for ((_, b), c) in &self.by {
            if basis.map_or(true, |x| x == b) {
                for (o, c) in out.iter_mut().zip(c) {
                    *o += c;
                }
            }
        }
        out
    }

    pub fn holds(&self) -> usize {
        self.counts(None)[0]
    }

    /// The headline: `N of M independent claims hold (Q more
    /// qualitatively); K of F fitted claims reproduce their targets; C of B
    /// hold by construction`, claims not run left out of M, F and B.
    pub fn headline(&self) -> String {
        let checked = |c: [usize; 5]| c[0] + c[1] + c[2] + c[3];
        let i = self.counts(Some("independent"));
        let f = self.counts(Some("fitted"));
        let b = self.counts(Some("by construction"));
        let all = self.counts(None);
        let mut s = format!(
            "{} of {} independent claims hold ({} more qualitatively, {} right direction but far off, {} do not); \
             {} of {} fitted claims hold (a fit's targets, and the claims sharing a fit's run or figure); \
             {} of {} by-construction claims hold",
            i[0],
            checked(i),
            i[1],
            i[2],
            i[3],
            f[0],
            checked(f),
            b[0],
            checked(b)
        );
        if self.identical_misses > 0 {
            s += &format!(
                "; {} of the independent misses are effects whose run and baseline came out \
                 identical: the model lacks the mechanism",
                self.identical_misses
            );
        }
        if all[4] > 0 {
            s += &format!(" ({} not run)", all[4]);
        }
        s
    }
}

impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.headline())
    }
}

pub fn report(
    out: &Path,
    experiments: &[Experiment],
    claims: &[Claim],
    results: &Results,
    ctx: &Context,
) -> Result<Tally, ReproError> {
    let mut blocks = vec![Block::Heading(
        1,
        "Calibrated interrupts: the paper's microbenchmarks, rerun".into(),
    )];
    blocks.push(Block::Para(format!(
        "Made by `{}` in {:.0} s. {} The paper's numbers are from Tai, Smolyar, Wei and Tsafrir, \
         ACM TOS 18(1) 2022 (and the OSDI 2021 bar labels), and Gyawali and Aryal for the dynamic \
         timeout. Each run's fio-shaped JSON is under `runs/`; `summary.json` has every verdict.",
        ctx.command,
        ctx.wall_secs,
        modes_text(ctx.plan)
    )));
    blocks.push(Block::Para(
        "Each claim states the paper's number and its kind; its band comes from one rule, written \
         in `crates/repro/claims.toml`'s header and coded in `crates/repro/src/rule.rs`: a claimed \
         change (a ratio, a range of ratios) within a factor of 1.5 of its effect (2.74x is +174%: \
         +116%..+261%), a measured difference or value within a factor of 1.5 of the paper's; \
         \"equal\" 0.9..1.1 (0.95..1.05 for latencies equal to the microsecond); a time a scheme adds \
         by design within 1 us at 6 us, 2 us at 15-20 us, 5% at 100 us; a bound the paper states, as \
         stated. A claimed effect never holds at no effect: its band keeps clear of the neutral \
         value (1, or 0 for a difference) by twice our figure's spread across seeds, and by 2% at \
         least for ratios. \"Holds qualitatively\" is the paper's direction within 3x of its \
         number (of its effect, for a change); beyond 3x, \"right direction, far off\", a miss. \
         Each claim's basis is declared in the claims file from its inputs, before any run: \
         independent, fitted (a calibration's target, or a claim sharing a run or a figure with \
         one: `repro::fits` names every fit's runs and figures) or by construction (a model \
         input, a quotient of inputs, or a bound our own code enforces, with the reason). Only \
         independent claims count in the headline; an independent effect whose run and baseline \
         come out identical is a miss there like any other (\"identical runs: the model lacks \
         the mechanism\")."
            .into(),
    ));
    blocks.push(Block::Contents);
    let mut tally = Tally::default();
    let mut summary_rows = Vec::new();
    let mut verdicts = Vec::new();
    let mut exceptions = Vec::new();
    let mut body = Vec::new();
    for c in claims {
        if let Some((band, why)) = &c.exception {
            exceptions.push(vec![
                c.experiment.clone(),
                c.claim.clone(),
                c.kind_text(),
                band.to_string(),
                why.clone(),
            ]);
        }
    }
    let sources: Vec<(Mode, crate::claims::ModeResults)> = ctx
        .plan
        .modes
        .iter()
        .map(|&m| (m, crate::claims::ModeResults::new(results, m)))
        .collect();
    for e in experiments {
        body.push(Block::Heading(2, e.title.to_string()));
        body.push(Block::Para(e.paper.to_string()));
        body.push(provenance_table(&e.provenance));
        for (mode, source) in &sources {
            let mode = *mode;
            let fig = plot::figure(e, results, mode);
            let svg = fig.render().map_err(|reason| ReproError::Write {
                path: format!("figures/{}-{}.svg", e.id, mode.as_str()),
                reason,
            })?;
            let file = format!("figures/{}-{}.svg", e.id, mode.as_str());
            atomic(&out.join(&file), &svg)?;
            body.push(Block::Heading(3, format!("{} ({})", e.id, mode_name(mode))));
            body.push(Block::Figure {
                file,
                svg,
                caption: caption(e, mode),
            });
            body.push(values_table(e, results, mode));
            if e.id == crate::figures::field::ID {
                // The completion field's ranked table (issue 40 item 5).
                body.extend(crate::figures::field::blocks(e, results, mode));
            }
            let mut rows = Vec::new();
            let mut counts = [0usize; 5];
            for c in claims.iter().filter(|c| c.experiment == e.id) {
                let k = c.check_in(source);
                tally.add_checked(c, &k);
                if k.basis.as_str() == "independent" {
                    counts[Verdict::ALL
                        .iter()
                        .position(|v| *v == k.verdict)
                        .unwrap_or(4)] += 1;
                }
                rows.push(claim_row(c, &k));
                verdicts.push(claim_json(c, &k, e.id, mode.as_str()));
            }
            if !rows.is_empty() {
                body.push(Block::Table {
                    head: CLAIM_HEAD.map(String::from).to_vec(),
                    rows,
                });
            }
            // Linked to the experiment's section (its title is unique, so
            // its anchor takes no suffix).
            summary_rows.push(vec![
                format!("[{}](#{})", e.id, doc::slug(e.title)),
                mode.as_str().to_string(),
                format!("{} of {}", counts[0], counts[..4].iter().sum::<usize>()),
                counts[1].to_string(),
                (counts[2] + counts[3]).to_string(),
            ]);
        }
        for w in &e.workloads {
            body.push(Block::Code {
                title: format!("workload: {}.fio", w.name),
                text: w.text.to_string(),
            });
        }
    }
    // The report opens with the independent count (issue 23).
    blocks.insert(1, Block::Para(format!("**{}.**", tally.headline())));
    blocks.push(Block::Heading(2, "Verdicts by paper and basis".into()));
    blocks.push(tally_table(&tally));
    blocks.push(Block::Heading(
        2,
        "Verdicts by experiment (independent claims)".into(),
    ));
    blocks.push(Block::Table {
        head: [
            "experiment",
            "mode",
            "independent claims holding",
            "more holding qualitatively",
            "misses (far off or not holding)",
        ]
        .map(String::from)
        .to_vec(),
        rows: summary_rows,
    });
    blocks.push(Block::Heading(2, "Exceptions to the rule".into()));
    blocks.push(Block::Para(format!(
        "{} claim(s) carry a band other than the rule's, each with the paper's reason.",
        exceptions.len()
    )));
    if !exceptions.is_empty() {
        blocks.push(Block::Table {
            head: ["experiment", "claim", "kind", "band", "why"]
                .map(String::from)
                .to_vec(),
            rows: exceptions,
        });
    }
    // Every figure's conclusion (issue 36 item 4): its table before the
    // experiments, its headline after the claims'.
    let conclusions = crate::conclusions::section(experiments, results, &ctx.plan.modes)
        .map_err(ReproError::Claims)?;
    blocks.insert(2, Block::Para(format!("**{}.**", conclusions.headline)));
    blocks.extend(conclusions.blocks);
    tally.conclusions = conclusions.headline.clone();
    blocks.extend(body);
    // What made the report (issue 42 item 1): the seeds are 1..=n per
    // mode (`run::execute`).
    let seeds: Vec<u64> =
        (1..=u64::from(ctx.plan.sim_seeds.max(ctx.plan.emu_reps).max(1))).collect();
    let made_by = report::made_by::current(&seeds);
    blocks.push(Block::Heading(2, "Made by".into()));
    blocks.push(Block::Table {
        head: vec!["what".into(), "value".into()],
        rows: made_by
            .rows()
            .into_iter()
            .map(|(k, v)| vec![k, v])
            .collect(),
    });
    atomic(&out.join("report.md"), &doc::markdown(&blocks))?;
    atomic(
        &out.join("report.html"),
        &doc::html("cinterrupts reproduce", &blocks),
    )?;
    let summary = json!({
        "command": ctx.command,
        "modes": ctx.plan.modes.iter().map(|m| m.as_str()).collect::<Vec<_>>(),
        "sim_runtime_ns": ctx.plan.sim_runtime,
        "sim_seeds": ctx.plan.sim_seeds,
        "emu_runtime_ns": ctx.plan.emu_runtime,
        "emu_reps": ctx.plan.emu_reps,
        "wall_secs": ctx.wall_secs,
        "made_by": made_by,
        "headline": tally.headline(),
        "counts": counts_json(&tally),
        "conclusions_headline": conclusions.headline,
        "conclusions": conclusions.json,
        "claims": verdicts,
        "provenance": experiments.iter().map(|e| json!({
            "experiment": e.id,
            "reproduces": e.provenance.source.describe(),
            "params": e.provenance.params.iter().map(|p| json!({
                "name": p.name, "value": p.value, "source": p.origin.describe(),
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    });
    atomic(
        &out.join("summary.json"),
        &serde_json::to_string_pretty(&summary).unwrap_or_default(),
    )?;
    Ok(tally)
}

/// The claim table's columns, in the report and the app report.
pub const CLAIM_HEAD: [&str; 8] = [
    "claim", "source", "paper", "kind", "ours", "band", "basis", "verdict",
];

/// A claimed effect (not "equal", not a value) missed with its run and
/// baseline identical in every seed: no mechanism of the model separates
/// them.
pub fn identical_miss(c: &Claim, k: &Checked) -> bool {
    k.identical && c.kind.sense().is_some() && k.verdict != Verdict::Holds
}

/// What the report says of an identical-run miss.
pub const IDENTICAL_MISS: &str = "identical runs: the model lacks the mechanism";

/// One claim's row: its kind and band from the rule, its basis.
pub fn claim_row(c: &Claim, k: &Checked) -> Vec<String> {
    let mut ours = match k.ours {
        Some(v) if v.is_finite() => fmt_number(v),
        _ => k.ours_json().as_str().unwrap_or("-").to_string(),
    };
    if identical_miss(c, k) {
        ours = format!("{ours} ({IDENTICAL_MISS})");
    } else if k.identical {
        // An equality that holds only because nothing in the model
        // separates the runs: said, so that a reader weighs it.
        ours = format!("{ours} (identical runs)");
    }
    let spread = if k.spread > 0.0 {
        format!(" ± {}", fmt_number(k.spread))
    } else {
        String::new()
    };
    let basis = match k.basis.detail() {
        "" => k.basis.as_str().to_string(),
        d => format!("{}: {d}", k.basis.as_str()),
    };
    let band = match (&c.exception, k.qualitative) {
        (Some(_), _) => format!("{} (exception)", k.band),
        (None, Some(q)) => format!("{}; qualitatively {q}", k.band),
        (None, None) => k.band.to_string(),
    };
    vec![
        c.claim.clone(),
        c.source.clone(),
        c.paper.clone(),
        c.kind_text(),
        format!("{ours}{spread} (`{}`)", c.formula()),
        band,
        basis,
        k.verdict.as_str().to_string(),
    ]
}

/// One claim in `summary.json`: no `null` figures (issue 23 item 2).
pub fn claim_json(c: &Claim, k: &Checked, experiment: &str, mode: &str) -> serde_json::Value {
    json!({
        "experiment": experiment, "mode": mode, "paper_name": c.paper_name(),
        "claim": c.claim, "source": c.source, "paper": c.paper, "formula": c.formula(),
        "kind": c.kind.name(), "kind_text": c.kind_text(),
        "ours": k.ours_json(), "spread": k.spread,
        "band": k.band.to_string(),
        "qualitative_band": k.qualitative.map_or_else(|| "none".to_string(), |q| q.to_string()),
        "tolerance_reason": c.exception.as_ref().map_or("", |(_, why)| why.as_str()),
        "basis": k.basis.as_str(), "basis_detail": k.basis.detail(),
        "identical_runs": k.identical,
        "verdict": k.verdict.as_str(),
    })
}

/// The counts by paper and basis as a table.
pub fn tally_table(t: &Tally) -> Block {
    let mut rows: Vec<Vec<String>> =
        t.by.iter()
            .map(|((paper, basis), c)| {
                let mut r = vec![paper.clone(), basis.clone()];
                r.extend(c.iter().map(usize::to_string));
                r
            })
            .collect();
    for b in crate::claims::Basis::ALL {
        let c = t.counts(Some(b));
        if c.iter().sum::<usize>() > 0 {
            let mut r = vec!["all papers".to_string(), b.to_string()];
            r.extend(c.iter().map(usize::to_string));
            rows.push(r);
        }
    }
    let mut head = vec!["paper".to_string(), "basis".to_string()];
    head.extend(Verdict::ALL.iter().map(|v| v.as_str().to_string()));
    Block::Table { head, rows }
}

/// The counts by paper and basis for `summary.json`.
pub fn counts_json(t: &Tally) -> serde_json::Value {
    let one = |c: [usize; 5]| {
        let mut m = serde_json::Map::new();
        for (v, n) in Verdict::ALL.iter().zip(c) {
            m.insert(v.as_str().to_string(), json!(n));
        }
        serde_json::Value::Object(m)
    };
    let mut by_basis = serde_json::Map::new();
    for b in crate::claims::Basis::ALL {
        by_basis.insert(b.to_string(), one(t.counts(Some(b))));
    }
    json!({
        "all": one(t.counts(None)),
        "by_basis": by_basis,
        "by_paper_and_basis": t.by.iter().map(|((p, b), c)| json!({
            "paper": p, "basis": b, "verdicts": one(*c),
        })).collect::<Vec<_>>(),
    })
}

/// Every run's value for every panel's metric (mean +- sd over seeds).
fn values_table(e: &Experiment, results: &Results, mode: Mode) -> Block {
    let mut head = vec!["run".to_string()];
    head.extend(e.panels.iter().map(|p| p.title.to_string()));
    let rows = e
        .runs
        .iter()
        .map(|r| {
            let mut row = vec![r.key.clone()];
            for p in &e.panels {
                let cell = if p.shows(&r.group) {
                    results.stat(e.id, &r.key, mode, &p.metric)
                } else {
                    None
                };
                row.push(match cell {
                    Some(s) if s.n > 1 => format!("{} ± {}", fmt_number(s.mean), fmt_number(s.sd)),
                    Some(s) => fmt_number(s.mean),
                    None => "-".into(),
                });
            }
            row
        })
        .collect();
    Block::Table { head, rows }
}

fn caption(e: &Experiment, mode: Mode) -> String {
    let relative: Vec<&str> = e
        .panels
        .iter()
        .filter_map(|p| match p.kind {
            crate::experiment::PanelKind::Bars { relative_to } => Some(relative_to),
            _ => None,
        })
        .collect();
    let base = match relative.first() {
        Some(r) => format!(
            "{} [{}]; bar labels are relative to {r}",
            e.title,
            mode.as_str()
        ),
        None => format!("{} [{}]", e.title, mode.as_str()),
    };
    // Issue 36 item 8: what the error bars and the black marks are.
    let paper = if e.panels.iter().any(|p| !p.paper.is_empty()) {
        "; a black mark is the paper's value (a ratio drawn on our reference bar)"
    } else {
        ""
    };
    format!("{base}; error bars: one standard deviation across seeds{paper}")
}

fn fmt_number(v: f64) -> String {
    let a = v.abs();
    if a >= 10_000.0 {
        format!("{:.0}", v)
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn mode_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Sim => "simulator: the paper's Optane/P3700 profiles on its 2.0 GHz Xeon",
        Mode::Emu => "emulator: real threads on this machine, null device",
    }
}

fn modes_text(plan: &Plan) -> String {
    plan.modes
        .iter()
        .map(|m| match m {
            Mode::Sim => format!(
                "Simulator: {} of virtual time per run, {} seed(s) averaged.",
                policy::format_nanos(plan.sim_runtime),
                plan.sim_seeds
            ),
            Mode::Emu => format!(
                "Emulator: {} per run, {} repetition(s), the device the profile's own (its units, ceilings and service-time draws, as in the simulator).",
                policy::format_nanos(plan.emu_runtime),
                plan.emu_reps,
            ),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The experiment's provenance as a table: what it reproduces, then every
/// parameter with its source.
fn provenance_table(p: &crate::provenance::Provenance) -> Block {
    let mut rows = vec![vec![
        "reproduces".to_string(),
        String::new(),
        p.source.describe(),
    ]];
    rows.extend(
        p.params
            .iter()
            .map(|x| vec![x.name.to_string(), x.value.clone(), x.origin.describe()]),
    );
    Block::Table {
        head: ["parameter", "value", "source"].map(String::from).to_vec(),
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_headline_counts_independent_claims_and_the_rest_apart() {
        let mut t = Tally::default();
        for _ in 0..3 {
            t.add("TOS", "independent", Verdict::Holds);
        }
        t.add("TOS", "independent", Verdict::FarOff);
        t.add("FR", "independent", Verdict::Qualitatively);
        t.add("TOS", "fitted", Verdict::Holds);
        t.add("TOS", "by construction", Verdict::Holds);
        t.add("TOS", "by construction", Verdict::DoesNotHold);
        assert_eq!(
            t.headline(),
            "3 of 5 independent claims hold (1 more qualitatively, 1 right direction but far \
             off, 0 do not); 1 of 1 fitted claims hold (a fit's targets, and the claims sharing a \
             fit's run or figure); 1 of 2 by-construction claims hold"
        );
        t.add("FR", "fitted", Verdict::NotRun);
        assert!(t.headline().ends_with("(1 not run)"));
        assert_eq!(t.holds(), 5);
    }

    #[test]
    fn quick_plans_run_less_than_full_ones() {
        let quick = crate::run::Plan::quick(vec![Mode::Sim]);
        let full = crate::run::Plan::full(vec![Mode::Sim]);
        assert_eq!((quick.sim_runtime, quick.sim_seeds), (200 * policy::MS, 3));
        assert_eq!((full.sim_seeds, full.emu_reps), (10, 3));
    }
}
