//! The merged sweep as a report (`report.md` and a self-contained
//! `report.html`, [`report::doc`]): per workload, device and host, each
//! front (the defaults or those `--front` named) and the best setting for
//! each objective as tables, tune's picks where given, and the fronts'
//! figure inline.

use report::doc::Block;

use crate::front::{shown, Front, Named, Setting};
use crate::merge::Table;
use crate::picks::{Pick, Standing};

/// Every file `sweep merge --out` writes, named, in the order written:
/// the table (CSV, JSON), the fronts (CSV, JSON, SVG with the picks
/// marked), the picks when tune's were given, what made them
/// (`made_by.json`: the points' code versions and the merge's
/// `report::made_by`), and the report (Markdown, HTML).
pub fn files(
    table: &Table,
    fronts: &[Front],
    judged: &[(Pick, Standing)],
) -> Result<Vec<(&'static str, String)>, String> {
    let figure = crate::figure::svg_marked(fronts, &crate::picks::marks(judged, fronts))?;
    let mut files = vec![
        ("table.csv", table.csv()),
        ("table.json", table.json()),
        ("fronts.csv", crate::front::csv(fronts)),
        ("fronts.json", crate::front::json(fronts)),
    ];
    let page = blocks(table, fronts, judged, &figure);
    files.push(("fronts.svg", figure));
    if !judged.is_empty() {
        files.push(("picks.json", crate::picks::json(judged)));
    }
    // What made the table, beside it (the table's own shape is a list of
    // rows, read by scripts as such).
    let made_by = serde_json::json!({
        "points_run_by": table.versions,
        "made_by": report::made_by::current(&[]),
    });
    files.push((
        "made_by.json",
        serde_json::to_string_pretty(&made_by).unwrap_or_default() + "\n",
    ));
    files.push(("report.md", report::doc::markdown(&page)));
    files.push(("report.html", report::doc::html("cinterrupts sweep", &page)));
    Ok(files)
}

