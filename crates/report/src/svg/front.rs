//! Pareto fronts as a grid of scatter panels (issue 42 item 6): every
//! point drawn, those off the front faint; a colour per series (a
//! strategy, [`super::colour`]: the same in every panel) with a legend;
//! the front's points joined by a line and labelled, each label moved
//! off the others (tried right of its point at growing offsets, then
//! left; a leader line back when moved).
//!
//! Plotters draws the axes and the front's line; the points, labels and
//! legends are written by hand after its output, marked for checks:
//! `class="point on-front"` or `class="point dominated"` (the faint
//! ones: `fill-opacity` 0.25), `data-series`, `class="front-label"`,
//! `class="legend"`.

use plotters::coord::combinators::IntoLogRange;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::series::LineSeries as Polyline;

use super::{colour, err, short_number, xml_escape, GLYPH_EM};

/// Panels in rows of `columns`.
#[derive(Clone, Debug, Default)]
pub struct FrontFigure {
    pub title: String,
    /// Panels per row (at least 1).
    pub columns: usize,
    pub panels: Vec<FrontChart>,
}

/// One front: its points, on it or not, and marks (a setting someone
/// picked) drawn apart.
#[derive(Clone, Debug, Default)]
pub struct FrontChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub points: Vec<FrontPoint>,
    pub marks: Vec<FrontMark>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct FrontPoint {
    pub x: f64,
    pub y: f64,
    /// Its colour and legend entry (the strategy).
    pub series: String,
    pub on_front: bool,
    /// Drawn beside a point on the front; empty draws none.
    pub label: String,
}

/// A point drawn as a black cross with its name in the legend.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FrontMark {
    pub x: f64,
    pub y: f64,
    pub name: String,
}

const PANEL_W: u32 = 560;
const PANEL_H: u32 = 420;
const TITLE_H: u32 = 30;
const LABEL_FONT: f64 = 10.0;
/// The legend's line height, px.
const LEGEND_LINE: u32 = 14;
/// How faint a point off the front is: its fill's opacity.
pub const DOMINATED_OPACITY: f64 = 0.25;

/// A label's box, px: left, top, right, bottom.
type Box2 = (f64, f64, f64, f64);

fn overlap(a: Box2, b: Box2) -> f64 {
    let w = a.2.min(b.2) - a.0.max(b.0);
    let h = a.3.min(b.3) - a.1.max(b.1);
    if w > 0.0 && h > 0.0 {
        w * h
    } else {
        0.0
    }
}

