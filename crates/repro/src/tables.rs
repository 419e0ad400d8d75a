//! Verdict tables in the project's Markdown, generated from a run's
//! `summary.json` (issue 36 item 6): a table a person typed goes stale the
//! moment a band, a basis or the model changes; a generated one is
//! rewritten from the run, and `tests/tables.rs` fails when a committed one
//! differs from what a run gives.
//!
//! A generated table sits between two markers, the first naming the run
//! that makes it and what to draw:
//!
//! ```text
//! <!-- generated: reproduce --quick --only fr-fig12,fr-fig14 ; table=verdicts -->
//! | experiment | claim | paper | ours | band | basis | verdict |
//! ...
//! <!-- end generated -->
//! ```
//!
//! `table=verdicts` is one row per claim (the simulator's, in the claims
//! file's order); `table=counts` one row per experiment with the verdicts
//! counted by basis; `table=headline` the headline of the named
//! experiments: independent claims by verdict (with the shares holding and
//! in the paper's direction), fitted and by-construction holds, and the
//! figures whose conclusions reproduce. `--only all` names every
//! experiment `reproduce` has. Only `reproduce --quick` runs are named: they take
//! seconds and are deterministic per seed, so a test can rerun them.
//! `cinterrupts reproduce --quick --update-docs --out DIR` runs every
//! experiment the blocks name and rewrites them in place.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The Markdown files that hold generated tables, from the workspace root.
/// `tests/tables.rs` checks that no other Markdown file holds a block and
/// that none holds a verdict table outside one.
pub const DOCS: &[&str] = &["crates/repro/README.md"];

const START: &str = "<!-- generated:";
const END: &str = "<!-- end generated -->";

/// What a block draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    /// One row per claim: experiment, claim, paper, ours, band, basis,
    /// verdict.
    Verdicts,
    /// One row per experiment: its claims' verdicts counted by basis.
    Counts,
    /// The headline of the experiments: claims by basis and verdict, and
    /// the figures' conclusions.
    Headline,
}

/// One generated block of a Markdown file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// The start marker's line, 1-based.
    pub line: usize,
    /// The experiments its run names (`--only`), in that order.
    pub only: Vec<String>,
    pub table: Table,
    /// The lines between the markers (0-based, end exclusive).
    body: std::ops::Range<usize>,
}

/// A committed table that differs from the run's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// 1-based line of the first differing row in the file.
    pub line: usize,
    pub committed: String,
    pub generated: String,
}

/// The blocks of `text`, or one line saying what is wrong with a marker
/// (`LINE: ...`).
pub fn blocks(text: &str) -> Result<Vec<Block>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i].trim();
        if l == END {
            return Err(format!("line {}: '{END}' without a start marker", i + 1));
        }
        if let Some(spec) = l.strip_prefix(START) {
            let spec = spec
                .strip_suffix("-->")
                .ok_or_else(|| format!("line {}: a start marker ends with '-->'", i + 1))?;
            let (only, table) = parse_spec(spec).map_err(|e| format!("line {}: {e}", i + 1))?;
            let end = (i + 1..lines.len())
                .find(|&j| lines[j].trim() == END || lines[j].trim().starts_with(START))
                .filter(|&j| lines[j].trim() == END)
                .ok_or_else(|| format!("line {}: no '{END}' before the next block", i + 1))?;
            out.push(Block {
                line: i + 1,
                only,
                table,
                body: i + 1..end,
            });
            i = end + 1;
            continue;
        }
        i += 1;
    }
    Ok(out)
}