/// Writes [`files`] into `dir` (created if missing; a device refused),
/// each whole or not at all; errors name the path.
pub fn write(
    dir: &std::path::Path,
    table: &Table,
    fronts: &[Front],
    judged: &[(Pick, Standing)],
) -> Result<(), String> {
    report::file::refuse_dev(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for (name, text) in files(table, fronts, judged)? {
        let path = dir.join(name);
        report::file::write_atomically(&path, text.as_bytes())
            .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
    }
    Ok(())
}

/// What made the results (issue 42 item 1), said right under the title:
/// the code versions the points were run with (each store entry's, which
/// its key folds in) and what made this merge (`report::made_by`: the
/// commit, machine, kernel, load and command line).
fn provenance(table: &Table, made_by: &report::MadeBy) -> Vec<Block> {
    let versions: Vec<&str> = table.versions.iter().map(String::as_str).collect();
    let mut rows = vec![vec![
        "points run by".to_string(),
        if versions.is_empty() {
            "no points".to_string()
        } else {
            format!("cinterrupts {}", versions.join("; "))
        },
    ]];
    rows.extend(
        made_by
            .rows()
            .into_iter()
            .map(|(k, v)| vec![format!("merge: {k}"), v]),
    );
    vec![
        Block::Heading(2, "Made by".into()),
        Block::Table {
            head: vec!["what".into(), "value".into()],
            rows,
        },
    ]
}

/// The report's blocks. `figure` is the fronts' SVG (`fronts.svg`).
pub fn blocks(
    table: &Table,
    fronts: &[Front],
    judged: &[(Pick, Standing)],
    figure: &str,
) -> Vec<Block> {
    let mut out = vec![Block::Heading(1, "cinterrupts sweep".into())];
    out.extend(provenance(table, &report::made_by::current(&[])));
    out.push(Block::Para(format!(
        "{} points ({} failed and left out); {} groups of workload, device and host. \
         A setting is a strategy with its parameters, its figures the mean of its seeds; \
         settings that measured the same on every figure are one point. \
         A point is on a front if no other is at most as bad on both axes and \
         strictly better on one (less is better; more, for IOPS). The fronts are \
         each job's p99 and the worst job's against interrupts/s and against CPU \
         per I/O (the workload's cores' busy time per I/O, per core), or those \
         `sweep merge --front Y,X` named.",
        table.rows.len(),
        table.failed,
        fronts.len()
    )));
    out.push(Block::Contents);
    if table.versions.len() > 1 {
        out.push(Block::Para(format!(
            "The points come from {} versions ({}): their keys differ, so the table holds both.",
            table.versions.len(),
            table
                .versions
                .iter()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    for f in fronts {
        out.push(Block::Heading(
            2,
            format!("{} on {} ({})", f.workload, f.device, f.host),
        ));
        let fixed = f.fixed();
        if !fixed.is_empty() {
            out.push(Block::Para(format!(
                "Parameters the same in every setting of a strategy (left out of the labels): {}.",
                fixed
                    .iter()
                    .map(|(s, p)| format!("{s}: {p}"))
                    .collect::<Vec<_>>()
                    .join("; ")
            )));
        }
        for n in &f.named {
            out.push(Block::Para(format!(
                "{} (`--front {}`): {} points on the front, {} of {} settings:",
                n.objective.words(),
                n.objective,
                n.front().count(),
                n.front_settings(),
                f.settings
            )));
            out.push(front_table(f, n));
        }
        out.push(Block::Para("The best setting for each objective:".into()));
        let mut best = settings_table(f.best.iter().map(|(_, s)| s));
        if let Block::Table { head, rows } = &mut best {
            head.insert(0, "objective".into());
            for (row, (objective, _)) in rows.iter_mut().zip(&f.best) {
                row.insert(0, objective.to_string());
            }
        }
        out.push(best);
    }
    if !judged.is_empty() {
        out.push(Block::Heading(2, "tune's picks against the fronts".into()));
        out.push(Block::Table {
            head: ["pick", "workload", "device", "standing"]
                .map(String::from)
                .to_vec(),
            rows: judged
                .iter()
                .map(|(p, s)| {
                    vec![
                        p.policy(),
                        p.workload.clone(),
                        p.device.clone(),
                        standing(s),
                    ]
                })
                .collect(),
        });
    }
    out.push(Block::Heading(2, "Figure".into()));
    out.push(Block::Figure {
        file: "fronts.svg".into(),
        svg: figure.into(),
        caption: "The fronts, a panel each: every point drawn, faint off the front, \
                  a colour per strategy, the front's settings labelled"
            .into(),
    });
    out
}

/// A front's points as a table: its label, how many settings it stands
/// for, its two figures, then the whole run's.
fn front_table(f: &Front, n: &Named) -> Block {
    let (x, y) = (&n.objective.x, &n.objective.y);
    Block::Table {
        head: vec![
            "setting".into(),
            "settings".into(),
            y.to_string(),
            x.to_string(),
            "interrupts/s".into(),
            "p99".into(),
            "IOPS".into(),
            "CPU per I/O".into(),
            "seeds".into(),
        ],
        rows: n
            .front()
            .map(|e| {
                let s = &e.settings[0];
                vec![
                    f.label(e),
                    e.settings.len().to_string(),
                    shown(y, e.y),
                    shown(x, e.x),
                    format!("{:.0}", s.interrupts_per_sec),
                    policy::format_nanos(s.p99_ns.round() as u64),
                    format!("{:.0}", s.iops),
                    policy::format_nanos(s.cpu_per_io_ns().round() as u64),
                    s.seeds.to_string(),
                ]
            })
            .collect(),
    }
}

fn settings_table<'a>(settings: impl IntoIterator<Item = &'a Setting>) -> Block {
    Block::Table {
        head: [
            "setting",
            "interrupts/s",
            "p99",
            "IOPS",
            "CPU",
            "CPU per I/O",
            "seeds",
        ]
        .map(String::from)
        .to_vec(),
        rows: settings
            .into_iter()
            .map(|s| {
                vec![
                    s.policy.clone(),
                    format!("{:.0}", s.interrupts_per_sec),
                    policy::format_nanos(s.p99_ns.round() as u64),
                    format!("{:.0}", s.iops),
                    format!("{:.1}%", s.cpu * 100.0),
                    policy::format_nanos(s.cpu_per_io_ns().round() as u64),
                    s.seeds.to_string(),
                ]
            })
            .collect(),
    }
}

fn standing(s: &Standing) -> String {
    match s {
        Standing::NoGroup => "not in the sweep (no such workload, device and host)".into(),
        Standing::NotSwept => "not in the sweep (its delta and thr are not in the grid)".into(),
        Standing::OnFront(_) => "on the front".into(),
        Standing::Dominated { by, .. } => format!(
            "OFF the front: {} setting(s) on it do better on both, first {}",
            by.len(),
            by[0].policy
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::fronts;
    use crate::merge::Row;

    fn row(policy: &str, irq: f64, p99: u64, cpu: f64) -> Row {
        Row {
            interrupts_per_sec: irq,
            p99_ns: p99,
            cpu,
            ..Row::sample(policy)
        }
    }

    #[test]
    fn the_page_has_both_fronts_the_best_and_the_figure_inline() {
        let table = Table {
            rows: vec![
                row("a", 150.0, 10_000, 0.5),
                row("b", 50.0, 30_000, 0.2),
                row("d", 10.0, 35_000, 0.95),
            ],
            ..Table::default()
        };
        let f = fronts(&table);
        let svg = crate::figure::svg(&f).unwrap();
        let b = blocks(&table, &f, &[], &svg);
        let html = report::doc::html("sweep", &b);
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("<svg"), "the figure inline");
        assert!(html.contains("least CPU per I/O"));
        let md = report::doc::markdown(&b);
        assert!(
            md.contains("the worst job's p99 against interrupts/s (`--front p99,interrupts`): 3 points on the front, 3 of 3 settings"),
            "{md}"
        );
        assert!(
            md.contains("the worst job's p99 against CPU per I/O (`--front p99,cpu`): 2 points on the front, 2 of 3 settings"),
            "{md}"
        );
        assert!(md.contains("![The fronts"), "{md}");
        // The front's table: label, settings, p99, interrupts/s, ...
        assert!(md.contains("| a | 1 | 10us | 150 | 150 | 10us |"), "{md}");
    }
}