fn hex(c: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

/// The legend's items of a panel: (series or mark, how drawn).
enum Item<'a> {
    Series(&'a str, RGBColor),
    Faint,
    Line,
    Mark(&'a str),
}

impl Item<'_> {
    fn text(&self) -> &str {
        match self {
            Item::Series(s, _) => s,
            Item::Faint => "faint: off the front",
            Item::Line => "the front",
            Item::Mark(m) => m,
        }
    }

    fn width(&self) -> f64 {
        18.0 + self.text().chars().count() as f64 * GLYPH_EM * LABEL_FONT + 12.0
    }
}

/// The legend's items laid out in lines `width` wide: (line, x) each.
fn lay_out(items: &[Item], width: f64) -> Vec<(u32, f64)> {
    let mut at = Vec::new();
    let (mut line, mut x) = (0, 0.0);
    for it in items {
        if x > 0.0 && x + it.width() > width {
            line += 1;
            x = 0.0;
        }
        at.push((line, x));
        x += it.width();
    }
    at
}

impl FrontFigure {
    /// The figure as one SVG document.
    pub fn render(&self) -> Result<String, String> {
        let n = self.panels.len().max(1);
        let columns = self.columns.clamp(1, n);
        let rows = n.div_ceil(columns);
        // One colour per series across the figure.
        let mut series: Vec<&str> = Vec::new();
        for p in &self.panels {
            for pt in &p.points {
                if !series.contains(&pt.series.as_str()) {
                    series.push(&pt.series);
                }
            }
        }
        let colour_of = |s: &str| colour(s, series.iter().position(|x| *x == s).unwrap_or(0));
        let legend_lines = self
            .panels
            .iter()
            .map(|p| {
                lay_out(&items(p, &series, &colour_of), PANEL_W as f64 - 20.0)
                    .last()
                    .map_or(1, |l| l.0 + 1)
            })
            .max()
            .unwrap_or(1);
        let legend_h = 6 + LEGEND_LINE * legend_lines;
        let mut out = String::new();
        let mut extra = String::new();
        {
            let root = SVGBackend::with_string(
                &mut out,
                (PANEL_W * columns as u32, PANEL_H * rows as u32 + TITLE_H),
            )
            .into_drawing_area();
            root.fill(&WHITE).map_err(err)?;
            let (top, body) = root.split_vertically(TITLE_H);
            top.titled(&self.title, ("sans-serif", 16)).map_err(err)?;
            let areas = body.split_evenly((rows, columns));
            for (i, (p, area)) in self.panels.iter().zip(areas.iter()).enumerate() {
                let (plot_area, legend) = area.split_vertically(PANEL_H - legend_h);
                extra += &draw(p, &plot_area, i, &colour_of)?;
                let (lx, ly) = (
                    legend.get_pixel_range().0.start as f64 + 10.0,
                    legend.get_pixel_range().1.start as f64,
                );
                let its = items(p, &series, &colour_of);
                for (it, (line, x)) in its.iter().zip(lay_out(&its, PANEL_W as f64 - 20.0)) {
                    let (x, y) = (lx + x, ly + 4.0 + (line * LEGEND_LINE) as f64);
                    let swatch = match it {
                        Item::Series(_, c) => format!(
                            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"4.5\" fill=\"{}\"/>",
                            x + 6.0,
                            y + 5.0,
                            hex(*c)
                        ),
                        Item::Faint => format!(
                            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"#606060\" fill-opacity=\"{DOMINATED_OPACITY}\"/>",
                            x + 6.0,
                            y + 5.0
                        ),
                        Item::Line => format!(
                            "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#404040\" stroke-width=\"1.5\"/>",
                            x,
                            y + 5.0,
                            x + 13.0,
                            y + 5.0
                        ),
                        Item::Mark(_) => cross(x + 6.0, y + 5.0),
                    };
                    extra += &format!(
                        "<g class=\"legend\" data-panel=\"{i}\">{swatch}<text x=\"{:.1}\" y=\"{:.1}\" font-family=\"sans-serif\" font-size=\"{LABEL_FONT}\" dominant-baseline=\"middle\">{}</text></g>\n",
                        x + 16.0,
                        y + 5.0,
                        xml_escape(it.text())
                    );
                }
            }
            root.present().map_err(err)?;
        }
        if let Some(end) = out.rfind("</svg>") {
            out.insert_str(end, &extra);
        }
        Ok(out)
    }
}

/// A panel's legend: its series, the faint and the line, its marks.
fn items<'a>(
    p: &'a FrontChart,
    series: &[&'a str],
    colour_of: &dyn Fn(&str) -> RGBColor,
) -> Vec<Item<'a>> {
    let mut v: Vec<Item> = Vec::new();
    for s in series {
        if p.points.iter().any(|pt| pt.series == *s) {
            v.push(Item::Series(s, colour_of(s)));
        }
    }
    v.push(Item::Faint);
    v.push(Item::Line);
    v.extend(p.marks.iter().map(|m| Item::Mark(&m.name)));
    v
}

fn cross(x: f64, y: f64) -> String {
    format!(
        "<path class=\"mark\" d=\"M{:.1} {:.1}L{:.1} {:.1}M{:.1} {:.1}L{:.1} {:.1}\" stroke=\"#000000\" stroke-width=\"2\"/>",
        x - 5.0,
        y - 5.0,
        x + 5.0,
        y + 5.0,
        x - 5.0,
        y + 5.0,
        x + 5.0,
        y - 5.0
    )
}

