//! The table `coalesce --trace` prints and the report page it writes.

use std::fmt::Write as _;
use std::path::Path;

use policy::stream::Outcome;
use policy::time::readable;
use policy::US;
use report::svg::{Figure, LineChart, LineSeries, Panel};

use super::{Job, Line, Stream, REORDER};

fn pct(o: &Outcome, q: f64) -> String {
    if o.delays.is_empty() {
        "-".into()
    } else {
        readable(o.delays.value_at_quantile(q).min(o.max_delay))
    }
}

pub(super) fn table(
    origin: &str,
    (n, urgent): (u64, u64),
    marks_line: &str,
    s: &Stream,
    job: &Job,
    oracle: u64,
    lines: &[Line],
) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "{origin}: {n} requests, {urgent} marked Urgent; budget {} for the rest (Urgent: none)",
        readable(job.budget)
    );
    t += marks_line;
    if s.derived > 0 {
        let _ = writeln!(
            t,
            "{} requests had no completion time in the trace: taken as issue + {} (--service)",
            s.derived,
            readable(job.service)
        );
    }
    if s.late > 0 {
        let _ = writeln!(
            t,
            "{} events came more than {} out of order: replayed late",
            s.late,
            readable(REORDER)
        );
    }
    let _ = writeln!(t, "oracle floor: {oracle} interrupts (the fewest that deliver every completion within its budget)");
    let _ = writeln!(
        t,
        "{:<14} {:>10} {:>8} {:>9} {:>9} {:>9} {:>9} {:>8} {:>6}",
        "strategy",
        "interrupts",
        "per irq",
        "p50 add",
        "p99 add",
        "p99.9 add",
        "max irq/s",
        "/floor",
        "budget"
    );
    for l in lines {
        let o = &l.outcome;
        let max_rate = l.per_second.iter().map(|p| p.1).fold(0.0, f64::max);
        let ratio = if oracle == 0 {
            "-".into()
        } else {
            format!("{:.2}", o.interrupts() as f64 / oracle as f64)
        };
        let _ = writeln!(
            t,
            "{:<14} {:>10} {:>8.2} {:>9} {:>9} {:>9} {:>9.0} {:>8} {:>6}",
            o.policy.name.as_str(),
            o.interrupts(),
            o.per_interrupt(),
            pct(o, 0.5),
            pct(o, 0.99),
            pct(o, 0.999),
            max_rate,
            ratio,
            if l.met { "met" } else { "missed" }
        );
    }
    t
}

/// The CDF of added delay and the interrupts per second over time, one
/// line per strategy, and a page showing them with the table.
pub(super) fn write_report(
    dir: &Path,
    origin: &str,
    job: &Job,
    oracle: u64,
    lines: &[Line],
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
    let cdf = LineChart {
        title: "added delay per completion (CDF)".into(),
        x_label: "delay [us]".into(),
        y_label: "fraction of completions".into(),
        series: lines
            .iter()
            .map(|l| LineSeries {
                errors: Vec::new(),
                name: l.outcome.policy.name.clone(),
                points: (0..=100)
                    .map(|i| {
                        let q = i as f64 / 100.0;
                        let d = if l.outcome.delays.is_empty() {
                            0
                        } else {
                            l.outcome
                                .delays
                                .value_at_quantile(q)
                                .min(l.outcome.max_delay)
                        };
                        (d as f64 / US as f64, q)
                    })
                    .collect(),
            })
            .collect(),
        ..LineChart::default()
    };
    let rate = LineChart {
        title: "interrupts per second over time".into(),
        x_label: "time [s]".into(),
        y_label: "interrupts/s".into(),
        series: lines
            .iter()
            .map(|l| LineSeries {
                errors: Vec::new(),
                name: l.outcome.policy.name.clone(),
                points: l.per_second.clone(),
            })
            .collect(),
        ..LineChart::default()
    };
    let fig = |c: LineChart, title: &str| {
        Figure {
            title: title.into(),
            panels: vec![Panel::Lines(c)],
        }
        .render()
        .map_err(|e| format!("a figure: {e}"))
    };
    let files = [
        ("delay-cdf.svg", fig(cdf, origin)?),
        ("irq-rate.svg", fig(rate, origin)?),
    ];
    for (name, svg) in &files {
        report::file::write_atomically(&dir.join(name), svg.as_bytes())
            .map_err(|e| format!("{}: cannot write: {e}", dir.join(name).display()))?;
    }
    let mut rows = String::new();
    for l in lines {
        let o = &l.outcome;
        let _ = writeln!(
            rows,
            "<tr><td>{}</td><td>{}</td><td>{:.2}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            html(o.policy.name.as_str()),
            o.interrupts(),
            o.per_interrupt(),
            pct(o, 0.5),
            pct(o, 0.99),
            pct(o, 0.999),
            if l.met { "met" } else { "missed" }
        );
    }
    let page = format!(
        "<!doctype html><meta charset=utf-8><title>coalesce: {t}</title>\n<h1>{t}</h1>\n<p>Budget {b} for unmarked and Barrier completions, none for Urgent; oracle floor {oracle} interrupts.</p>\n<table border=1 cellpadding=4><tr><th>strategy</th><th>interrupts</th><th>per interrupt</th><th>p50 added</th><th>p99 added</th><th>p99.9 added</th><th>budget</th></tr>\n{rows}</table>\n<p><img src=delay-cdf.svg> <img src=irq-rate.svg></p>\n{made_by}",
        t = html(origin),
        b = readable(job.budget),
        // What made the page (issue 42 item 1).
        made_by = report::made_by::current(&[]).html(),
    );
    report::file::write_atomically(&dir.join("index.html"), page.as_bytes())
        .map_err(|e| format!("{}: cannot write: {e}", dir.join("index.html").display()))?;
    Ok(())
}

fn html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
