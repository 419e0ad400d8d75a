//! The fronts as one SVG figure (`fronts.svg`, `report::svg::front`): a
//! panel per front of each workload, device and host, in rows of two (a
//! latency against interrupts/s beside the same against CPU per I/O, as
//! the default fronts come). Every point of the group is drawn (those off
//! the front faint), coloured by its strategy, the front's points labelled
//! with their settings (`Front::label`), tune's picks as marks.

use report::svg::front::{FrontChart, FrontFigure, FrontMark, FrontPoint};

use crate::front::{Front, Mark};

/// The fronts' figure.
pub fn svg(fronts: &[Front]) -> Result<String, String> {
    svg_marked(fronts, &[])
}

/// As [`svg`], with each mark drawn in every panel of its group.
pub fn svg_marked(fronts: &[Front], marks: &[Mark]) -> Result<String, String> {
    let mut panels = Vec::new();
    for (i, f) in fronts.iter().enumerate() {
        for n in &f.named {
            let (x, y) = (&n.objective.x, &n.objective.y);
            panels.push(FrontChart {
                title: format!(
                    "{} on {} ({}): {}",
                    f.workload,
                    f.device,
                    f.host,
                    n.objective.words()
                ),
                x_label: x.label(),
                y_label: y.label(),
                points: n
                    .points
                    .iter()
                    .map(|e| FrontPoint {
                        x: x.scaled(e.x),
                        y: y.scaled(e.y),
                        series: e.settings[0].strategy().to_string(),
                        on_front: e.on_front,
                        label: if e.on_front {
                            f.label(e)
                        } else {
                            String::new()
                        },
                    })
                    .collect(),
                marks: marks
                    .iter()
                    .filter(|m| m.group == i)
                    .map(|m| FrontMark {
                        x: x.scaled(m.setting.value(x)),
                        y: y.scaled(m.setting.value(y)),
                        name: m.name.clone(),
                    })
                    .collect(),
            });
        }
    }
    FrontFigure {
        title: "Pareto fronts (lower is better, more for IOPS; faint: off the front)".into(),
        columns: 2,
        panels,
    }
    .render()
}