/// An axis' range around `values`, with a margin; from 0 when every value
/// is positive and 0 is near.
fn range(values: impl Iterator<Item = f64>, room_after: f64) -> (f64, f64) {
    let v: Vec<f64> = values.filter(|v| v.is_finite()).collect();
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let span = if hi > lo { hi - lo } else { hi.abs().max(1.0) };
    let lo = if lo >= 0.0 && lo < span {
        0.0
    } else {
        lo - span * 0.05
    };
    (lo, hi + span * room_after)
}

/// One panel: axes and the front's line by plotters; points, labels by
/// hand (returned as SVG to add to the figure).
fn draw(
    p: &FrontChart,
    area: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    panel: usize,
    colour_of: &dyn Fn(&str) -> RGBColor,
) -> Result<String, String> {
    let xs = p
        .points
        .iter()
        .map(|q| q.x)
        .chain(p.marks.iter().map(|m| m.x));
    let ys = p
        .points
        .iter()
        .map(|q| q.y)
        .chain(p.marks.iter().map(|m| m.y));
    // Room right of the points for the labels, and above for the top one.
    let (x0, x1) = range(xs, 0.3);
    let finite: Vec<f64> = ys.filter(|y| y.is_finite()).collect();
    let (lo, hi) = finite
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &y| {
            (a.min(y), b.max(y))
        });
    // A log axis when the ys span more than a factor of 10 (on the mixed
    // workload a starved batch's p99, 1.4 ms, beside the fronts' 17 to 80
    // us): a linear one would crush the front into its bottom tenth.
    let log_y = lo > 0.0 && hi / lo > 10.0;
    macro_rules! draw_on {
        ($y_range:expr, $y_label:expr) => {{
            let mut chart = ChartBuilder::on(area)
                .caption(&p.title, ("sans-serif", 13))
                .margin(8)
                .x_label_area_size(40)
                .y_label_area_size(56)
                .build_cartesian_2d(x0..x1, $y_range)
                .map_err(err)?;
            mesh!(chart, &p.x_label, $y_label);
            points(&mut chart, p, panel, colour_of)
        }};
    }
    if log_y {
        draw_on!(
            (lo / 1.3..hi * 1.3).log_scale(),
            format!("{}, log scale", p.y_label)
        )
    } else {
        let (y0, y1) = range(finite.into_iter(), 0.1);
        draw_on!(y0..y1, p.y_label.clone())
    }
}

