//! Laying a chart plan out and drawing it on any plotters backend: title, legend, bars with
//! their value labels, the axis and the reference lines; and the SVG form of a plan.

use plotters::backend::{DrawingBackend, SVGBackend};
use plotters::chart::ChartBuilder;
use plotters::coord::combinators::{IntoLogRange, LogCoord};
use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::drawing::{DrawingArea, IntoDrawingArea};
use plotters::element::{DashedPathElement, PathElement, Rectangle, Text};
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{Color, IntoFont, RGBColor, ShapeStyle, TextStyle, TRANSPARENT, WHITE};

use super::error::{draw_error, ChartError, DrawError};
use super::font::{ensure_font, FAMILY, LABEL_PT, TICK_PT, TITLE_PT, VALUE_PT};
use super::plan::{Plan, RefLine, Series, Unit, GREY, INK, LABEL_GAP, MAX_LABEL_AREA};

/// Every chart's width in pixels.
pub(super) const WIDTH: u32 = 1000;
const MARGIN: i32 = 24;
const RIGHT_MARGIN: i32 = 44;
const TITLE_H: u32 = 52;
const LEGEND_H: u32 = 28;
const REF_ROW_H: u32 = 20;
const X_AXIS_H: u32 = 50;
const BOTTOM_MARGIN: u32 = 10;

impl Plan {
    fn row_h(&self) -> u32 {
        if self.series.len() > 1 {
            46
        } else {
            30
        }
    }

    fn header_h(&self) -> u32 {
        let legend = if self.series.len() > 1 { LEGEND_H } else { 0 };
        let refs = self.refs.len() as u32 * REF_ROW_H;
        TITLE_H + legend + refs + if refs > 0 { 6 } else { 0 }
    }

    pub(super) fn height(&self) -> u32 {
        self.header_h() + self.rows.len() as u32 * self.row_h() + X_AXIS_H + BOTTOM_MARGIN
    }

    /// Every value drawn, ignoring the absent ones.
    fn values(&self) -> impl Iterator<Item = f64> + '_ {
        self.rows
            .iter()
            .flat_map(|r| r.values.iter().flatten().copied())
    }
}

fn style(pt: u32, color: RGBColor) -> TextStyle<'static> {
    (FAMILY, pt).into_font().color(&color)
}

fn text_w<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, text: &str, pt: u32) -> u32 {
    root.estimate_text_size(text, &style(pt, INK))
        .map_or(text.chars().count() as u32 * pt * 2 / 3, |(w, _)| w)
}

/// Where bars start and end on the x axis, leaving room right of each bar for its value label
/// and right of each reference line for its name.
fn x_bounds<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    plan: &Plan,
    plot_w: u32,
) -> (f64, f64) {
    let mut marks: Vec<(f64, u32)> = plan
        .values()
        .map(|v| (v, text_w(root, &plan.unit.format(v), VALUE_PT) + 12))
        .collect();
    marks.extend(
        plan.refs
            .iter()
            .map(|r| (r.at, text_w(root, &r.label, VALUE_PT) + 12)),
    );
    let max = marks.iter().map(|m| m.0).fold(0.0, f64::max);
    let lo = if plan.log { log_floor(plan, max) } else { 0.0 };
    let axis = |v: f64| if plan.log { v.log10() } else { v };
    let (alo, mut ahi) = (axis(lo), axis(max.max(10.0)));
    if plan.log {
        ahi = ahi.max(alo + 2.0);
    }
    for (v, px) in marks {
        // The label's share of the plot width must lie beyond the value.
        let f = (f64::from(px) / f64::from(plot_w)).min(0.5);
        ahi = ahi.max((axis(v.max(lo)) - f * alo) / (1.0 - f));
    }
    let hi = if plan.log { 10f64.powf(ahi) } else { ahi };
    (lo, hi)
}

/// A power of ten at or below the smallest positive value (at least 1 token or 1 µs).
fn log_floor(plan: &Plan, max: f64) -> f64 {
    let least = match plan.unit {
        Unit::Tokens => 1.0,
        Unit::Millis => 0.001,
    };
    let min = plan.values().filter(|v| *v > 0.0).fold(max, f64::min);
    10f64.powf(min.max(least).log10().floor())
}

pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    plan: &Plan,
    title: &str,
) -> Result<(), DrawError>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    root.draw(&Text::new(
        title.to_string(),
        (MARGIN, 16),
        style(TITLE_PT, INK),
    ))?;
    if plan.series.len() > 1 {
        draw_legend(root, plan.series)?;
    }
    let longest = plan
        .rows
        .iter()
        .map(|r| text_w(root, &r.label, LABEL_PT))
        .max();
    let label_w = (longest.unwrap_or(0) + LABEL_GAP).min(MAX_LABEL_AREA);
    let plot_w = WIDTH - MARGIN as u32 - RIGHT_MARGIN as u32 - label_w;
    let (lo, hi) = x_bounds(root, plan, plot_w);
    let body = root.margin(plan.header_h(), 0, 0, 0);
    let layout = Layout { lo, label_w };
    if plan.log {
        // A hair below `lo`, so rounding never drops the first tick.
        let x: LogCoord<f64> = (lo * 0.999..hi).log_scale().into();
        plot(root, &body, plan, layout, x)
    } else {
        plot(root, &body, plan, layout, RangedCoordf64::from(lo..hi))
    }
}

fn draw_legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    series: &[Series],
) -> Result<(), DrawError>
where
    DB::ErrorType: 'static,
{
    let y = TITLE_H as i32 + 2;
    let mut x = MARGIN;
    for s in series {
        root.draw(&Rectangle::new(
            [(x, y), (x + 16, y + 16)],
            s.color.filled(),
        ))?;
        let pos = Pos::new(HPos::Left, VPos::Center);
        root.draw(&Text::new(
            s.name,
            (x + 22, y + 8),
            style(LABEL_PT, INK).pos(pos),
        ))?;
        x += 22 + text_w(root, s.name, LABEL_PT) as i32 + 28;
    }
    Ok(())
}

