//! Figures as self-contained SVG, drawn the way the paper draws them: a row
//! of panels, grouped bars with a label above each bar (TOS Figs 8-21 label
//! bars with their value relative to cint), or lines over a swept parameter.
//!
//! Plain data in, an SVG string out: the caller decides what the labels say
//! and where the file goes. Colours follow the system's name, so cint is the
//! same colour in every figure of a report.

use plotters::coord::combinators::{BindKeyPoints, IntoLogRange};
use plotters::coord::ranged1d::{IntoSegmentedCoord, SegmentValue};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::series::LineSeries as Polyline;
use plotters::style::text_anchor::{HPos, Pos, VPos};

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

#[derive(Clone, Debug, Default)]
pub struct LineSeries {
    pub name: String,
    pub points: Vec<(f64, f64)>,
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
        {
            let root = SVGBackend::with_string(&mut out, (PANEL_W * n, PANEL_H + TITLE_H))
                .into_drawing_area();
            root.fill(&WHITE).map_err(err)?;
            let (top, body) = root.split_vertically(TITLE_H);
            top.titled(&self.title, ("sans-serif", 18)).map_err(err)?;
            let areas = body.split_evenly((1, n as usize));
            for (panel, area) in self.panels.iter().zip(areas.iter()) {
                match panel {
                    Panel::Bars(b) => draw_bars(b, area)?,
                    Panel::Lines(l) => draw_lines(l, area)?,
                }
            }
            root.present().map_err(err)?;
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

fn draw_bars(b: &BarChart, area: &Area) -> Result<(), String> {
    let groups = b.groups.len().max(1);
    let top = top_of(b.series.iter().flat_map(|s| s.values.iter().copied()));
    let mut chart = ChartBuilder::on(area)
        .caption(&b.title, ("sans-serif", 14))
        .margin(8)
        .x_label_area_size(24)
        .y_label_area_size(52)
        .build_cartesian_2d((0..groups).into_segmented(), 0.0..top)
        .map_err(err)?;
    let names = b.groups.clone();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .light_line_style(TRANSPARENT)
        .y_desc(&b.y_label)
        .x_label_formatter(&|v| match v {
            SegmentValue::CenterOf(g) => names.get(*g).cloned().unwrap_or_default(),
            _ => String::new(),
        })
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
    for (i, s) in b.series.iter().enumerate() {
        let c = colour(&s.name, i);
        for (g, &v) in s.values.iter().enumerate() {
            if !v.is_finite() {
                continue;
            }
            let left = x0 as f64 + px_per_group * (g as f64 + 0.1 + width * i as f64);
            let right = left + px_per_group * width;
            let rect = Rectangle::new(
                [
                    (left.round() as i32 - x0, y_of(v).round() as i32 - y0),
                    (right.round() as i32 - x0, y_of(0.0).round() as i32 - y0),
                ],
                c.filled(),
            );
            plot.draw(&rect).map_err(err)?;
            if let Some(label) = s.labels.get(g).filter(|l| !l.is_empty()) {
                let style = TextStyle::from(("sans-serif", 10).into_font())
                    .pos(Pos::new(HPos::Center, VPos::Bottom));
                plot.draw(&Text::new(
                    label.clone(),
                    (
                        ((left + right) / 2.0).round() as i32 - x0,
                        y_of(v).round() as i32 - y0 - 2,
                    ),
                    style,
                ))
                .map_err(err)?;
            }
        }
    }
    // The legend: one swatch per system, top left, above the bars.
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
    Ok(())
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
    let ys = || l.series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
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
            chart
                .configure_mesh()
                .x_desc(&l.x_label)
                .y_desc(&l.y_label)
                .x_label_formatter(&|v| short_number(*v))
                .y_label_formatter(&|v| short_number(*v))
                .light_line_style(TRANSPARENT)
                .label_style(("sans-serif", 11))
                .draw()
                .map_err(err)?;
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
            .filter_map(|n| n.text().map(|t| t.trim().to_string()))
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
                    },
                    BarSeries {
                        name: "default".into(),
                        values: vec![274.0, f64::NAN],
                        labels: vec!["2.74".into(), String::new()],
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

    #[test]
    fn lines_on_a_log_axis_parse_with_markers() {
        let chart = LineChart {
            title: "thr sweep".into(),
            x_label: "thr".into(),
            y_label: "IOPS".into(),
            series: vec![LineSeries {
                name: "optane".into(),
                points: vec![(1.0, 1e5), (32.0, 4.5e5), (255.0, 4.6e5)],
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
