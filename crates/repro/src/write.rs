//! Writes the report: `report.md`, `report.html`, `figures/*.svg`,
//! `runs/MODE/EXPERIMENT/RUN.seedN.json` and `summary.json`, into the
//! staging directory that replaces the report whole ([`crate::staging`]).

use std::path::{Path, PathBuf};

use report::Mode;
use serde_json::json;

use crate::claims::{Claim, Verdict};
use crate::doc::{self, Block};
use crate::experiment::Experiment;
use crate::plot;
use crate::run::{Outcome, Plan, Results};
use crate::ReproError;

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

/// Counts of verdicts, for the summary line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub holds: usize,
    /// Outside the tolerance but in the paper's direction.
    pub qualitatively: usize,
    pub fails: usize,
    pub not_run: usize,
}

impl std::fmt::Display for Tally {
    /// `42 claims hold, 9 more qualitatively, 12 do not (3 not run)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} claims hold, {} more qualitatively, {} do not",
            self.holds, self.qualitatively, self.fails
        )?;
        if self.not_run > 0 {
            write!(f, " ({} not run)", self.not_run)?;
        }
        Ok(())
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
        "Tolerances are set from the paper's numbers, not ours: a ratio holds within a factor of \
         1.5 of the paper's, on the same side of 1; \"equal\" is 0.9..1.1 (0.95..1.05 for latencies \
         the paper calls equal); an added timeout within 1 us at 6 us, 2 us at 15-20 us, 5 us at 100 us; \
         a direction only is a bound at 1. A claim with a number whose figure misses the \
         tolerance but keeps the paper's direction \"holds qualitatively\". The claims are data: `crates/repro/claims.toml`."
            .into(),
    ));
    let mut tally = Tally::default();
    let mut summary_rows = Vec::new();
    let mut verdicts = Vec::new();
    let mut body = Vec::new();
    for e in experiments {
        body.push(Block::Heading(2, e.title.to_string()));
        body.push(Block::Para(e.paper.to_string()));
        body.push(provenance_table(&e.provenance));
        for &mode in &ctx.plan.modes {
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
            let mut rows = Vec::new();
            let (mut held, mut partly, mut checked) = (0, 0, 0);
            for c in claims.iter().filter(|c| c.experiment == e.id) {
                let k = c.check(results, mode);
                match k.verdict {
                    Verdict::Holds => {
                        tally.holds += 1;
                        held += 1;
                        checked += 1;
                    }
                    Verdict::Qualitatively => {
                        tally.qualitatively += 1;
                        partly += 1;
                        checked += 1;
                    }
                    Verdict::DoesNotHold => {
                        tally.fails += 1;
                        checked += 1;
                    }
                    Verdict::NotRun => tally.not_run += 1,
                }
                let ours = k.ours.map(fmt_number).unwrap_or_else(|| "-".into());
                rows.push(vec![
                    c.claim.clone(),
                    c.source.clone(),
                    c.paper.clone(),
                    format!("{ours} (`{}`)", c.formula()),
                    c.holds_if.to_string(),
                    k.verdict.as_str().to_string(),
                ]);
                verdicts.push(json!({
                    "experiment": e.id, "mode": mode.as_str(), "claim": c.claim, "source": c.source,
                    "paper": c.paper, "formula": c.formula(), "ours": k.ours,
                    "holds_if": c.holds_if.to_string(), "verdict": k.verdict.as_str(),
                }));
            }
            if !rows.is_empty() {
                body.push(Block::Table {
                    head: ["claim", "source", "paper", "ours", "holds if", "verdict"]
                        .map(String::from)
                        .to_vec(),
                    rows,
                });
            }
            summary_rows.push(vec![
                e.id.to_string(),
                mode.as_str().to_string(),
                format!("{held} of {checked}"),
                partly.to_string(),
            ]);
        }
        for w in &e.workloads {
            body.push(Block::Code {
                title: format!("workload: {}.fio", w.name),
                text: w.text.to_string(),
            });
        }
    }
    blocks.push(Block::Para(format!(
        "**{} claims hold, {} more hold qualitatively (the paper's direction, not its number), {} do not**{}.",
        tally.holds,
        tally.qualitatively,
        tally.fails,
        if tally.not_run > 0 { format!(" ({} not run)", tally.not_run) } else { String::new() }
    )));
    blocks.push(Block::Table {
        head: [
            "experiment",
            "mode",
            "claims holding",
            "more holding qualitatively",
        ]
        .map(String::from)
        .to_vec(),
        rows: summary_rows,
    });
    blocks.extend(body);
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
        "holds": tally.holds, "holds_qualitatively": tally.qualitatively, "does_not_hold": tally.fails, "not_run": tally.not_run,
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
    match relative.first() {
        Some(r) => format!(
            "{} [{}]; bar labels are relative to {r}",
            e.title,
            mode.as_str()
        ),
        None => format!("{} [{}]", e.title, mode.as_str()),
    }
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
                "Emulator: {} per run, {} repetition(s), the device as `{}` (Optane) and `{}` (P3700).",
                policy::format_nanos(plan.emu_runtime),
                plan.emu_reps,
                crate::run::emu_backend("optane"),
                crate::run::emu_backend("p3700")
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
    fn a_tally_reads_as_one_line_and_names_runs_not_made() {
        let mut t = Tally {
            holds: 42,
            qualitatively: 9,
            fails: 12,
            not_run: 0,
        };
        assert_eq!(
            t.to_string(),
            "42 claims hold, 9 more qualitatively, 12 do not"
        );
        t.not_run = 3;
        assert!(t.to_string().ends_with("12 do not (3 not run)"));
    }

    #[test]
    fn quick_plans_run_less_than_full_ones() {
        let quick = crate::run::Plan::quick(vec![Mode::Sim]);
        let full = crate::run::Plan::full(vec![Mode::Sim]);
        assert_eq!((quick.sim_runtime, quick.sim_seeds), (200 * policy::MS, 3));
        assert_eq!((full.sim_seeds, full.emu_reps), (10, 3));
    }
}
