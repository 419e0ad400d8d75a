//! An experiment's panels drawn from the results of one mode: grouped bars
//! labelled relative to the reference system, as the paper labels them, or
//! lines over a swept parameter; each bar and point with an error bar of one
//! standard deviation across seeds, and the paper's value across a bar
//! where the figure file gives it (issue 36 item 8).

use report::svg::{BarChart, BarSeries, Figure, LineChart, LineSeries, Panel};
use report::Mode;

use crate::experiment::{Experiment, PanelKind, PanelSpec, PaperValue};
use crate::run::{Results, Stat};

pub fn figure(e: &Experiment, results: &Results, mode: Mode) -> Figure {
    Figure {
        title: format!("{} [{}]", e.title, mode.as_str()),
        panels: e
            .panels
            .iter()
            .map(|p| panel(e, p, results, mode))
            .collect(),
    }
}

/// The mean of `panel`'s metric for `system` in `group`, if it ran.
pub fn value(
    e: &Experiment,
    p: &PanelSpec,
    results: &Results,
    mode: Mode,
    system: &str,
    group: &str,
) -> Option<f64> {
    stat(e, p, results, mode, system, group).map(|s| s.mean)
}

/// The mean and spread across seeds of `panel`'s metric for `system` in
/// `group`, if it ran.
fn stat(
    e: &Experiment,
    p: &PanelSpec,
    results: &Results,
    mode: Mode,
    system: &str,
    group: &str,
) -> Option<Stat> {
    let run = e
        .runs
        .iter()
        .find(|r| r.system == system && r.group == group)?;
    results.stat(e.id, &run.key, mode, &p.metric)
}

/// The spread to draw: one standard deviation, when there are seeds to
/// spread across.
fn spread(s: Option<Stat>) -> f64 {
    s.filter(|s| s.n > 1).map_or(f64::NAN, |s| s.sd)
}

/// The paper's value for `system`'s bar in `group`, in the panel's unit: a
/// ratio is drawn on our reference bar of the group. NaN where the paper
/// gives none (or our reference did not run).
pub fn paper_value(
    e: &Experiment,
    p: &PanelSpec,
    results: &Results,
    mode: Mode,
    system: &str,
    group: &str,
) -> f64 {
    let Some(m) = p
        .paper
        .iter()
        .find(|m| m.system == system && m.group == group)
    else {
        return f64::NAN;
    };
    match (m.value, &p.kind) {
        (PaperValue::Absolute(v), _) => v,
        (PaperValue::Relative(r), PanelKind::Bars { relative_to }) => {
            value(e, p, results, mode, relative_to, group).map_or(f64::NAN, |b| r * b)
        }
        (PaperValue::Relative(_), _) => f64::NAN,
    }
}

fn panel(e: &Experiment, p: &PanelSpec, results: &Results, mode: Mode) -> Panel {
    let groups: Vec<String> = e.groups().into_iter().filter(|g| p.shows(g)).collect();
    let systems = e.systems();
    match &p.kind {
        PanelKind::Bars { relative_to } => Panel::Bars(BarChart {
            title: p.title.to_string(),
            y_label: p.metric.unit().to_string(),
            groups: groups.clone(),
            series: systems
                .iter()
                .map(|s| {
                    let values: Vec<Option<f64>> = groups
                        .iter()
                        .map(|g| value(e, p, results, mode, s, g))
                        .collect();
                    let labels = groups
                        .iter()
                        .zip(&values)
                        .map(|(g, v)| {
                            let base = value(e, p, results, mode, relative_to, g);
                            match (v, base) {
                                (Some(v), Some(b)) if b != 0.0 => format!("{:.2}", v / b),
                                _ => String::new(),
                            }
                        })
                        .collect();
                    BarSeries {
                        name: s.clone(),
                        values: values.into_iter().map(|v| v.unwrap_or(f64::NAN)).collect(),
                        labels,
                        errors: groups
                            .iter()
                            .map(|g| spread(stat(e, p, results, mode, s, g)))
                            .collect(),
                        paper: groups
                            .iter()
                            .map(|g| paper_value(e, p, results, mode, s, g))
                            .collect(),
                    }
                })
                .collect(),
        }),
        PanelKind::Lines { x_label, x_log2 } => Panel::Lines(LineChart {
            title: p.title.to_string(),
            x_label: x_label.to_string(),
            y_label: p.metric.unit().to_string(),
            series: systems
                .iter()
                .map(|s| {
                    let (points, errors) = groups
                        .iter()
                        .filter_map(|g| {
                            let st = stat(e, p, results, mode, s, g)?;
                            Some(((g.parse::<f64>().ok()?, st.mean), spread(Some(st))))
                        })
                        .unzip();
                    LineSeries {
                        name: s.clone(),
                        points,
                        errors,
                    }
                })
                .collect(),
            x_log2: *x_log2,
            markers: Vec::new(),
        }),
        PanelKind::GapCdf => Panel::Lines(LineChart {
            title: p.title.to_string(),
            x_label: "completion inter-arrival [us]".into(),
            y_label: "CDF".into(),
            series: e
                .runs
                .iter()
                .filter(|r| p.shows(&r.group))
                .map(|r| LineSeries {
                    name: r.key.clone(),
                    points: gap_cdf(results.reports(e.id, &r.key, mode).first()),
                    errors: Vec::new(),
                })
                .collect(),
            x_log2: false,
            markers: Vec::new(),
        }),
    }
}

/// The paper's Fig 18 shows gaps up to 20 us.
const GAP_AXIS_US: f64 = 20.0;

/// The first seed's CDF in us, up to [`GAP_AXIS_US`] (seeds differ only in
/// their draws).
fn gap_cdf(r: Option<&report::RunReport>) -> Vec<(f64, f64)> {
    let Some(g) = r.and_then(|r| r.completion_gaps.as_ref()) else {
        return Vec::new();
    };
    let mut points: Vec<(f64, f64)> = Vec::new();
    for (ns, f) in g.cdf() {
        let us = ns as f64 / 1e3;
        if us > GAP_AXIS_US {
            // Carry the curve to the axis' end at the level it reached.
            if let Some(&(_, last)) = points.last() {
                points.push((GAP_AXIS_US, last));
            }
            break;
        }
        points.push((us, f));
    }
    points
}