/// `reproduce --quick --only a,b ; table=verdicts`.
fn parse_spec(spec: &str) -> Result<(Vec<String>, Table), String> {
    let mut parts = spec.split(';').map(str::trim);
    let command: Vec<&str> = parts.next().unwrap_or("").split_whitespace().collect();
    let want =
        "a block names 'reproduce --quick --only EXP,...' (a run a test can repeat in seconds)";
    let only = match command.as_slice() {
        ["reproduce", "--quick", "--only", "all"] => crate::select(&[])
            .map_err(|e| e.to_string())?
            .iter()
            .map(|e| e.id.to_string())
            .collect(),
        ["reproduce", "--quick", "--only", list] => list
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect::<Vec<_>>(),
        _ => return Err(format!("{want}, not '{}'", command.join(" "))),
    };
    if only.is_empty() {
        return Err(format!("{want}: --only names no experiment"));
    }
    let mut table = None;
    for p in parts.filter(|p| !p.is_empty()) {
        match p.split_once('=').map(|(k, v)| (k.trim(), v.trim())) {
            Some(("table", "verdicts")) => table = Some(Table::Verdicts),
            Some(("table", "counts")) => table = Some(Table::Counts),
            Some(("table", "headline")) => table = Some(Table::Headline),
            _ => {
                return Err(format!(
                    "unknown '{p}' (have: table=verdicts, table=counts, table=headline)"
                ))
            }
        }
    }
    let table = table
        .ok_or("a block says what it draws: table=verdicts, table=counts or table=headline")?;
    Ok((only, table))
}

/// The simulator's claims of `only`'s experiments in `summary`, in the
/// summary's order; an error names an experiment the run did not make.
fn claims_of<'a>(summary: &'a Value, only: &[String]) -> Result<Vec<&'a Value>, String> {
    let all = summary["claims"]
        .as_array()
        .ok_or("the summary has no 'claims' list")?;
    let sim = |c: &&Value| c["mode"].as_str() == Some("sim");
    for e in only {
        let ran = summary["provenance"]
            .as_array()
            .is_some_and(|p| p.iter().any(|x| x["experiment"].as_str() == Some(e)));
        if !ran {
            return Err(format!("the run has no experiment '{e}'"));
        }
    }
    Ok(all
        .iter()
        .filter(sim)
        .filter(|c| only.iter().any(|e| c["experiment"].as_str() == Some(e)))
        .collect())
}

/// The table a block draws from `summary`, one line per row.
pub fn render(table: Table, only: &[String], summary: &Value) -> Result<Vec<String>, String> {
    let claims = claims_of(summary, only)?;
    let s = |c: &Value, k: &str| cell(c[k].as_str().unwrap_or("-"));
    Ok(match table {
        Table::Verdicts => {
            let mut rows = vec![
                "| experiment | claim | paper | ours | band | basis | verdict |".to_string(),
                "|---|---|---|---|---|---|---|".to_string(),
            ];
            rows.extend(claims.iter().map(|c| {
                format!(
                    "| {} | {} | {} | {} | {} | {} | {} |",
                    s(c, "experiment"),
                    s(c, "claim"),
                    s(c, "paper"),
                    ours(c),
                    s(c, "band"),
                    s(c, "basis"),
                    s(c, "verdict"),
                )
            }));
            rows
        }
        Table::Counts => {
            let mut rows = vec![
                "| experiment | independent: holds / qualitatively / far off / does not | fitted: holds of | by construction: holds of |".to_string(),
                "|---|---|---|---|".to_string(),
            ];
            let mut total = Counts::default();
            for e in only {
                let mut n = Counts::default();
                for c in claims
                    .iter()
                    .filter(|c| c["experiment"].as_str() == Some(e))
                {
                    n.add(c);
                    total.add(c);
                }
                rows.push(n.row(e));
            }
            if only.len() > 1 {
                rows.push(total.row(&format!("all {}", only.len())));
            }
            rows
        }
        Table::Headline => {
            let mut n = Counts::default();
            claims.iter().for_each(|c| n.add(c));
            let [h, q, f, d] = n.independent;
            let all = h + q + f + d;
            let share = |k: usize| {
                if all == 0 {
                    "-".to_string()
                } else {
                    format!("{:.0}%", 100.0 * k as f64 / all as f64)
                }
            };
            let (figures, agree, orderings) = conclusions_of(summary, only);
            vec![
                "| claims and conclusions | reproduce --quick |".to_string(),
                "|---|---|".to_string(),
                format!(
                    "| independent claims | {h} of {all} hold ({}); {q} more qualitatively, {f} in the right direction but far off, {d} do not: {} of {all} ({}) in the paper's direction |",
                    share(h),
                    h + q + f,
                    share(h + q + f)
                ),
                format!("| fitted claims | {} of {} hold |", n.fitted.0, n.fitted.1),
                format!(
                    "| by-construction claims | {} of {} hold |",
                    n.construction.0, n.construction.1
                ),
                format!(
                    "| figures' conclusions (the papers' orders, simulator) | {} of {} reproduced ({} of {} orderings agree) |",
                    figures.0, figures.1, agree, orderings
                ),
            ]
        }
    })
}

