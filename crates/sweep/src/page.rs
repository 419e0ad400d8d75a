//! The merged sweep as a report (`report.md` and a self-contained
//! `report.html`, [`report::doc`]): per workload, device and host, the two
//! fronts and the best setting for each objective as tables, tune's picks
//! where given, and the fronts' figure inline.

use report::doc::Block;

use crate::front::{Front, Setting};
use crate::merge::Table;
use crate::picks::{Pick, Standing};

/// Every file `sweep merge --out` writes, named, in the order written:
/// the table (CSV, JSON), the fronts (CSV, JSON, SVG with the picks
/// marked), the picks when tune's were given, and the report (Markdown,
/// HTML).
pub fn files(
    table: &Table,
    fronts: &[Front],
    judged: &[(Pick, Standing)],
) -> Result<Vec<(&'static str, String)>, String> {
    let figure = crate::front::svg_marked(fronts, &crate::picks::marks(judged, fronts))?;
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

/// The report's blocks. `figure` is the fronts' SVG (`fronts.svg`).
pub fn blocks(
    table: &Table,
    fronts: &[Front],
    judged: &[(Pick, Standing)],
    figure: &str,
) -> Vec<Block> {
    let mut out = vec![
        Block::Heading(1, "cinterrupts sweep".into()),
        Block::Para(format!(
            "{} points ({} failed and left out); {} groups of workload, device and host. \
             A setting is a strategy with its parameters, its figures the mean of its seeds. \
             It is on a front if no other setting is at most as bad on both axes and \
             strictly better on one: interrupts/s against p99 latency, and CPU per I/O \
             (the workload's cores' busy time per I/O, per core) against p99.",
            table.rows.len(),
            table.failed,
            fronts.len()
        )),
        Block::Contents,
    ];
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
        out.push(Block::Para(format!(
            "{} of {} settings on the front of interrupts/s against p99:",
            f.front.len(),
            f.settings
        )));
        out.push(settings_table(&f.front));
        out.push(Block::Para(format!(
            "{} of {} settings on the front of CPU per I/O against p99:",
            f.cpu_front.len(),
            f.settings
        )));
        out.push(settings_table(&f.cpu_front));
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
        caption: "The fronts, a pair of panels per workload, device and host".into(),
    });
    out
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
        let svg = crate::front::svg(&f).unwrap();
        let b = blocks(&table, &f, &[], &svg);
        let html = report::doc::html("sweep", &b);
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("<svg"), "the figure inline");
        assert!(html.contains("3 of 3 settings on the front of interrupts/s against p99"));
        assert!(html.contains("2 of 3 settings on the front of CPU per I/O against p99"));
        assert!(html.contains("least CPU per I/O"));
        let md = report::doc::markdown(&b);
        assert!(md.contains("![The fronts"), "{md}");
        assert!(md.contains("| a | 150 | 10us |"), "{md}");
    }
}
