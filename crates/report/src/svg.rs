//! Figures as self-contained SVG, drawn the way the paper draws them: a row
//! of panels, grouped bars with a label above each bar (TOS Figs 8-21 label
//! bars with their value relative to cint), or lines over a swept parameter.
//!
//! Plain data in, an SVG string out: the caller decides what the labels say
//! and where the file goes. Colours follow the system's name, so cint is the
//! same colour in every figure of a report.

use plotters::coord::combinators::{BindKeyPoints, IntoLogRange};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::series::LineSeries as Polyline;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// The axes of a line, scatter or front chart: labelled, numbers short,
/// no light grid. (A macro: the charts' coordinate types differ, linear
/// or logarithmic.)
macro_rules! mesh {
    ($chart:expr, $x_label:expr, $y_label:expr) => {
        $chart
            .configure_mesh()
            .x_desc($x_label)
            .y_desc($y_label)
            .x_label_formatter(&|v| short_number(*v))
            .y_label_formatter(&|v| short_number(*v))
            .light_line_style(TRANSPARENT)
            .label_style(("sans-serif", 11))
            .draw()
            .map_err(err)?
    };
}

pub mod front;

/// One figure: panels side by side, as the paper's (a), (b), (c), (d).
#[derive(Clone, Debug, Default)]
pub struct Figure {
    pub title: String,
    pub panels: Vec<Panel>,
}

#[derive(Clone, Debug)]
pub enum Panel {
    Bars(BarChart),
    Lines(LineChart),
    Scatter(ScatterChart),
}

/// Grouped bars: `groups` along x (e.g. thread counts), one bar per series
/// (system) in each group.
#[derive(Clone, Debug, Default)]
pub struct BarChart {
    pub title: String,
    pub y_label: String,
    pub groups: Vec<String>,
    pub series: Vec<BarSeries>,
}

#[derive(Clone, Debug, Default)]
pub struct BarSeries {
    pub name: String,
    /// One value per group; NaN leaves a gap.
    pub values: Vec<f64>,
    /// Drawn above each bar (the paper's "relative to cint" numbers); empty
    /// strings draw nothing.
    pub labels: Vec<String>,
    /// One standard deviation across seeds per group, drawn as an error
    /// bar; empty, 0 or NaN draws none.
    pub errors: Vec<f64>,
    /// The paper's value for each bar, in the bar's unit, drawn as a black
    /// mark across it; empty or NaN where the paper gives none.
    pub paper: Vec<f64>,
}

/// Lines over a swept x (thr, percentiles, ...).
#[derive(Clone, Debug, Default)]
pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<LineSeries>,
    /// A log2 x axis, for sweeps over powers of two.
    pub x_log2: bool,
    /// Vertical markers at x, with a label (a chosen delta or thr).
    pub markers: Vec<(f64, String)>,
}

/// Points without lines beside the diagonal y = x: a model's predictions
/// (y) against measurements (x). Both axes share one range, logarithmic
/// when every value is positive and they span more than a factor of 20.
#[derive(Clone, Debug, Default)]
pub struct ScatterChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    /// Each series' points; its `errors` are not drawn.
    pub series: Vec<LineSeries>,
}

#[derive(Clone, Debug, Default)]
pub struct LineSeries {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// One standard deviation per point, drawn as an error bar; empty, 0
    /// or NaN draws none.
    pub errors: Vec<f64>,
}

type Area<'s> = DrawingArea<SVGBackend<'s>, Shift>;

const PANEL_W: u32 = 360;
const PANEL_H: u32 = 300;
const TITLE_H: u32 = 30;