/// The papers' conclusions (`conclusions.toml`, basis `paper`) of `only`'s
/// experiments in the simulator: (figures whose every ordering agrees,
/// figures), orderings agreeing, orderings; as the report's conclusions
/// headline counts them.
fn conclusions_of(summary: &Value, only: &[String]) -> ((usize, usize), usize, usize) {
    let rows: Vec<&Value> = summary["conclusions"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|c| c["mode"].as_str() == Some("sim"))
                .filter(|c| c["basis"].as_str() == Some("paper"))
                .filter(|c| only.iter().any(|e| c["experiment"].as_str() == Some(e)))
                .collect()
        })
        .unwrap_or_default();
    let agree = |c: &Value| c["verdict"].as_str() == Some("agree");
    let mut figures = (0, 0);
    for e in only {
        let of: Vec<&&Value> = rows
            .iter()
            .filter(|c| c["experiment"].as_str() == Some(e))
            .collect();
        if !of.is_empty() {
            figures.1 += 1;
            figures.0 += usize::from(of.iter().all(|c| agree(c)));
        }
    }
    let agreeing = rows.iter().filter(|c| agree(c)).count();
    (figures, agreeing, rows.len())
}

/// Verdicts counted by basis, as the report's headline counts them.
#[derive(Default)]
struct Counts {
    /// holds, qualitatively, far off, does not.
    independent: [usize; 4],
    /// (holds, checked) for fitted and by construction.
    fitted: (usize, usize),
    construction: (usize, usize),
}

impl Counts {
    fn add(&mut self, c: &Value) {
        let verdict = c["verdict"].as_str().unwrap_or("");
        if verdict == "not run" {
            return;
        }
        let holds = usize::from(verdict == "holds");
        match c["basis"].as_str().unwrap_or("") {
            "independent" => {
                let i = match verdict {
                    "holds" => 0,
                    "holds qualitatively" => 1,
                    "right direction, far off" => 2,
                    _ => 3,
                };
                self.independent[i] += 1;
            }
            "fitted" => self.fitted = (self.fitted.0 + holds, self.fitted.1 + 1),
            _ => self.construction = (self.construction.0 + holds, self.construction.1 + 1),
        }
    }

    fn row(&self, name: &str) -> String {
        let [h, q, f, d] = self.independent;
        format!(
            "| {name} | {h} / {q} / {f} / {d} (of {}) | {} of {} | {} of {} |",
            h + q + f + d,
            self.fitted.0,
            self.fitted.1,
            self.construction.0,
            self.construction.1
        )
    }
}

/// Our figure with its spread across seeds (4 significant digits), or the
/// summary's word for a figure that is not a number.
fn ours(c: &Value) -> String {
    match c["ours"].as_f64() {
        Some(v) => match c["spread"].as_f64() {
            Some(sd) if sd > 0.0 => format!("{} ± {}", number(v), significant(sd, 2)),
            _ => number(v),
        },
        None => cell(c["ours"].as_str().unwrap_or("-")),
    }
}

/// Four significant digits, no exponent: 0.9997, 1.000, 88,200 as 88200.
pub fn number(v: f64) -> String {
    significant(v, 4)
}

/// `n` significant digits, no exponent; whole numbers keep all theirs.
fn significant(v: f64, n: i32) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let decimals = n - 1 - v.abs().log10().floor() as i32;
    format!("{v:.*}", decimals.max(0) as usize)
}

/// A table cell: one line, its pipes escaped.
fn cell(s: &str) -> String {
    s.replace('\n', " ").replace('|', "\\|")
}