/// The front's line (plotters), then the points, marks and labels by hand.
fn points<'a, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<RangedCoordf64, Y>>,
    p: &FrontChart,
    panel: usize,
    colour_of: &dyn Fn(&str) -> RGBColor,
) -> Result<String, String>
where
    Y: Ranged<ValueType = f64>,
{
    let mut front: Vec<&FrontPoint> = p
        .points
        .iter()
        .filter(|q| q.on_front && q.x.is_finite() && q.y.is_finite())
        .collect();
    front.sort_by(|a, b| {
        a.x.total_cmp(&b.x)
            .then(a.y.total_cmp(&b.y))
            .then(a.series.cmp(&b.series))
    });
    // A point given twice is labelled once.
    front.dedup_by(|a, b| a.series == b.series && a.x == b.x && a.y == b.y);
    let ink = RGBColor(0x40, 0x40, 0x40);
    chart
        .draw_series(Polyline::new(
            front.iter().map(|q| (q.x, q.y)).collect::<Vec<_>>(),
            ink.stroke_width(1),
        ))
        .map_err(err)?;
    let (px, py) = chart.plotting_area().get_pixel_range();
    let bounds = (
        px.start as f64,
        py.start as f64,
        px.end as f64,
        py.end as f64,
    );
    let at = |x: f64, y: f64| {
        let (a, b) = chart.backend_coord(&(x, y));
        (a as f64, b as f64)
    };
    let mut svg = String::new();
    // Each point once (a point drawn twice would hide nothing and count
    // twice): by series, figures and standing; two points a pixel apart
    // are two settings and both drawn. Faint ones first, beneath.
    let mut drawn: std::collections::HashSet<(&str, u64, u64, bool)> = Default::default();
    for on in [false, true] {
        for q in p.points.iter().filter(|q| q.on_front == on) {
            if !q.x.is_finite() || !q.y.is_finite() {
                continue;
            }
            let key = (q.series.as_str(), q.x.to_bits(), q.y.to_bits(), on);
            if !drawn.insert(key) {
                continue;
            }
            let (cx, cy) = at(q.x, q.y);
            let c = hex(colour_of(&q.series));
            let series = xml_escape(&q.series);
            svg += &if on {
                format!("<circle class=\"point on-front\" data-panel=\"{panel}\" data-series=\"{series}\" cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"4.5\" fill=\"{c}\" stroke=\"#000000\" stroke-width=\"0.6\"/>\n")
            } else {
                format!("<circle class=\"point dominated\" data-panel=\"{panel}\" data-series=\"{series}\" cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"3\" fill=\"{c}\" fill-opacity=\"{DOMINATED_OPACITY}\"/>\n")
            };
        }
    }
    for m in &p.marks {
        let (cx, cy) = at(m.x, m.y);
        svg += &cross(cx, cy);
        svg.push('\n');
    }
    // Labels, left to right, each where it overlaps the placed ones least
    // (none, when it can): right of its point, 0, 12, -12, 24, ... px
    // down (to 20 lines either way), then the same on the left.
    let h = LABEL_FONT + 2.0;
    let mut placed: Vec<Box2> = Vec::new();
    for q in front.iter().filter(|q| !q.label.is_empty()) {
        let (cx, cy) = at(q.x, q.y);
        let w = q.label.chars().count() as f64 * GLYPH_EM * LABEL_FONT;
        let mut best: Option<(f64, f64, bool, Box2)> = None;
        'search: for left in [false, true] {
            for k in 0..41 {
                let step = ((k + 1) / 2) as f64 * h;
                let dy = if k % 2 == 1 { step } else { -step };
                let x = if left { cx - 7.0 - w } else { cx + 7.0 };
                let b = (x, cy + dy - h / 2.0, x + w, cy + dy + h / 2.0);
                let outside = (bounds.0 - b.0).max(0.0)
                    + (b.2 - bounds.2).max(0.0)
                    + (bounds.1 - b.1).max(0.0)
                    + (b.3 - bounds.3).max(0.0);
                let cost = placed.iter().map(|&o| overlap(o, b)).sum::<f64>() + outside * 100.0;
                if best.as_ref().map_or(true, |&(c, ..)| cost < c) {
                    best = Some((cost, dy, left, b));
                }
                if cost == 0.0 {
                    break 'search;
                }
            }
        }
        let Some((_, dy, left, b)) = best else {
            continue;
        };
        placed.push(b);
        let (tx, anchor) = if left { (b.2, "end") } else { (b.0, "start") };
        if dy.abs() > h / 2.0 {
            svg += &format!(
                "<line class=\"leader\" x1=\"{cx:.1}\" y1=\"{cy:.1}\" x2=\"{tx:.1}\" y2=\"{:.1}\" stroke=\"#909090\" stroke-width=\"0.6\"/>\n",
                cy + dy
            );
        }
        svg += &format!(
            "<text class=\"front-label\" data-panel=\"{panel}\" x=\"{tx:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\" dominant-baseline=\"middle\" font-family=\"sans-serif\" font-size=\"{LABEL_FONT}\" fill=\"#000000\">{}</text>\n",
            cy + dy,
            xml_escape(&q.label)
        );
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(x: f64, y: f64, series: &str, on: bool, label: &str) -> FrontPoint {
        FrontPoint {
            x,
            y,
            series: series.into(),
            on_front: on,
            label: label.into(),
        }
    }

    #[test]
    fn every_point_is_drawn_faint_off_the_front_in_its_series_colour() {
        let fig = FrontFigure {
            title: "fronts".into(),
            columns: 2,
            panels: vec![FrontChart {
                title: "p99 against interrupts/s".into(),
                x_label: "interrupts/s".into(),
                y_label: "p99".into(),
                points: vec![
                    point(1.0, 10.0, "adaptive", true, "adaptive δ=2us"),
                    point(2.0, 5.0, "cint", true, "cint"),
                    point(3.0, 12.0, "adaptive", false, ""),
                    point(3.0, 12.0, "adaptive", false, ""),
                ],
                marks: vec![FrontMark {
                    x: 2.5,
                    y: 8.0,
                    name: "tune's pick".into(),
                }],
            }],
        };
        let svg = fig.render().unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let circles: Vec<_> = doc
            .descendants()
            .filter(|n| n.attribute("class").is_some_and(|c| c.starts_with("point")))
            .collect();
        // The repeated point once.
        assert_eq!(circles.len(), 3, "{svg}");
        let faint: Vec<_> = circles
            .iter()
            .filter(|n| n.attribute("class") == Some("point dominated"))
            .collect();
        assert_eq!(faint.len(), 1);
        assert_eq!(faint[0].attribute("fill-opacity"), Some("0.25"));
        let fill = |s: &str| {
            let v: Vec<_> = circles
                .iter()
                .filter(|n| n.attribute("data-series") == Some(s))
                .map(|n| n.attribute("fill").unwrap())
                .collect();
            v
        };
        assert!(fill("adaptive")
            .iter()
            .all(|f| *f == hex(colour("adaptive", 0))));
        assert_eq!(fill("cint"), [hex(colour("cint", 1))]);
        let texts: Vec<&str> = doc
            .descendants()
            .filter(|n| n.attribute("class") == Some("front-label"))
            .filter_map(|n| n.text())
            .collect();
        assert_eq!(texts, ["adaptive δ=2us", "cint"]);
        assert!(
            svg.contains("tune&apos;s pick") || svg.contains("tune's pick"),
            "{svg}"
        );
        assert!(svg.contains("faint: off the front"));
    }

    #[test]
    fn labels_of_close_points_are_moved_apart() {
        // Ten points on the front a pixel apart: their labels would all
        // sit on each other.
        let points: Vec<FrontPoint> = (0..10)
            .map(|i| {
                point(
                    100.0 + i as f64 * 0.01,
                    50.0 - i as f64 * 0.01,
                    "adaptive",
                    true,
                    &format!("adaptive thr={i}"),
                )
            })
            .chain([
                point(0.0, 0.0, "cint", false, ""),
                point(200.0, 100.0, "cint", false, ""),
            ])
            .collect();
        let svg = FrontFigure {
            columns: 1,
            panels: vec![FrontChart {
                points,
                ..Default::default()
            }],
            ..Default::default()
        }
        .render()
        .unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let boxes: Vec<Box2> = doc
            .descendants()
            .filter(|n| n.attribute("class") == Some("front-label"))
            .map(|n| {
                let num = |k: &str| n.attribute(k).unwrap().parse::<f64>().unwrap();
                let w = n.text().unwrap().chars().count() as f64 * GLYPH_EM * LABEL_FONT;
                let (x, y) = (num("x"), num("y"));
                let x = if n.attribute("text-anchor") == Some("end") {
                    x - w
                } else {
                    x
                };
                (x, y - LABEL_FONT / 2.0, x + w, y + LABEL_FONT / 2.0)
            })
            .collect();
        assert_eq!(boxes.len(), 10);
        for (i, a) in boxes.iter().enumerate() {
            for b in &boxes[i + 1..] {
                assert_eq!(overlap(*a, *b), 0.0, "labels overlap: {a:?} {b:?}");
            }
        }
    }

    #[test]
    fn an_empty_figure_renders() {
        let svg = FrontFigure::default().render().unwrap();
        roxmltree::Document::parse(&svg).unwrap();
    }
}
