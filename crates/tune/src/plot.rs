//! The two figures of TOS 5.2 for a tuning, as SVG (drawn by
//! `report::svg`): the completion-gap CDF with delta marked (Fig 18), and
//! throughput and interrupt rate over thr with the choice marked (Fig 19).

use report::svg::{Figure, LineChart, LineSeries, Panel};

use crate::Tuning;

/// How far right the CDF is drawn: past the 99.9th percentile and delta by
/// a quarter, so one stray long gap (a descheduled thread) does not squash
/// the curve against the left edge, as Fig 18 stops at 20 us.
fn cdf_right_edge_us(t: &Tuning) -> f64 {
    let far = t.gaps.value_at(0.999).max(t.delta) as f64 / 1e3;
    (far * 1.25).max(1.0)
}

/// Fig 18: the CDF of completion gaps (us), with the percentile read and
/// the chosen delta marked.
pub fn cdf_svg(t: &Tuning, title: &str) -> Result<String, String> {
    let edge = cdf_right_edge_us(t);
    let cdf: Vec<(f64, f64)> = t
        .gaps
        .cdf()
        .into_iter()
        .map(|(ns, f)| (ns as f64 / 1e3, f))
        .take_while(|&(us, _)| us <= edge)
        .collect();
    let p = t.percentile / 100.0;
    let at = t.gap_at_percentile as f64 / 1e3;
    let chart = LineChart {
        title: title.to_string(),
        x_label: "completion inter-arrival time (us)".into(),
        y_label: "CDF".into(),
        series: vec![
            LineSeries {
                errors: Vec::new(),
                name: "gaps (default)".into(),
                points: cdf,
            },
            // Where the percentile was read: across at p, down at its gap.
            LineSeries {
                errors: Vec::new(),
                name: format!("p{}", t.percentile),
                points: vec![(0.0, p), (at, p), (at, 0.0)],
            },
        ],
        x_log2: false,
        markers: vec![(
            t.delta as f64 / 1e3,
            format!("delta = {}", policy::format_nanos(t.delta)),
        )],
    };
    chart.render()
}

/// Fig 19: throughput and interrupts per second over thr (log2 axis) under
/// adaptive at the chosen delta, with the chosen thr marked.
pub fn thr_svg(t: &Tuning, title: &str) -> Result<String, String> {
    let line = |y: fn(&crate::Point) -> f64| LineSeries {
        errors: Vec::new(),
        name: "adaptive".into(),
        points: t
            .sweep
            .iter()
            .filter_map(|p| p.thr.map(|thr| (f64::from(thr), y(p))))
            .collect(),
    };
    let marker = vec![(f64::from(t.thr), format!("thr = {}", t.thr))];
    let panel = |title: &str, y_label: &str, y: fn(&crate::Point) -> f64| {
        Panel::Lines(LineChart {
            title: title.into(),
            x_label: "thr".into(),
            y_label: y_label.into(),
            series: vec![line(y)],
            x_log2: true,
            markers: marker.clone(),
        })
    };
    Figure {
        title: title.to_string(),
        panels: vec![
            panel("(a) throughput", "IOPS", |p| p.iops),
            panel("(b) interrupts", "interrupts/s", |p| p.irq_per_sec),
        ],
    }
    .render()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Point;
    use report::Gaps;

    fn point(thr: u32, iops: f64) -> Point {
        Point {
            delta: Some(19_000),
            thr: Some(thr),
            iops,
            irq_per_sec: iops / f64::from(thr),
            completions_per_irq: f64::from(thr),
            mean_clat_ns: 100_000.0,
            p99_ns: 200_000,
            cpu: 0.9,
        }
    }

    fn tuning() -> Tuning {
        // Gaps of 1..=20 us, and one stray 5 ms gap the CDF plot leaves out.
        let gaps = (1..=2_000u64)
            .map(|i| i * 10)
            .chain([5_000_000])
            .collect::<Vec<_>>();
        let sweep: Vec<Point> = [1, 2, 4, 8, 16, 32, 64]
            .iter()
            .map(|&t| point(t, 4e5_f64.min(1e5 * f64::from(t))))
            .collect();
        let front = crate::recommend::front(&sweep).unwrap();
        Tuning {
            gaps: Gaps::from_values(gaps).unwrap(),
            percentile: 90.0,
            gap_at_percentile: 18_000,
            delta: 19_000,
            baseline: Point {
                delta: None,
                thr: None,
                ..point(1, 1e5)
            },
            candidates: sweep.clone(),
            sweep,
            tolerance: 0.01,
            thr: 4,
            objective: crate::Objective::Balanced,
            budget: crate::Budget::default(),
            recommended: front.front.first().cloned(),
            front,
        }
    }

    fn texts(svg: &str) -> Vec<String> {
        let doc = roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("{e}\n{svg}"));
        doc.descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text().map(|t| t.trim().to_string()))
            .collect()
    }

    #[test]
    fn the_cdf_marks_delta_and_the_percentile_and_stops_short_of_strays() {
        let t = tuning();
        let svg = cdf_svg(&t, "Fig 18: optane").unwrap();
        let texts = texts(&svg);
        for want in ["Fig 18: optane", "delta = 19us", "p90", "gaps (default)"] {
            assert!(texts.iter().any(|s| s == want), "{want} not in {texts:?}");
        }
        // The x axis ends near 25 us, not at the 5 ms stray.
        assert!(cdf_right_edge_us(&t) < 30.0);
        assert!(!texts.iter().any(|s| s.contains("5K")), "{texts:?}");
    }

    #[test]
    fn the_sweep_has_two_panels_and_marks_thr() {
        let svg = thr_svg(&tuning(), "Fig 19").unwrap();
        let texts = texts(&svg);
        for want in ["(a) throughput", "(b) interrupts", "thr = 4", "IOPS"] {
            assert!(texts.iter().any(|s| s == want), "{want} not in {texts:?}");
        }
    }
}
