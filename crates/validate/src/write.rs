//! The validation written: validation.md (the tables), validation.json
//! (everything), validation.html (the tables' summary and one
//! predicted-against-measured plot per metric, SVG from `report::svg`).

use std::fmt::Write as _;
use std::path::Path;

use crate::table::{self, METRICS};
use crate::{measure, Row, ValidateError, Validation};

fn pct(e: Option<f64>) -> String {
    e.map_or("n/a".into(), |e| format!("{:+.1}%", e * 100.0))
}

fn num(v: f64) -> String {
    if !v.is_finite() {
        "n/a".into()
    } else if v.abs() >= 1000.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

/// The summary: each metric's median and worst absolute error, the goal.
pub fn summary_text(v: &Validation) -> String {
    let mut s = summary_of(&v.summary);
    if !v.emu_summary.is_empty() {
        s += "\nThe emulator (`cinterrupts run`, the fitted device as a timed model) on the same held-out points:\n\n";
        s += &summary_of(&v.emu_summary);
    }
    s
}

fn summary_of(summary: &[table::Summary]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| metric | held-out points | median abs error | goal (issue 37) | worst abs error | worst point |\n|---|---|---|---|---|---|"
    );
    for m in summary {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} |",
            m.metric.name,
            m.points,
            m.median_abs
                .map_or("n/a".into(), |e| format!("{:.1}%", e * 100.0)),
            match (m.metric.goal, m.met) {
                (Some(g), Some(true)) => format!("<= {:.0}%: met", g * 100.0),
                (Some(g), _) => format!("<= {:.0}%: not met", g * 100.0),
                (None, _) => "-".into(),
            },
            m.worst_abs
                .map_or("n/a".into(), |e| format!("{:.1}%", e * 100.0)),
            m.worst_point.as_deref().unwrap_or("-"),
        );
    }
    s
}

/// The Markdown report.
pub fn markdown(v: &Validation) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# Validation: `sim` against real fio runs on this machine\n"
    );
    let _ = writeln!(
        s,
        "- command: `{}`\n- started {} (UTC); load average (1, 5, 15 min) {} before, {} after the real runs\n- kernel {}, {}; host profile `{}`; each run {} s (real, and virtual in `sim`), targets of {} MiB\n- {} points: {} fitted, {} held out (alternate points in the design's fixed order: crates/validate/src/design.rs)\n",
        v.command,
        v.started,
        v.load_before,
        v.load_after,
        v.kernel,
        v.fio,
        v.host,
        v.runtime_s,
        v.target_size >> 20,
        v.rows.len(),
        v.rows.iter().filter(|r| !r.point.held_out).count(),
        v.rows.iter().filter(|r| r.point.held_out).count(),
    );
    if let Some(t) = &v.host_table {
        let _ = writeln!(
            s,
            "## The host, measured at the start (`calibrate --host`'s benchmarks)\n\n{t}\n"
        );
    }
    let _ = writeln!(s, "## Summary (held-out points)\n\n{}", summary_text(v));
    let _ = writeln!(
        s,
        "## Held-out points: measured, predicted, signed error (predicted - measured) / measured\n\nLatencies are fio's lat (a 70/30 mix's reads; crates/validate/src/measure.rs says why not clat), in us; CPU per I/O in us; n/a where the measured value is 0.\n"
    );
    let held = v.rows.iter().filter(|r| r.point.held_out);
    points_table(&mut s, held, |r| (r.predicted.as_ref(), &r.errors));
    if v.rows.iter().any(|r| r.emulated.is_some()) {
        let _ = writeln!(
            s,
            "\n## Held-out points on the emulator: measured, emulated, signed error\n"
        );
        let emulated = v.rows.iter().filter(|r| r.emulated.is_some());
        points_table(&mut s, emulated, |r| (r.emulated.as_ref(), &r.emu_errors));
    }
    let _ = writeln!(
        s,
        "\n## Every point as measured\n\n| point | half | IOPS | lat mean | p50 | p99 | p99.9 | interrupts/I/O (tracefs; /proc/interrupts) | CPU/I/O | fio I/Os | device completions | lost trace events |\n|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for r in &v.rows {
        let m = &r.measured;
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} ({} ; {}) | {} | {} | {} | {} |",
            r.name,
            if r.point.held_out {
                "held out"
            } else {
                "fitted"
            },
            num(m.metrics.iops),
            num(m.metrics.mean / 1e3),
            num(m.metrics.p50 / 1e3),
            num(m.metrics.p99 / 1e3),
            num(m.metrics.p999 / 1e3),
            num(m.metrics.irq_per_io),
            m.irqs_recorded,
            m.irqs_counted,
            num(m.metrics.cpu_per_io / 1e3),
            m.ios,
            m.device_completions,
            m.lost_events,
        );
    }
    let _ = writeln!(s, "\n## The fitted devices\n");
    for d in &v.devices {
        let _ = writeln!(
            s,
            "### {} ({} requests)\n\n```toml\n{}```\n",
            d.target, d.requests, d.profile
        );
    }
    s
}

