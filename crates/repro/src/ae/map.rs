//! The figure map: each paper figure and table the run covers (`F1`,
//! `F2`, ... in the paper's order, as `reproduce` runs them), the command
//! that reruns it alone, its output files, its claims and their verdicts,
//! read from the `summary.json` of the run the bundle is made from; and
//! the check `kick-the-tires.sh` makes of a rerun against it.

use serde_json::{json, Value};

use crate::ReproError;

/// One claim's stored verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    pub claim: String,
    pub source: String,
    pub verdict: String,
}

/// One figure or table of the map.
#[derive(Clone, Debug)]
pub struct Figure {
    /// `F1`, `F2`, ...
    pub figure: String,
    pub experiment: String,
    pub title: String,
    pub claims: Vec<Value>,
}

impl Figure {
    /// The command that reruns it, from the unpacked bundle.
    pub fn command(&self) -> String {
        format!(
            "cinterrupts reproduce --quick --only {e} --out out/{e}",
            e = self.experiment
        )
    }

    /// What that command writes (`crate::write`'s names).
    pub fn outputs(&self) -> Vec<String> {
        let e = &self.experiment;
        vec![
            format!("out/{e}/figures/{e}-sim.svg"),
            format!("out/{e}/report.md"),
            format!("out/{e}/report.html"),
            format!("out/{e}/summary.json"),
            format!("out/{e}/runs/sim/{e}/"),
        ]
    }

    fn verdicts(&self) -> Vec<Verdict> {
        verdicts_of(&self.claims)
    }
}

fn text(v: &Value, key: &str) -> String {
    v[key].as_str().unwrap_or("").to_string()
}

fn verdicts_of(claims: &[Value]) -> Vec<Verdict> {
    claims
        .iter()
        .map(|c| Verdict {
            claim: text(c, "claim"),
            source: text(c, "source"),
            verdict: text(c, "verdict"),
        })
        .collect()
}

fn bad(file: &str, what: impl std::fmt::Display) -> ReproError {
    ReproError::Write {
        path: file.to_string(),
        reason: what.to_string(),
    }
}

/// The figures of a `--quick` simulator run's `summary.json` (`file`
/// names it in errors): its experiments in the order it ran them, each
/// with its claims as the summary has them.
pub fn figures(summary: &Value, file: &str) -> Result<Vec<Figure>, ReproError> {
    let experiments = summary["provenance"]
        .as_array()
        .ok_or_else(|| bad(file, "no `provenance` list of experiments"))?;
    let claims = summary["claims"]
        .as_array()
        .ok_or_else(|| bad(file, "no `claims` list"))?;
    let all = crate::figures::all();
    experiments
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let id = p["experiment"]
                .as_str()
                .ok_or_else(|| bad(file, format!("provenance[{i}]: no `experiment`")))?;
            let title = all
                .iter()
                .find(|e| e.id == id)
                .map_or(id, |e| e.title)
                .to_string();
            Ok(Figure {
                figure: format!("F{}", i + 1),
                experiment: id.to_string(),
                title,
                claims: claims
                    .iter()
                    .filter(|c| c["experiment"] == id)
                    .cloned()
                    .collect(),
            })
        })
        .collect()
}

/// The plan a check compares: a rerun at another runtime or seed count
/// is another experiment.
fn plan(summary: &Value) -> Value {
    json!({
        "modes": summary["modes"],
        "sim_runtime_ns": summary["sim_runtime_ns"],
        "sim_seeds": summary["sim_seeds"],
    })
}