#[derive(Clone, Copy)]
struct Layout {
    lo: f64,
    label_w: u32,
}

fn plot<DB, X>(
    root: &DrawingArea<DB, Shift>,
    body: &DrawingArea<DB, Shift>,
    plan: &Plan,
    layout: Layout,
    x: X,
) -> Result<(), DrawError>
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let n = plan.rows.len();
    let mut chart = ChartBuilder::on(body)
        .margin_left(MARGIN)
        .margin_right(RIGHT_MARGIN)
        .margin_bottom(BOTTOM_MARGIN)
        .y_label_area_size(layout.label_w)
        .x_label_area_size(X_AXIS_H)
        .build_cartesian_2d(x, 0f64..n as f64)?;
    let unit = plan.unit;
    let tick = |v: &f64| unit.format(*v);
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_labels(8)
        .x_label_formatter(&tick)
        .x_desc(plan.x_desc)
        .axis_desc_style(style(LABEL_PT, INK))
        .label_style(style(TICK_PT, INK))
        .bold_line_style(RGBColor(0xDD, 0xDD, 0xDD))
        .light_line_style(TRANSPARENT)
        .axis_style(GREY)
        .draw()?;

    let lo = layout.lo;
    let band = 0.72 / plan.series.len() as f64;
    let mut values = Vec::new();
    for (i, row) in plan.rows.iter().enumerate() {
        let base = (n - 1 - i) as f64;
        let (left, mid) = chart.backend_coord(&(lo, base + 0.5));
        let pos = Pos::new(HPos::Right, VPos::Center);
        root.draw(&Text::new(
            row.label.clone(),
            (left - LABEL_GAP as i32 / 2, mid),
            style(LABEL_PT, INK).pos(pos),
        ))?;
        for (s, (series, value)) in plan.series.iter().zip(&row.values).enumerate() {
            let Some(v) = *value else { continue };
            let top = base + 0.86 - s as f64 * band;
            let end = v.max(lo);
            let bar = Rectangle::new([(lo, top - band), (end, top)], series.color.filled());
            chart.draw_series(std::iter::once(bar))?;
            let (px, py) = chart.backend_coord(&(end, top - band / 2.0));
            values.push((unit.format(v), (px + 5, py)));
        }
    }
    // Over the bars, under the value labels.
    draw_refs(root, &chart.plotting_area().get_pixel_range(), plan, |v| {
        chart.backend_coord(&(v, 0.0)).0
    })?;
    for (text, at) in values {
        value_label(root, &text, at)?;
    }
    Ok(())
}

/// A bar's value right of its end, on white so a reference line never runs through it.
fn value_label<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    text: &str,
    (x, y): (i32, i32),
) -> Result<(), DrawError>
where
    DB::ErrorType: 'static,
{
    let w = text_w(root, text, VALUE_PT) as i32;
    let half = VALUE_PT as i32 / 2;
    root.draw(&Rectangle::new(
        [(x - 2, y - half), (x + w + 2, y + half)],
        WHITE.filled(),
    ))?;
    let pos = Pos::new(HPos::Left, VPos::Center);
    root.draw(&Text::new(
        text.to_string(),
        (x, y),
        style(VALUE_PT, INK).pos(pos),
    ))?;
    Ok(())
}

/// Reference lines, each named on its own row above the bars, smallest value first, so a name
/// never crosses another line.
fn draw_refs<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    plot: &(std::ops::Range<i32>, std::ops::Range<i32>),
    plan: &Plan,
    x_of: impl Fn(f64) -> i32,
) -> Result<(), DrawError>
where
    DB::ErrorType: 'static,
{
    let mut refs: Vec<&RefLine> = plan.refs.iter().collect();
    refs.sort_by(|a, b| a.at.total_cmp(&b.at));
    let first_row = (plan.header_h() - refs.len() as u32 * REF_ROW_H - 6) as i32;
    for (i, r) in refs.iter().enumerate() {
        let x = x_of(r.at);
        let y = first_row + i as i32 * REF_ROW_H as i32 + REF_ROW_H as i32 / 2;
        let w = text_w(root, &r.label, VALUE_PT) as i32;
        let (tx, h) = if x + 6 + w <= plot.0.end {
            (x + 6, HPos::Left)
        } else {
            (x - 6, HPos::Right)
        };
        let text_style = style(VALUE_PT, r.color).pos(Pos::new(h, VPos::Center));
        root.draw(&Text::new(r.label.clone(), (tx, y), text_style))?;
        let line_style = ShapeStyle {
            color: r.color.to_rgba(),
            filled: false,
            stroke_width: if r.dashed { 1 } else { 2 },
        };
        let points = [(x, y - 6), (x, plot.1.end)];
        if r.dashed {
            root.draw(&DashedPathElement::new(points, 5, 4, line_style))?;
        } else {
            root.draw(&PathElement::new(points, line_style))?;
        }
    }
    Ok(())
}

/// The SVG text of a plan, titled `title`; `stem` names the chart in errors.
pub(super) fn svg_of(plan: &Plan, title: &str, stem: &'static str) -> Result<String, ChartError> {
    ensure_font()?;
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, (WIDTH, plan.height())).into_drawing_area();
        draw(&root, plan, title).map_err(|source| draw_error(stem, source))?;
        root.present().map_err(|e| draw_error(stem, Box::new(e)))?;
    }
    Ok(text)
}