impl Figure {
    /// The figure as one SVG document.
    pub fn render(&self) -> Result<String, String> {
        let n = self.panels.len().max(1) as u32;
        let mut out = String::new();
        // Drawn by hand after plotters' output: each bar group's label and
        // extent, marked for checks (scripts/check-report-html).
        let mut extra = String::new();
        {
            let root = SVGBackend::with_string(&mut out, (PANEL_W * n, PANEL_H + TITLE_H))
                .into_drawing_area();
            root.fill(&WHITE).map_err(err)?;
            let (top, body) = root.split_vertically(TITLE_H);
            top.titled(&self.title, ("sans-serif", 18)).map_err(err)?;
            let areas = body.split_evenly((1, n as usize));
            for (i, (panel, area)) in self.panels.iter().zip(areas.iter()).enumerate() {
                match panel {
                    Panel::Bars(b) => extra += &draw_bars(b, area, i)?,
                    Panel::Lines(l) => draw_lines(l, area)?,
                    Panel::Scatter(c) => draw_scatter(c, area)?,
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

impl LineChart {
    /// This chart alone, as one SVG document.
    pub fn render(&self) -> Result<String, String> {
        Figure {
            title: String::new(),
            panels: vec![Panel::Lines(self.clone())],
        }
        .render()
    }
}

impl ScatterChart {
    /// This chart alone, as one SVG document.
    pub fn render(&self) -> Result<String, String> {
        Figure {
            title: String::new(),
            panels: vec![Panel::Scatter(self.clone())],
        }
        .render()
    }
}

impl BarChart {
    /// This chart alone, as one SVG document.
    pub fn render(&self) -> Result<String, String> {
        Figure {
            title: String::new(),
            panels: vec![Panel::Bars(self.clone())],
        }
        .render()
    }
}

fn err(e: impl std::fmt::Display) -> String {
    format!("drawing a figure: {e}")
}

/// The colour of a system, the same in every figure; unknown names get a
/// palette colour by position.
pub fn colour(name: &str, index: usize) -> RGBColor {
    match name {
        "cint" => RGBColor(0x6a, 0x3d, 0x9a),
        "cint-ooo" | "cint+ooo" => RGBColor(0xca, 0xb2, 0xd6),
        "cint-no-ooo" => RGBColor(0x9e, 0x7c, 0xc1),
        "default" => RGBColor(0x33, 0xa0, 0x2c),
        "adaptive" => RGBColor(0xff, 0x7f, 0x00),
        "dynamic" => RGBColor(0x1f, 0x78, 0xb4),
        "nvme100" => RGBColor(0x40, 0x40, 0x40),
        "nvme20" => RGBColor(0x80, 0x80, 0x80),
        "nvme6" => RGBColor(0xb0, 0xb0, 0xb0),
        _ => {
            let c = Palette99::pick(index).to_rgba();
            RGBColor(c.0, c.1, c.2)
        }
    }
}

fn top_of(values: impl Iterator<Item = f64>) -> f64 {
    let max = values.filter(|v| v.is_finite()).fold(0.0_f64, f64::max);
    if max > 0.0 {
        // Headroom for the labels above the bars and the legend.
        max * 1.6
    } else {
        1.0
    }
}

/// Font size of the group labels under the bars, and the least they
/// shrink to before wrapping.
const GROUP_FONT: f64 = 11.0;
const GROUP_FONT_MIN: f64 = 8.0;
/// A sans-serif glyph's mean advance, in ems (digits and lower case; an
/// estimate: scripts/check-report-html measures the real text).
const GLYPH_EM: f64 = 0.6;

/// The label of one group of bars, fitted to its width: shrunk, then cut
/// in two at a space or a dash nearest its middle.
fn fit_label(label: &str, width: f64) -> (f64, Vec<String>) {
    let fits = |s: &str, size: f64| s.chars().count() as f64 * GLYPH_EM * size <= width;
    let mut size = GROUP_FONT;
    while size > GROUP_FONT_MIN && !fits(label, size) {
        size -= 1.0;
    }
    if fits(label, size) {
        return (size, vec![label.to_string()]);
    }
    let chars: Vec<char> = label.chars().collect();
    let mid = chars.len() / 2;
    let cut = (1..chars.len())
        .filter(|&i| matches!(chars[i - 1], ' ' | '-' | '/' | ',' | '+'))
        .min_by_key(|&i| i.abs_diff(mid))
        .unwrap_or(mid.max(1));
    let lines: Vec<String> = [&chars[..cut], &chars[cut..]]
        .iter()
        .map(|c| c.iter().collect::<String>().trim().to_string())
        .collect();
    let longest = lines.iter().map(|l| l.chars().count()).max().unwrap_or(1) as f64;
    let size = (width / (longest * GLYPH_EM))
        .clamp(5.0, GROUP_FONT)
        .floor();
    (size, lines)
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Grouped bars. Every horizontal position comes from one place, the
/// group's extent (`x0 + g * px_per_group`): the bars, their error bars,
/// the paper's marks and the group's label. (Until issue 36 the labels were
/// plotters' segmented axis over `0..groups`, a discrete range of groups +
/// 1 values: its segments were narrower than the bars' groups, and the
/// labels drifted left of their bars, the more the further right.)
/// Returns the group labels and extents as SVG, to be added to the figure.
fn draw_bars(b: &BarChart, area: &Area, panel: usize) -> Result<String, String> {
    let groups = b.groups.len().max(1);
    let heights = b.series.iter().flat_map(|s| {
        let err = |g: usize| {
            s.errors
                .get(g)
                .copied()
                .filter(|e| e.is_finite())
                .unwrap_or(0.0)
        };
        s.values
            .iter()
            .enumerate()
            .map(move |(g, v)| v + err(g))
            .chain(s.paper.iter().copied())
    });
    let top = top_of(heights);
    let mut chart = ChartBuilder::on(area)
        .caption(&b.title, ("sans-serif", 14))
        .margin(8)
        .x_label_area_size(30)
        .y_label_area_size(52)
        .build_cartesian_2d(0.0..groups as f64, 0.0..top)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .light_line_style(TRANSPARENT)
        .y_desc(&b.y_label)
        .y_label_formatter(&|v| short_number(*v))
        .label_style(("sans-serif", 11))
        .draw()
        .map_err(err)?;
    // Bars share each group's width; a fifth of it is left as the gap.
    let n = b.series.len().max(1) as f64;
    let width = 0.8 / n;
    let plot = chart.plotting_area().strip_coord_spec();
    let (x0, x1) = (plot.get_pixel_range().0.start, plot.get_pixel_range().0.end);
    let px_per_group = (x1 - x0) as f64 / groups as f64;
    let (y0, y1) = (plot.get_pixel_range().1.start, plot.get_pixel_range().1.end);
    let y_of = |v: f64| y1 as f64 - (v / top) * (y1 - y0) as f64;
    // Pixels relative to the plotting area, as `plot` draws.
    let at = |x: f64, y: f64| (x.round() as i32 - x0, y.round() as i32 - y0);
    let ink = RGBColor(0x20, 0x20, 0x20);
    for (i, s) in b.series.iter().enumerate() {
        let c = colour(&s.name, i);
        for (g, &v) in s.values.iter().enumerate() {
            let left = x0 as f64 + px_per_group * (g as f64 + 0.1 + width * i as f64);
            let right = left + px_per_group * width;
            let mid = (left + right) / 2.0;
            let mut label_at = f64::NAN;
            if v.is_finite() {
                plot.draw(&Rectangle::new(
                    [at(left, y_of(v)), at(right, y_of(0.0))],
                    c.filled(),
                ))
                .map_err(err)?;
                label_at = v;
                if let Some(&e) = s.errors.get(g).filter(|e| e.is_finite() && **e > 0.0) {
                    let cap = (right - left) * 0.2;
                    for seg in [
                        [(mid, y_of(v - e)), (mid, y_of(v + e))],
                        [(mid - cap, y_of(v + e)), (mid + cap, y_of(v + e))],
                        [(mid - cap, y_of(v - e)), (mid + cap, y_of(v - e))],
                    ] {
                        plot.draw(&PathElement::new(
                            vec![at(seg[0].0, seg[0].1), at(seg[1].0, seg[1].1)],
                            ink.stroke_width(1),
                        ))
                        .map_err(err)?;
                    }
                    label_at = v + e;
                }
            }
            if let Some(&p) = s.paper.get(g).filter(|p| p.is_finite()) {
                // The paper's value: a black bar across ours, a little wider.
                plot.draw(&Rectangle::new(
                    [
                        at(left - 1.0, y_of(p) - 1.5),
                        at(right + 1.0, y_of(p) + 1.5),
                    ],
                    BLACK.filled(),
                ))
                .map_err(err)?;
                // Our label stays on our bar, unless the mark would cross
                // it (a label is about 12 px high): then it goes above the
                // mark.
                let crosses = |top: f64| p >= top && y_of(top) - y_of(p) < 14.0;
                if !label_at.is_finite() || crosses(label_at) {
                    label_at = p;
                }
            }
            if let Some(label) = s.labels.get(g).filter(|l| !l.is_empty()) {
                if label_at.is_finite() {
                    let style = TextStyle::from(("sans-serif", 10).into_font())
                        .pos(Pos::new(HPos::Center, VPos::Bottom));
                    plot.draw(&Text::new(
                        label.clone(),
                        at(mid, y_of(label_at) - 3.0),
                        style,
                    ))
                    .map_err(err)?;
                }
            }
        }
    }
    // The legend: one swatch per system, top left, above the bars; the
    // paper's mark last when any bar has one.
    let has_paper = b
        .series
        .iter()
        .any(|s| s.paper.iter().any(|p| p.is_finite()));
    for (i, s) in b.series.iter().enumerate() {
        let c = colour(&s.name, i);
        let y = 4 + 13 * i as i32;
        let x = 6;
        plot.draw(&Rectangle::new([(x, y), (x + 9, y + 9)], c.filled()))
            .map_err(err)?;
        plot.draw(&Text::new(
            s.name.clone(),
            (x + 12, y),
            ("sans-serif", 10).into_font(),
        ))
        .map_err(err)?;
    }
    if has_paper {
        let y = 4 + 13 * b.series.len() as i32;
        plot.draw(&Rectangle::new([(5, y + 3), (16, y + 6)], BLACK.filled()))
            .map_err(err)?;
        plot.draw(&Text::new(
            "the paper".to_string(),
            (18, y),
            ("sans-serif", 10).into_font(),
        ))
        .map_err(err)?;
    }
    // Each group's label under its bars, and its extent, by hand.
    let mut svg = String::new();
    for (g, name) in b.groups.iter().enumerate() {
        if name.is_empty() {
            // A single unnamed group (Fig 10) has no label.
            continue;
        }
        let left = x0 as f64 + px_per_group * g as f64;
        let (size, lines) = fit_label(name, px_per_group - 4.0);
        let cx = left + px_per_group / 2.0;
        svg += &format!(
            "<rect class=\"group-extent\" data-panel=\"{panel}\" data-group=\"{g}\" x=\"{left:.1}\" y=\"{y1}\" width=\"{px_per_group:.1}\" height=\"30\" fill=\"none\" stroke=\"none\"/>\n"
        );
        svg += &format!(
            "<text class=\"group-label\" data-panel=\"{panel}\" data-group=\"{g}\" x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-family=\"sans-serif\" font-size=\"{size}\" fill=\"#000000\">",
            y1 as f64 + 4.0 + size
        );
        for (k, line) in lines.iter().enumerate() {
            let dy = if k == 0 { 0.0 } else { size + 1.0 };
            svg += &format!(
                "<tspan x=\"{cx:.1}\" dy=\"{dy}\">{}</tspan>",
                xml_escape(line)
            );
        }
        svg += "</text>\n";
    }
    Ok(svg)
}

fn draw_lines(l: &LineChart, area: &Area) -> Result<(), String> {
    let xs = || l.series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let mut x_min = xs().filter(|x| x.is_finite()).fold(f64::INFINITY, f64::min);
    let mut x_max = xs()
        .filter(|x| x.is_finite())
        .fold(f64::NEG_INFINITY, f64::max);
    if !x_min.is_finite() {
        (x_min, x_max) = (0.0, 1.0);
    }
    if l.x_log2 {
        x_min = x_min.max(1e-3);
    }
    if x_max <= x_min {
        x_max = x_min + 1.0;
    }
    // Each point's top: its value and its error bar.
    let ys = || {
        l.series.iter().flat_map(|s| {
            let err = |i: usize| {
                s.errors
                    .get(i)
                    .copied()
                    .filter(|e| e.is_finite())
                    .unwrap_or(0.0)
            };
            s.points.iter().enumerate().map(move |(i, p)| p.1 + err(i))
        })
    };
    // Fractions (a CDF) end just above 1; no legend headroom is needed, as
    // the legend sits lower right.
    let top = if ys().any(|y| y > 0.0) && ys().all(|y| y <= 1.0) {
        1.05
    } else {
        top_of(ys())
    };
    // The two axes differ in type, so the same drawing is spelled once for
    // both.
    macro_rules! draw_on {
        ($x_range:expr) => {{
            let mut chart = builder(area, &l.title)
                .build_cartesian_2d($x_range, 0.0..top)
                .map_err(err)?;
            mesh!(chart, &l.x_label, &l.y_label);
            series_and_markers(&mut chart, l, top)
        }};
    }
    if l.x_log2 {
        let keys: Vec<f64> = (0..=16)
            .map(|k| f64::from(1u32 << k))
            .filter(|k| *k >= x_min && *k <= x_max)
            .collect();
        draw_on!((x_min..x_max).log_scale().with_key_points(keys))
    } else {
        draw_on!(x_min..x_max)
    }
}

fn draw_scatter(c: &ScatterChart, area: &Area) -> Result<(), String> {
    let all: Vec<f64> = c
        .series
        .iter()
        .flat_map(|s| s.points.iter().flat_map(|p| [p.0, p.1]))
        .filter(|v| v.is_finite())
        .collect();
    let lo = all.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = all.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let log = lo > 0.0 && hi / lo > 20.0;
    macro_rules! draw_on {
        ($range:expr, $lo:expr, $hi:expr) => {{
            let mut chart = builder(area, &c.title)
                .build_cartesian_2d($range.clone(), $range)
                .map_err(err)?;
            mesh!(chart, &c.x_label, &c.y_label);
            let grey = RGBColor(0x90, 0x90, 0x90);
            chart
                .draw_series(Polyline::new(
                    vec![($lo, $lo), ($hi, $hi)],
                    grey.stroke_width(1),
                ))
                .map_err(err)?
                .label("predicted = measured")
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 14, y)], grey.stroke_width(1))
                });
            for (i, s) in c.series.iter().enumerate() {
                let col = colour(&s.name, i);
                let pts: Vec<(f64, f64)> = s
                    .points
                    .iter()
                    .copied()
                    .filter(|(x, y)| {
                        x.is_finite() && y.is_finite() && (!log || (*x > 0.0 && *y > 0.0))
                    })
                    .collect();
                chart
                    .draw_series(pts.iter().map(|&p| Circle::new(p, 4, col.filled())))
                    .map_err(err)?
                    .label(s.name.clone())
                    .legend(move |(x, y)| Circle::new((x + 7, y), 4, col.filled()));
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::LowerRight)
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .label_font(("sans-serif", 10))
                .draw()
                .map_err(err)?;
        }};
    }
    if log {
        let (a, b) = (lo / 1.5, hi * 1.5);
        draw_on!((a..b).log_scale(), a, b);
    } else {
        let b = if hi.is_finite() && hi > 0.0 {
            hi * 1.05
        } else {
            1.0
        };
        let a = if lo.is_finite() && lo < 0.0 {
            lo * 1.05
        } else {
            0.0
        };
        draw_on!(a..b, a, b);
    }
    Ok(())
}

fn builder<'a, 'b, 's>(area: &'a Area<'s>, title: &'b str) -> ChartBuilder<'a, 'b, SVGBackend<'s>> {
    let mut b = ChartBuilder::on(area);
    b.caption(title, ("sans-serif", 14))
        .margin(8)
        .x_label_area_size(42)
        .y_label_area_size(52);
    b
}