/// `figures.json`: the run it is made from, then each figure.
pub fn json(summary: &Value, figures: &[Figure]) -> Value {
    json!({
        "made_from": {
            "command": summary["command"],
            "plan": plan(summary),
            "wall_secs": summary["wall_secs"],
            "headline": summary["headline"],
            "summary": "results/summary.json",
        },
        "figures": figures.iter().map(|f| json!({
            "figure": f.figure,
            "experiment": f.experiment,
            "title": f.title,
            "command": f.command(),
            "outputs": f.outputs(),
            "claims": f.claims.iter().map(|c| json!({
                "claim": c["claim"], "source": c["source"], "paper": c["paper"],
                "ours": c["ours"], "band": c["band"], "basis": c["basis"],
                "verdict": c["verdict"],
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

/// `FIGURES.md`: the same, to read.
pub fn markdown(figures: &[Figure]) -> String {
    let mut s = String::from(
        "# The figure map\n\n\
         Each paper figure and table the reproduction covers, the command that reruns it \
         alone (from the unpacked bundle, with the binary built by `kick-the-tires.sh`), the \
         files it writes, and its claims with the verdicts of the run this bundle was made \
         from (`results/summary.json`; the same in `figures.json`). `kick-the-tires.sh` \
         reruns each and prints `F<n> <experiment>: OK` when every verdict is the stored one.\n",
    );
    for f in figures {
        s += &format!(
            "\n## {} `{}`: {}\n\n    {}\n\nOutputs: {}.\n\n",
            f.figure,
            f.experiment,
            f.title,
            f.command(),
            f.outputs()
                .iter()
                .map(|o| format!("`{o}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        if f.claims.is_empty() {
            s += "No claims: drawn, not checked.\n";
            continue;
        }
        s += "| claim | source | paper | ours | band | basis | verdict |\n|---|---|---|---|---|---|---|\n";
        for c in &f.claims {
            let cell = |k: &str| match &c[k] {
                Value::String(t) => t.replace('|', "\\|"),
                Value::Null => String::new(),
                v => v.to_string(),
            };
            s += &format!(
                "| {} | {} | {} | {} | {} | {} | {} |\n",
                cell("claim"),
                cell("source"),
                cell("paper"),
                cell("ours"),
                cell("band"),
                cell("basis"),
                cell("verdict")
            );
        }
    }
    s
}

/// One figure's check: `F3 fig10: OK`, or `FAIL (claim, stored, now)` for
/// each claim whose verdict moved (or that is in one run only).
pub fn check_figure(figure: &str, experiment: &str, stored: &[Verdict], now: &[Verdict]) -> String {
    let mut diffs = Vec::new();
    let key = |v: &Verdict| format!("\"{}\" ({})", v.claim, v.source);
    // Claims paired by text and source, in order (a text may repeat).
    let mut left: Vec<Option<&Verdict>> = now.iter().map(Some).collect();
    for s in stored {
        let found = left
            .iter_mut()
            .find(|n| n.is_some_and(|n| n.claim == s.claim && n.source == s.source))
            .and_then(Option::take);
        match found {
            Some(n) if n.verdict == s.verdict => {}
            Some(n) => diffs.push(format!(
                "{}, stored {}, now {}",
                key(s),
                s.verdict,
                n.verdict
            )),
            None => diffs.push(format!("{}, stored {}, now absent", key(s), s.verdict)),
        }
    }
    for n in left.into_iter().flatten() {
        diffs.push(format!("{}, stored absent, now {}", key(n), n.verdict));
    }
    if diffs.is_empty() {
        format!("{figure} {experiment}: OK")
    } else {
        format!("{figure} {experiment}: FAIL ({})", diffs.join("; "))
    }
}

/// A rerun's `summary.json` against the bundle's `figures.json`: a line
/// per experiment the rerun holds, and how many failed. The plan must be
/// the stored one.
pub fn check(
    map: &Value,
    map_file: &str,
    summary: &Value,
    summary_file: &str,
) -> Result<(Vec<String>, usize), ReproError> {
    let stored_plan = &map["made_from"]["plan"];
    if stored_plan.is_null() {
        return Err(bad(
            map_file,
            "no `made_from.plan`: not a bundle's figures.json",
        ));
    }
    if *stored_plan != plan(summary) {
        return Err(bad(
            summary_file,
            format!(
                "run with plan {}, the bundle's verdicts are of {stored_plan}: rerun with \
                 `reproduce --quick` alone",
                plan(summary)
            ),
        ));
    }
    let map_figures = map["figures"]
        .as_array()
        .ok_or_else(|| bad(map_file, "no `figures` list"))?;
    let mut lines = Vec::new();
    let mut failed = 0;
    for now in figures(summary, summary_file)? {
        let Some(stored) = map_figures
            .iter()
            .find(|f| f["experiment"] == now.experiment.as_str())
        else {
            return Err(bad(
                map_file,
                format!("no figure for experiment '{}'", now.experiment),
            ));
        };
        let stored_claims = stored["claims"].as_array().cloned().unwrap_or_default();
        let line = check_figure(
            stored["figure"].as_str().unwrap_or("F?"),
            &now.experiment,
            &verdicts_of(&stored_claims),
            &now.verdicts(),
        );
        if !line.ends_with(": OK") {
            failed += 1;
        }
        lines.push(line);
    }
    Ok((lines, failed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(claim: &str, verdict: &str) -> Verdict {
        Verdict {
            claim: claim.into(),
            source: "TOS 5.1".into(),
            verdict: verdict.into(),
        }
    }

    #[test]
    fn a_figure_whose_verdicts_are_the_stored_ones_is_ok() {
        let s = [v("a", "holds"), v("b", "does not hold")];
        assert_eq!(check_figure("F2", "fig10", &s, &s), "F2 fig10: OK");
    }

    #[test]
    fn a_moved_verdict_names_the_claim_and_both_verdicts() {
        let stored = [v("a", "holds"), v("b", "does not hold")];
        let now = [v("a", "holds qualitatively"), v("b", "does not hold")];
        assert_eq!(
            check_figure("F2", "fig10", &stored, &now),
            "F2 fig10: FAIL (\"a\" (TOS 5.1), stored holds, now holds qualitatively)"
        );
    }

    #[test]
    fn a_claim_in_one_run_only_fails_both_ways() {
        let stored = [v("a", "holds")];
        let now = [v("b", "holds")];
        let line = check_figure("F1", "fig8", &stored, &now);
        assert!(
            line.contains("\"a\" (TOS 5.1), stored holds, now absent"),
            "{line}"
        );
        assert!(
            line.contains("\"b\" (TOS 5.1), stored absent, now holds"),
            "{line}"
        );
    }

    fn summary(verdict: &str, seeds: u32) -> Value {
        json!({
            "command": "cinterrupts reproduce --quick", "modes": ["sim"],
            "sim_runtime_ns": 200_000_000u64, "sim_seeds": seeds, "wall_secs": 1.0,
            "headline": "h",
            "provenance": [{"experiment": "fig8"}, {"experiment": "fig10"}],
            "claims": [
                {"experiment": "fig8", "claim": "a", "source": "s", "verdict": "holds"},
                {"experiment": "fig10", "claim": "b", "source": "s", "verdict": verdict},
            ],
        })
    }

    #[test]
    fn the_map_numbers_figures_in_run_order_and_a_rerun_is_checked_against_it() {
        let made = summary("holds", 3);
        let figs = figures(&made, "summary.json").unwrap();
        assert_eq!(
            figs.iter().map(|f| f.figure.as_str()).collect::<Vec<_>>(),
            ["F1", "F2"]
        );
        assert_eq!(
            figs[1].command(),
            "cinterrupts reproduce --quick --only fig10 --out out/fig10"
        );
        let map = json(&made, &figs);
        let (lines, failed) = check(&map, "figures.json", &made, "summary.json").unwrap();
        assert_eq!(
            (lines, failed),
            (vec!["F1 fig8: OK".into(), "F2 fig10: OK".into()], 0)
        );
        let moved = summary("does not hold", 3);
        let (lines, failed) = check(&map, "figures.json", &moved, "summary.json").unwrap();
        assert_eq!(failed, 1);
        assert_eq!(
            lines[1],
            "F2 fig10: FAIL (\"b\" (s), stored holds, now does not hold)"
        );
    }

    #[test]
    fn a_rerun_with_another_plan_is_refused_not_compared() {
        let made = summary("holds", 3);
        let map = json(&made, &figures(&made, "summary.json").unwrap());
        let err = check(
            &map,
            "figures.json",
            &summary("holds", 5),
            "out/summary.json",
        )
        .unwrap_err()
        .to_string();
        assert!(err.starts_with("out/summary.json: run with plan"), "{err}");
        assert!(!err.contains('\n'), "{err}");
    }
}