/// `text` with every block rewritten from `summary`.
pub fn update(text: &str, summary: &Value) -> Result<String, String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = Vec::new();
    let mut next = 0;
    for b in blocks(text)? {
        out.extend(lines[next..b.body.start].iter().map(|l| l.to_string()));
        out.extend(render(b.table, &b.only, summary).map_err(|e| format!("line {}: {e}", b.line))?);
        next = b.body.end;
    }
    out.extend(lines[next..].iter().map(|l| l.to_string()));
    let mut s = out.join("\n");
    if text.ends_with('\n') {
        s.push('\n');
    }
    Ok(s)
}

/// The first row where a committed block differs from what `summary`
/// gives, if any.
pub fn first_difference(text: &str, summary: &Value) -> Result<Option<Mismatch>, String> {
    let lines: Vec<&str> = text.lines().collect();
    for b in blocks(text)? {
        let want =
            render(b.table, &b.only, summary).map_err(|e| format!("line {}: {e}", b.line))?;
        let have = &lines[b.body.clone()];
        for i in 0..want.len().max(have.len()) {
            let (h, w) = (have.get(i).copied(), want.get(i).map(String::as_str));
            if h != w {
                return Ok(Some(Mismatch {
                    line: b.body.start + i + 1,
                    committed: h.unwrap_or("(the block ends)").to_string(),
                    generated: w.unwrap_or("(the block ends)").to_string(),
                }));
            }
        }
    }
    Ok(None)
}

/// The words a verdict cell or a verdict table's header holds.
const VERDICT_CELLS: &[&str] = &[
    "holds",
    "holds qualitatively",
    "right direction, far off",
    "does not hold",
    "verdict",
    "verdict before",
    "qualitatively",
    "does not",
];

/// Table rows of `text` outside its blocks that carry a verdict (a cell
/// that is one, or a header naming one): 1-based lines and the rows.
pub fn handwritten_verdict_rows(text: &str) -> Result<Vec<(usize, String)>, String> {
    let inside: Vec<std::ops::Range<usize>> = blocks(text)?.into_iter().map(|b| b.body).collect();
    Ok(text
        .lines()
        .enumerate()
        .filter(|(i, _)| !inside.iter().any(|r| r.contains(i)))
        .filter(|(_, l)| l.trim_start().starts_with('|'))
        .filter(|(_, l)| {
            l.split('|').map(str::trim).any(|c| {
                // "holds (by 1.5%)", "holds qualitatively (each)".
                let word = c.split(" (").next().unwrap_or(c);
                VERDICT_CELLS.contains(&word)
            })
        })
        .map(|(i, l)| (i + 1, l.to_string()))
        .collect())
}

/// The experiments every block of [`DOCS`] names, each once, in the
/// order first named.
pub fn experiments(root: &Path) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    for (path, text) in read_docs(root)? {
        for b in blocks(&text).map_err(|e| format!("{}: {e}", path.display()))? {
            for e in b.only {
                if !out.contains(&e) {
                    out.push(e);
                }
            }
        }
    }
    Ok(out)
}

fn read_docs(root: &Path) -> Result<Vec<(PathBuf, String)>, String> {
    DOCS.iter()
        .map(|d| {
            let path = root.join(d);
            std::fs::read_to_string(&path)
                .map(|t| (path.clone(), t))
                .map_err(|e| {
                    format!(
                        "{}: {e} (run from the workspace root, where {d} is)",
                        path.display()
                    )
                })
        })
        .collect()
}

/// `reproduce --update-docs`: rewrites [`DOCS`] under `root` from the
/// `summary.json` in `out`; the line saying which files changed.
pub fn update_docs_from(root: &Path, out: &Path) -> Result<String, String> {
    let path = out.join("summary.json");
    let text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
    let summary: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let changed = update_docs(root, &summary)?;
    Ok(format!(
        "update-docs: {} of {} files changed{}",
        changed.len(),
        DOCS.len(),
        changed
            .iter()
            .map(|p| format!(" {}", p.strip_prefix(root).unwrap_or(p).display()))
            .collect::<String>()
    ))
}