fn series_and_markers<'a, X>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, RangedCoordf64>>,
    l: &LineChart,
    top: f64,
) -> Result<(), String>
where
    X: Ranged<ValueType = f64>,
{
    for (i, s) in l.series.iter().enumerate() {
        let c = colour(&s.name, i);
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .copied()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .collect();
        chart
            .draw_series(Polyline::new(pts.clone(), c.stroke_width(2)))
            .map_err(err)?
            .label(s.name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], c.stroke_width(2)));
        if pts.len() <= 32 {
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 3, c.filled())))
                .map_err(err)?;
        }
        // Error bars, one standard deviation each way.
        let bars: Vec<_> = s
            .points
            .iter()
            .zip(&s.errors)
            .filter(|((x, y), e)| x.is_finite() && y.is_finite() && e.is_finite() && **e > 0.0)
            .map(|(&(x, y), &e)| {
                PathElement::new(vec![(x, (y - e).max(0.0)), (x, y + e)], c.stroke_width(1))
            })
            .collect();
        chart.draw_series(bars).map_err(err)?;
    }
    for (x, label) in &l.markers {
        let grey = RGBColor(0x60, 0x60, 0x60);
        chart
            .draw_series(Polyline::new(
                vec![(*x, 0.0), (*x, top)],
                grey.stroke_width(1),
            ))
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(Text::new(
                label.clone(),
                (*x, top * 0.97),
                ("sans-serif", 10).into_font(),
            )))
            .map_err(err)?;
    }
    if !l.series.is_empty() {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .label_font(("sans-serif", 10))
            .draw()
            .map_err(err)?;
    }
    Ok(())
}