/// One scatter per metric: each held-out point at (measured, predicted),
/// one series per target, beside the line predicted = measured.
pub fn figures(v: &Validation) -> Result<Vec<(String, String)>, String> {
    use report::svg::{LineSeries, ScatterChart};
    METRICS
        .iter()
        .map(|m| {
            let mut series: Vec<LineSeries> = crate::design::Target::ALL
                .iter()
                .map(|t| LineSeries {
                    name: t.name().into(),
                    points: v
                        .rows
                        .iter()
                        .filter(|r| r.point.target == *t)
                        .filter_map(|r| {
                            let p = r.predicted.as_ref()?;
                            Some((
                                table::value(&r.measured.metrics, m.key),
                                table::value(p, m.key),
                            ))
                        })
                        .collect(),
                    errors: Vec::new(),
                })
                .collect();
            if v.rows.iter().any(|r| r.emulated.is_some()) {
                series.push(LineSeries {
                    name: "emulator (all targets)".into(),
                    points: v
                        .rows
                        .iter()
                        .filter_map(|r| {
                            let p = r.emulated.as_ref()?;
                            Some((
                                table::value(&r.measured.metrics, m.key),
                                table::value(p, m.key),
                            ))
                        })
                        .collect(),
                    errors: Vec::new(),
                });
            }
            let unit = if m.unit.is_empty() {
                String::new()
            } else {
                format!(" ({})", m.unit)
            };
            let c = ScatterChart {
                title: m.name.into(),
                x_label: format!("measured{unit}"),
                y_label: format!("predicted{unit}"),
                series,
            };
            Ok((m.key.to_string(), c.render()?))
        })
        .collect()
}

/// The HTML page: the summary and the plots inline.
pub fn html(v: &Validation, figures: &[(String, String)]) -> String {
    let mut s = String::from(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>cinterrupts validate</title>\n<style>body{font-family:sans-serif;max-width:1200px} table{border-collapse:collapse} td,th{border:1px solid #ccc;padding:2px 6px}</style></head><body>\n<h1>Validation: <code>sim</code> against real fio runs</h1>\n",
    );
    let _ = writeln!(
        s,
        "<p>{} (UTC), load {} before, {} after; host profile <code>{}</code>; {} held-out points. The tables are in validation.md.</p>\n<table><tr><th>metric</th><th>points</th><th>median |error|</th><th>goal</th><th>worst |error|</th><th>worst point</th></tr>",
        v.started,
        v.load_before,
        v.load_after,
        v.host,
        v.rows.iter().filter(|r| r.point.held_out).count()
    );
    for (who, m) in v
        .summary
        .iter()
        .map(|m| ("sim", m))
        .chain(v.emu_summary.iter().map(|m| ("emulator", m)))
    {
        let _ = writeln!(
            s,
            "<tr><td>{who}: {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            m.metric.name,
            m.points,
            m.median_abs
                .map_or("n/a".into(), |e| format!("{:.1}%", e * 100.0)),
            m.metric
                .goal
                .map_or("-".into(), |g| format!("{:.0}%", g * 100.0)),
            m.worst_abs
                .map_or("n/a".into(), |e| format!("{:.1}%", e * 100.0)),
            m.worst_point.as_deref().unwrap_or("-")
        );
    }
    s += "</table>\n<h2>Predicted against measured (held-out points)</h2>\n";
    for (key, svg) in figures {
        let _ = writeln!(
            s,
            "<div id=\"{key}\" style=\"display:inline-block\">{svg}</div>"
        );
    }
    s += "</body></html>\n";
    s
}

fn write_file(path: &Path, text: &str) -> Result<(), ValidateError> {
    report::file::write_atomically(path, text.as_bytes()).map_err(|e| ValidateError::Write {
        path: path.display().to_string(),
        reason: e.to_string(),
    })
}

/// Writes validation.md, validation.json and validation.html into `dir`.
pub fn all(v: &Validation, dir: &Path) -> Result<(), ValidateError> {
    std::fs::create_dir_all(dir).map_err(|e| ValidateError::Write {
        path: dir.display().to_string(),
        reason: e.to_string(),
    })?;
    // What made the validation (issue 42 item 1), in each of its files.
    let made_by = report::made_by::current(&[]);
    let mut json = serde_json::to_value(v).expect("plain data");
    json["made_by"] = serde_json::json!(made_by);
    let json = serde_json::to_string_pretty(&json).expect("plain data") + "\n";
    write_file(&dir.join("validation.json"), &json)?;
    let md = format!("{}\n## Made by\n\n{}", markdown(v), made_by.markdown());
    write_file(&dir.join("validation.md"), &md)?;
    let figs = figures(v).map_err(|e| ValidateError::Write {
        path: dir.join("validation.html").display().to_string(),
        reason: e,
    })?;
    let page = html(v, &figs).replace(
        "</body></html>\n",
        &format!("{}</body></html>\n", made_by.html()),
    );
    write_file(&dir.join("validation.html"), &page)
}

/// One table row a point: each metric measured / modelled (signed error),
/// the model's values and errors `model` picks (`sim`'s or the emulator's).
fn points_table<'a>(
    s: &mut String,
    rows: impl Iterator<Item = &'a Row>,
    model: impl Fn(&'a Row) -> (Option<&'a measure::Metrics>, &'a [Option<f64>]),
) {
    let _ = write!(s, "| point |");
    for m in METRICS {
        let _ = write!(s, " {} |", m.name);
    }
    let _ = write!(s, "\n|---|");
    for _ in METRICS {
        let _ = write!(s, "---|");
    }
    let _ = writeln!(s);
    for r in rows {
        let (values, errors) = model(r);
        let _ = write!(s, "| {} |", r.name);
        for (i, m) in METRICS.iter().enumerate() {
            let meas = table::value(&r.measured.metrics, m.key);
            let modelled = values.map_or(f64::NAN, |p| table::value(p, m.key));
            let _ = write!(
                s,
                " {} / {} ({}) |",
                num(meas),
                num(modelled),
                pct(errors[i])
            );
        }
        let _ = writeln!(s);
    }
}