/// Rewrites every block of [`DOCS`] under `root` from `summary`; the files
/// whose text changed.
pub fn update_docs(root: &Path, summary: &Value) -> Result<Vec<PathBuf>, String> {
    let mut changed = Vec::new();
    for (path, text) in read_docs(root)? {
        let new = update(&text, summary).map_err(|e| format!("{}: {e}", path.display()))?;
        if new != text {
            report::file::write_atomically(&path, new.as_bytes())
                .map_err(|e| format!("{}: {e}", path.display()))?;
            changed.push(path);
        }
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn summary() -> Value {
        json!({
            "provenance": [{"experiment": "fig8"}, {"experiment": "fig10"}],
            "claims": [
                {"experiment": "fig8", "mode": "sim", "claim": "a | b", "paper": "1.7x",
                 "ours": 1.00004, "spread": 0.0, "band": "1.13 .. 2.55",
                 "basis": "independent", "verdict": "does not hold"},
                {"experiment": "fig8", "mode": "emu", "claim": "emu only", "paper": "1.7x",
                 "ours": 1.3, "spread": 0.0, "band": "1.13 .. 2.55",
                 "basis": "independent", "verdict": "holds"},
                {"experiment": "fig10", "mode": "sim", "claim": "c", "paper": "0.93x",
                 "ours": 0.90412, "spread": 0.0031, "band": "0.62 .. 0.98",
                 "basis": "independent", "verdict": "holds"},
                {"experiment": "fig10", "mode": "sim", "claim": "d", "paper": "15x",
                 "ours": "infinite (from 0)", "spread": 0.0, "band": "10 .. 22.5",
                 "basis": "fitted", "verdict": "does not hold"},
            ],
        })
    }

    const DOC: &str = "# t\n\ntext\n<!-- generated: reproduce --quick --only fig8,fig10 ; table=verdicts -->\n| stale |\n<!-- end generated -->\nafter\n";

    #[test]
    fn a_block_is_rewritten_from_the_run_and_nothing_else_moves() {
        let new = update(DOC, &summary()).unwrap();
        assert!(new.starts_with("# t\n\ntext\n<!-- generated:"));
        assert!(new.ends_with("<!-- end generated -->\nafter\n"));
        assert!(
            new.contains(
                "| fig8 | a \\| b | 1.7x | 1.000 | 1.13 .. 2.55 | independent | does not hold |"
            ),
            "{new}"
        );
        assert!(
            new.contains("| fig10 | c | 0.93x | 0.9041 ± 0.0031 |"),
            "{new}"
        );
        assert!(new.contains("| infinite (from 0) |"), "{new}");
        assert!(
            !new.contains("emu only"),
            "the simulator's claims only: {new}"
        );
        // Generated twice, the same: the check then finds nothing.
        assert_eq!(update(&new, &summary()).unwrap(), new);
        assert_eq!(first_difference(&new, &summary()).unwrap(), None);
    }

    #[test]
    fn the_first_differing_row_is_named() {
        let new = update(DOC, &summary()).unwrap();
        let mut s = summary();
        s["claims"][2]["verdict"] = json!("holds qualitatively");
        let m = first_difference(&new, &s)
            .unwrap()
            .expect("a verdict changed");
        assert_eq!(m.line, 8, "header, rule, fig8's row, then fig10's: {m:?}");
        assert!(
            m.committed.ends_with("| holds |") && m.generated.ends_with("| holds qualitatively |")
        );
        // A row too many in the file is a difference too.
        let longer = new.replace(
            "<!-- end generated -->",
            "| extra |\n<!-- end generated -->",
        );
        let m = first_difference(&longer, &summary()).unwrap().unwrap();
        assert_eq!(
            (m.committed.as_str(), m.generated.as_str()),
            ("| extra |", "(the block ends)")
        );
    }

    #[test]
    fn counts_follow_the_headline_by_basis() {
        let rows = render(Table::Counts, &["fig8".into(), "fig10".into()], &summary()).unwrap();
        assert_eq!(rows[2], "| fig8 | 0 / 0 / 0 / 1 (of 1) | 0 of 0 | 0 of 0 |");
        assert_eq!(
            rows[3],
            "| fig10 | 1 / 0 / 0 / 0 (of 1) | 0 of 1 | 0 of 0 |"
        );
        assert_eq!(
            rows[4],
            "| all 2 | 1 / 0 / 0 / 1 (of 2) | 0 of 1 | 0 of 0 |"
        );
    }

    #[test]
    fn the_headline_counts_claims_and_whole_figures() {
        let mut s = summary();
        s["conclusions"] = json!([
            {"experiment": "fig8", "mode": "sim", "basis": "paper", "verdict": "agree"},
            {"experiment": "fig8", "mode": "sim", "basis": "paper", "verdict": "disagree"},
            {"experiment": "fig10", "mode": "sim", "basis": "paper", "verdict": "agree"},
            {"experiment": "fig10", "mode": "sim", "basis": "ours", "verdict": "disagree"},
            {"experiment": "fig10", "mode": "emu", "basis": "paper", "verdict": "disagree"},
        ]);
        let rows = render(Table::Headline, &["fig8".into(), "fig10".into()], &s).unwrap();
        assert_eq!(
            rows[2],
            "| independent claims | 1 of 2 hold (50%); 0 more qualitatively, 0 in the right direction but far off, 1 do not: 1 of 2 (50%) in the paper's direction |"
        );
        assert_eq!(rows[3], "| fitted claims | 0 of 1 hold |");
        // fig8 has a disagreeing ordering; fig10's other rows are ours
        // and the emulator's.
        assert_eq!(
            rows[5],
            "| figures' conclusions (the papers' orders, simulator) | 1 of 2 reproduced (2 of 3 orderings agree) |"
        );
        let all = parse_spec("reproduce --quick --only all ; table=headline").unwrap();
        assert_eq!(all.1, Table::Headline);
        assert!(
            all.0.len() > 30 && all.0.contains(&"fig10".to_string()),
            "{all:?}"
        );
    }

    #[test]
    fn bad_markers_give_one_line() {
        let e = |t: &str| blocks(t).unwrap_err();
        assert!(
            e("<!-- generated: reproduce --quick --only fig8 ; table=verdicts -->\n| x |\n")
                .contains("no '<!-- end generated -->'")
        );
        assert!(e("<!-- end generated -->\n").contains("without a start marker"));
        assert!(e(
            "<!-- generated: reproduce --only fig8 ; table=verdicts -->\n<!-- end generated -->\n"
        )
        .contains("reproduce --quick --only"));
        assert!(e("<!-- generated: reproduce --quick --only fig8 ; table=tally -->\n<!-- end generated -->\n").contains("unknown 'table=tally'"));
        assert!(
            e("<!-- generated: reproduce --quick --only fig8 -->\n<!-- end generated -->\n")
                .contains("table=verdicts, table=counts or table=headline")
        );
        let unknown = update(
            "<!-- generated: reproduce --quick --only fig99 ; table=counts -->\n<!-- end generated -->\n",
            &summary(),
        );
        assert_eq!(
            unknown.unwrap_err(),
            "line 1: the run has no experiment 'fig99'"
        );
    }

    #[test]
    fn verdict_rows_outside_blocks_are_found() {
        let text =
            "| claim | verdict |\n|---|---|\n| x | holds (by 1.5%) |\n| item | holds a slab |\n";
        let rows = handwritten_verdict_rows(text).unwrap();
        assert_eq!(rows.iter().map(|r| r.0).collect::<Vec<_>>(), vec![1, 3]);
        let generated = update(DOC, &summary()).unwrap();
        assert_eq!(handwritten_verdict_rows(&generated).unwrap(), vec![]);
    }

    #[test]
    fn numbers_keep_four_digits() {
        assert_eq!(number(1.00009), "1.000");
        assert_eq!(number(0.9997), "0.9997");
        assert_eq!(number(88_200.4), "88200");
        assert_eq!(number(31.56), "31.56");
        assert_eq!(number(0.05138), "0.05138");
    }
}