/// Axis numbers the way a reader skims them: 450K, 1.5M, 0.25.
pub fn short_number(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if a >= 1e3 {
        format!("{}K", trim(v / 1e3))
    } else {
        trim(v)
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parses(svg: &str) -> roxmltree::Document<'_> {
        roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("{e}\n{svg}"))
    }

    fn texts(doc: &roxmltree::Document) -> Vec<String> {
        doc.descendants()
            .filter(|n| n.has_tag_name("text"))
            .map(|n| {
                let t: String = n
                    .descendants()
                    .filter(|d| d.is_text())
                    .filter_map(|d| d.text())
                    .collect();
                t.trim().to_string()
            })
            .collect()
    }

    #[test]
    fn bars_carry_their_labels_and_groups() {
        let fig = Figure {
            title: "Fig 10".into(),
            panels: vec![Panel::Bars(BarChart {
                title: "(d) interrupts".into(),
                y_label: "irq/s".into(),
                groups: vec!["1 thread".into(), "2 threads".into()],
                series: vec![
                    BarSeries {
                        name: "cint".into(),
                        values: vec![100.0, 200.0],
                        labels: vec!["1.00".into(), "1.00".into()],
                        ..Default::default()
                    },
                    BarSeries {
                        name: "default".into(),
                        values: vec![274.0, f64::NAN],
                        labels: vec!["2.74".into(), String::new()],
                        ..Default::default()
                    },
                ],
            })],
        };
        let svg = fig.render().unwrap();
        let doc = parses(&svg);
        let t = texts(&doc);
        for want in [
            "Fig 10",
            "(d) interrupts",
            "2.74",
            "1 thread",
            "2 threads",
            "default",
        ] {
            assert!(t.iter().any(|s| s == want), "{want} missing from {t:?}");
        }
        // Three bars drawn (the NaN is a gap), plus two legend swatches.
        let filled = |c: RGBColor| format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2);
        let rects = |c: RGBColor| {
            doc.descendants()
                .filter(|n| n.has_tag_name("rect"))
                .filter(|n| n.attribute("fill") == Some(filled(c).as_str()))
                .count()
        };
        assert_eq!(rects(colour("cint", 0)), 3);
        assert_eq!(rects(colour("default", 1)), 2);
    }

    /// The attribute `name` of `n` as a number.
    fn num(n: roxmltree::Node, name: &str) -> f64 {
        n.attribute(name)
            .and_then(|v| v.parse().ok())
            .unwrap_or(f64::NAN)
    }

    #[test]
    fn group_labels_sit_under_their_bars() {
        // Fig 11's shape: seven groups of two bars (its labels drifted left
        // of their bars, the further right the more).
        let groups: Vec<String> = [4, 8, 16, 32, 64, 128, 256]
            .iter()
            .map(|t| t.to_string())
            .collect();
        let series = |name: &str, v: f64| BarSeries {
            name: name.into(),
            values: vec![v; groups.len()],
            ..Default::default()
        };
        let chart = BarChart {
            title: "(c) sync latency".into(),
            y_label: "us".into(),
            groups: groups.clone(),
            series: vec![series("cint", 20.0), series("adaptive", 600.0)],
        };
        let svg = chart.render().unwrap();
        let doc = parses(&svg);
        let fill = |c: RGBColor| format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2);
        // The bars (the legend's 9 px swatches left out), left to right.
        let centres = |c: RGBColor| {
            let mut v: Vec<f64> = doc
                .descendants()
                .filter(|n| n.has_tag_name("rect") && n.attribute("fill") == Some(fill(c).as_str()))
                .filter(|n| num(*n, "width") > 9.5)
                .map(|n| num(n, "x") + num(n, "width") / 2.0)
                .collect();
            v.sort_by(f64::total_cmp);
            v
        };
        let (cint, adaptive) = (centres(colour("cint", 0)), centres(colour("adaptive", 1)));
        assert_eq!((cint.len(), adaptive.len()), (7, 7), "{svg}");
        let labels: Vec<_> = doc
            .descendants()
            .filter(|n| n.attribute("class") == Some("group-label"))
            .collect();
        let extents: Vec<_> = doc
            .descendants()
            .filter(|n| n.attribute("class") == Some("group-extent"))
            .collect();
        assert_eq!((labels.len(), extents.len()), (7, 7));
        for (g, (label, extent)) in labels.iter().zip(&extents).enumerate() {
            let text: String = label
                .descendants()
                .filter(|n| n.is_text())
                .filter_map(|n| n.text())
                .collect();
            assert_eq!(text, groups[g]);
            let x = num(*label, "x");
            let middle = (cint[g] + adaptive[g]) / 2.0;
            assert!(
                (x - middle).abs() <= 1.0,
                "group {g}: label at {x}, its bars' middle {middle}"
            );
            let (left, width) = (num(*extent, "x"), num(*extent, "width"));
            assert!(
                cint[g] > left && adaptive[g] < left + width,
                "group {g}'s bars leave its extent"
            );
        }
    }

    #[test]
    fn long_group_labels_shrink_then_wrap_to_their_width() {
        let (size, lines) = fit_label("1 thread", 80.0);
        assert_eq!((size, lines), (GROUP_FONT, vec!["1 thread".to_string()]));
        let (size, lines) = fit_label("async throttled by the cgroup", 60.0);
        assert_eq!(lines.len(), 2, "{lines:?}");
        for l in &lines {
            assert!(
                l.chars().count() as f64 * GLYPH_EM * size <= 60.0,
                "{l} at {size}"
            );
        }
    }

    #[test]
    fn error_bars_and_the_papers_marks_are_drawn() {
        let chart = BarChart {
            groups: vec!["".into()],
            series: vec![
                BarSeries {
                    name: "cint".into(),
                    values: vec![100.0],
                    errors: vec![5.0],
                    ..Default::default()
                },
                BarSeries {
                    name: "default".into(),
                    values: vec![200.0],
                    errors: vec![f64::NAN],
                    paper: vec![274.0],
                    labels: vec!["2.00".into()],
                },
            ],
            ..Default::default()
        };
        let svg = chart.render().unwrap();
        let doc = parses(&svg);
        let black =
            |n: &roxmltree::Node| n.attribute("fill") == Some("#000000") && n.has_tag_name("rect");
        // The paper's mark and the legend's.
        assert_eq!(doc.descendants().filter(black).count(), 2, "{svg}");
        // One error bar: a stem and two caps.
        let ink = doc
            .descendants()
            .filter(|n| n.has_tag_name("polyline") && n.attribute("stroke") == Some("#202020"))
            .count();
        assert_eq!(ink, 3, "{svg}");
        // The mark (274) is over the label's place on its bar (200): the
        // label goes above the mark, as high as the axis (top 274 x 1.6)
        // allows.
        assert!(texts(&doc).iter().any(|t| t == "the paper"));
    }

    #[test]
    fn lines_on_a_log_axis_parse_with_markers() {
        let chart = LineChart {
            title: "thr sweep".into(),
            x_label: "thr".into(),
            y_label: "IOPS".into(),
            series: vec![LineSeries {
                name: "optane".into(),
                points: vec![(1.0, 1e5), (32.0, 4.5e5), (255.0, 4.6e5)],
                ..Default::default()
            }],
            x_log2: true,
            markers: vec![(32.0, "thr = 32".into())],
        };
        let svg = chart.render().unwrap();
        let doc = parses(&svg);
        let t = texts(&doc);
        assert!(t.iter().any(|s| s == "thr = 32"), "{t:?}");
        assert!(t.iter().any(|s| s == "32"), "a power-of-two tick: {t:?}");
        assert!(doc.descendants().any(|n| n.has_tag_name("polyline")));
    }

    #[test]
    fn a_scatter_draws_each_point_and_the_diagonal() {
        let series = |name: &str, pts: Vec<(f64, f64)>| LineSeries {
            name: name.into(),
            points: pts,
            errors: Vec::new(),
        };
        let c = ScatterChart {
            title: "IOPS".into(),
            x_label: "measured".into(),
            y_label: "predicted".into(),
            series: vec![
                series("disk", vec![(1e3, 2e3), (5e4, 4e4)]),
                series("zram", vec![(1e5, f64::NAN), (2e5, 1e5)]),
            ],
        };
        let svg = c.render().unwrap();
        let doc = parses(&svg);
        // Three finite points and the two legend marks; the NaN is left out.
        let circles = doc
            .descendants()
            .filter(|n| n.has_tag_name("circle"))
            .count();
        assert_eq!(circles, 3 + 2, "{svg}");
        assert!(svg.contains("predicted = measured"));
    }

    #[test]
    fn empty_charts_still_render() {
        let svg = Figure::default().render().unwrap();
        parses(&svg);
        let svg = LineChart::default().render().unwrap();
        parses(&svg);
    }

    #[test]
    fn numbers_are_short() {
        assert_eq!(short_number(450_000.0), "450K");
        assert_eq!(short_number(1_500_000.0), "1.5M");
        assert_eq!(short_number(0.25), "0.25");
        assert_eq!(short_number(-0.0001), "0");
    }
}
