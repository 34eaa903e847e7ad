//! PNG and SVG charts of an audit report: the schema tax per server, the most expensive tools,
//! and each probe's raw vs budgeted tokens and latency. Drawn with plotters and an embedded
//! DejaVu Sans, so no system font is needed; characters the font lacks are spelled `[U+XXXX]`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use ab_glyph::{Font, FontRef, ScaleFont};
use plotters::backend::{BitMapBackend, DrawingBackend, SVGBackend};
use plotters::chart::ChartBuilder;
use plotters::coord::combinators::{IntoLogRange, LogCoord};
use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::drawing::{DrawingArea, IntoDrawingArea};
use plotters::element::{DashedPathElement, PathElement, Rectangle, Text};
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{
    register_font, Color, FontStyle, IntoFont, RGBColor, ShapeStyle, TextStyle, TRANSPARENT, WHITE,
};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind, FontTransform,
};

use super::{Report, StatsRow, Status};
use crate::units::{millis, thousands};

/// One chart of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChartKind {
    SchemaTax,
    TopTools,
    ProbeTokens,
    ProbeLatency,
}

impl ChartKind {
    pub const ALL: [ChartKind; 4] = [
        ChartKind::SchemaTax,
        ChartKind::TopTools,
        ChartKind::ProbeTokens,
        ChartKind::ProbeLatency,
    ];

    /// The file name without its extension.
    pub fn file_stem(self) -> &'static str {
        match self {
            ChartKind::SchemaTax => "schema-tax",
            ChartKind::TopTools => "top-tools",
            ChartKind::ProbeTokens => "probe-tokens",
            ChartKind::ProbeLatency => "probe-latency",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            ChartKind::SchemaTax => "Schema tax per server",
            ChartKind::TopTools => "Most expensive tools (top 15)",
            ChartKind::ProbeTokens => "Probe results: raw vs budgeted tokens",
            ChartKind::ProbeLatency => "Probe latency: upstream call vs budget engine",
        }
    }
}

type DrawError = Box<dyn std::error::Error + Send + Sync>;

#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    #[error("failed to load the embedded chart font")]
    Font,
    #[error("failed to draw the {chart} chart")]
    Draw {
        chart: &'static str,
        #[source]
        source: DrawError,
    },
    #[error("failed to encode the {chart} chart as PNG")]
    Encode {
        chart: &'static str,
        #[source]
        source: png::EncodingError,
    },
    #[error("failed to write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// SVG text of one chart; None when the report has no data for it (e.g. no probes).
pub fn render_svg(report: &Report, kind: ChartKind) -> Option<String> {
    svg(report, kind).expect("an SVG drawn into a string with the embedded font cannot fail")
}

/// PNG bytes of one chart; None when the report has no data for it.
pub fn render_png(report: &Report, kind: ChartKind) -> Result<Option<Vec<u8>>, ChartError> {
    let Some(plan) = plan(report, kind) else {
        return Ok(None);
    };
    png_of(&plan, kind.title(), kind.file_stem()).map(Some)
}

fn png_of(plan: &Plan, title: &str, stem: &'static str) -> Result<Vec<u8>, ChartError> {
    ensure_font()?;
    let height = plan.height();
    let mut rgb = vec![255u8; WIDTH as usize * height as usize * 3];
    {
        let backend = Bitmap(BitMapBackend::with_buffer(&mut rgb, (WIDTH, height)));
        let root = backend.into_drawing_area();
        draw(&root, plan, title).map_err(|source| draw_error(stem, source))?;
        root.present().map_err(|e| draw_error(stem, Box::new(e)))?;
    }
    encode_png(&rgb, height).map_err(|source| ChartError::Encode {
        chart: stem,
        source,
    })
}

fn encode_png(rgb: &[u8], height: u32) -> Result<Vec<u8>, png::EncodingError> {
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, WIDTH, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    // Flat colours: best compression with per-row filters makes files under half the size.
    encoder.set_compression(png::Compression::Best);
    encoder.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
    encoder.write_header()?.write_image_data(rgb)?;
    Ok(bytes)
}

/// Write charts/<stem>.svg and charts/<stem>.png under `dir` for every chart with data, each
/// file whole or not at all; returns the paths written.
pub fn write_charts(report: &Report, dir: &Path) -> Result<Vec<PathBuf>, ChartError> {
    let dir = dir.join("charts");
    let mut written = Vec::new();
    for kind in ChartKind::ALL {
        let Some(svg) = svg(report, kind)? else {
            continue;
        };
        let png = render_png(report, kind)?.expect("a chart with SVG data has PNG data");
        for (ext, bytes) in [("svg", svg.as_bytes()), ("png", png.as_slice())] {
            let path = dir.join(format!("{}.{ext}", kind.file_stem()));
            crate::atomic::write_atomic(&path, |w| w.write_all(bytes)).map_err(|source| {
                ChartError::Write {
                    path: path.clone(),
                    source,
                }
            })?;
            written.push(path);
        }
    }
    Ok(written)
}

fn svg(report: &Report, kind: ChartKind) -> Result<Option<String>, ChartError> {
    let Some(plan) = plan(report, kind) else {
        return Ok(None);
    };
    svg_of(&plan, kind.title(), kind.file_stem()).map(Some)
}

fn svg_of(plan: &Plan, title: &str, stem: &'static str) -> Result<String, ChartError> {
    ensure_font()?;
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, (WIDTH, plan.height())).into_drawing_area();
        draw(&root, plan, title).map_err(|source| draw_error(stem, source))?;
        root.present().map_err(|e| draw_error(stem, Box::new(e)))?;
    }
    Ok(text)
}

fn draw_error(chart: &'static str, source: DrawError) -> ChartError {
    ChartError::Draw { chart, source }
}

// ---- the proxy's call log (`stats --chart`) ----------------------------------------------

/// The title of the `stats` chart.
pub const STATS_TITLE: &str = "Proxied calls per tool: raw vs returned tokens (p95)";

/// The `stats` chart of a call log's rows (as SVG or PNG by `png`): each tool's p95 raw and
/// returned tokens on a log scale, with Claude Code's limits; None when there are no calls.
pub fn render_stats_chart(rows: &[StatsRow], png: bool) -> Result<Option<Vec<u8>>, ChartError> {
    let Some(plan) = stats_plan(rows) else {
        return Ok(None);
    };
    let bytes = if png {
        png_of(&plan, STATS_TITLE, "stats")?
    } else {
        svg_of(&plan, STATS_TITLE, "stats")?.into_bytes()
    };
    Ok(Some(bytes))
}

const STATS_SERIES: &[Series] = &[
    Series {
        name: "raw result (p95)",
        color: BLUE,
    },
    Series {
        name: "returned to the client (p95)",
        color: ORANGE,
    },
];

fn stats_plan(rows: &[StatsRow]) -> Option<Plan> {
    let bars = rows
        .iter()
        .map(|r| {
            let calls = if r.calls == 1 { "call" } else { "calls" };
            let label = format!(
                "{} ({} {calls})",
                legible(&format!("{}/{}", r.server, r.tool), LABEL_CHARS - 12),
                thousands(r.calls)
            );
            let values = vec![
                Some(r.raw_tokens_p95 as f64),
                Some(r.returned_tokens_p95 as f64),
            ];
            (r.raw_tokens_p95 as f64, Row { label, values })
        })
        .collect();
    let mut plan = Plan {
        x_desc: "tokens per result, 95th percentile (log scale)",
        unit: Unit::Tokens,
        log: true,
        series: STATS_SERIES,
        rows: sorted_rows(bars),
        refs: claude_code_refs(),
    };
    if plan.rows.is_empty() {
        return None;
    }
    for row in &mut plan.rows {
        row.label = fit_width(&row.label, (MAX_LABEL_AREA - LABEL_GAP) as f32);
    }
    Some(plan)
}

// ---- the font ----------------------------------------------------------------------------

/// The family name charts ask plotters for; SVG viewers draw it with their own sans-serif.
const FAMILY: &str = "sans-serif";

fn font() -> Option<&'static FontRef<'static>> {
    static FONT: OnceLock<Option<FontRef<'static>>> = OnceLock::new();
    FONT.get_or_init(|| FontRef::try_from_slice(dejavu::sans::regular()).ok())
        .as_ref()
}

/// Register the embedded font with plotters, once, before any text is measured or drawn.
fn ensure_font() -> Result<(), ChartError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED
        .get_or_init(|| register_font(FAMILY, FontStyle::Normal, dejavu::sans::regular()).is_ok());
    ok.then_some(()).ok_or(ChartError::Font)
}

/// `label` as the embedded font can draw it: each character it lacks becomes `[U+XXXX]`, and a
/// label over `max_chars` characters is cut, at a character or escape boundary, and ends in `…`.
pub(crate) fn legible(label: &str, max_chars: usize) -> String {
    let pieces: Vec<String> = label
        .chars()
        .map(|c| {
            if drawable(c) {
                c.to_string()
            } else {
                format!("[U+{:04X}]", u32::from(c))
            }
        })
        .collect();
    let total: usize = pieces.iter().map(|p| p.chars().count()).sum();
    if total <= max_chars {
        return pieces.concat();
    }
    let mut out = String::new();
    let mut used = 0;
    for piece in &pieces {
        let n = piece.chars().count();
        if used + n + 1 > max_chars {
            break;
        }
        out.push_str(piece);
        used += n;
    }
    out.push('…');
    out
}

fn drawable(c: char) -> bool {
    !c.is_control() && font().is_some_and(|f| f.glyph_id(c).0 != 0)
}

// ---- what each chart shows ---------------------------------------------------------------

const TOP_TOOLS: usize = 15;
/// Longest row label, in characters (escapes count in full).
const LABEL_CHARS: usize = 48;

const BLUE: RGBColor = RGBColor(0x4C, 0x78, 0xA8);
const ORANGE: RGBColor = RGBColor(0xF5, 0x85, 0x18);
const INK: RGBColor = RGBColor(0x33, 0x33, 0x33);
const DARK_GREY: RGBColor = RGBColor(0x55, 0x55, 0x55);
const GREY: RGBColor = RGBColor(0x99, 0x99, 0x99);
const CAP_RED: RGBColor = RGBColor(0xD6, 0x27, 0x28);

struct Series {
    name: &'static str,
    color: RGBColor,
}

const ONE_SERIES: &[Series] = &[Series {
    name: "tokens",
    color: BLUE,
}];
const TOKEN_SERIES: &[Series] = &[
    Series {
        name: "raw result",
        color: BLUE,
    },
    Series {
        name: "after the budget engine",
        color: ORANGE,
    },
];
const LATENCY_SERIES: &[Series] = &[
    Series {
        name: "upstream call",
        color: BLUE,
    },
    Series {
        name: "budget engine",
        color: ORANGE,
    },
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Tokens,
    Millis,
}

impl Unit {
    fn format(self, v: f64) -> String {
        match self {
            Unit::Tokens => thousands(v.max(0.0).round() as usize),
            Unit::Millis => millis(v),
        }
    }
}

/// One bar group: a label and one value per series (None: no bar).
struct Row {
    label: String,
    values: Vec<Option<f64>>,
}

/// A labelled vertical line across the bars.
struct RefLine {
    at: f64,
    label: String,
    color: RGBColor,
    dashed: bool,
}

/// What one chart draws, worked out from the report before any drawing.
struct Plan {
    x_desc: &'static str,
    unit: Unit,
    log: bool,
    series: &'static [Series],
    /// Top to bottom.
    rows: Vec<Row>,
    refs: Vec<RefLine>,
}

fn plan(report: &Report, kind: ChartKind) -> Option<Plan> {
    let plan = match kind {
        ChartKind::SchemaTax => schema_tax(report),
        ChartKind::TopTools => top_tools(report),
        ChartKind::ProbeTokens => probe_tokens(report),
        ChartKind::ProbeLatency => probe_latency(report),
    };
    let mut plan = (!plan.rows.is_empty()).then_some(plan)?;
    for row in &mut plan.rows {
        row.label = fit_width(&row.label, (MAX_LABEL_AREA - LABEL_GAP) as f32);
    }
    Some(plan)
}

/// `label` cut, ending in `…`, until it is at most `max_px` wide as a row label.
fn fit_width(label: &str, max_px: f32) -> String {
    let size = LABEL_PT as f32;
    let Some(font) = font().filter(|f| advance(f, size, label) > max_px) else {
        return label.to_string();
    };
    let mut chars: Vec<char> = label.trim_end_matches('…').chars().collect();
    while chars.pop().is_some() {
        let cut: String = chars.iter().chain(['…'].iter()).collect();
        if advance(font, size, &cut) <= max_px {
            return cut;
        }
    }
    "…".to_string()
}

fn single(x_desc: &'static str, rows: Vec<(usize, String)>) -> Plan {
    Plan {
        x_desc,
        unit: Unit::Tokens,
        log: false,
        series: ONE_SERIES,
        rows: rows
            .into_iter()
            .map(|(tokens, label)| Row {
                label,
                values: vec![Some(tokens as f64)],
            })
            .collect(),
        refs: Vec::new(),
    }
}

/// Largest first, then by label: the same order on every run.
fn largest_first(rows: &mut [(usize, String)]) {
    rows.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
}

fn schema_tax(report: &Report) -> Plan {
    let mut rows: Vec<(usize, String)> = report
        .servers
        .iter()
        .filter(|s| s.status == Status::Ok)
        .map(|s| {
            let n = s.tools_list.tool_count;
            let tools = if n == 1 { "tool" } else { "tools" };
            let name = legible(&s.name, LABEL_CHARS - 14);
            (
                s.tools_list.model_tokens,
                format!("{name} ({} {tools})", thousands(n)),
            )
        })
        .collect();
    largest_first(&mut rows);
    single("tokens sent to the model every turn (tools/list)", rows)
}

fn top_tools(report: &Report) -> Plan {
    let mut rows: Vec<(usize, String)> = report
        .servers
        .iter()
        .flat_map(|s| {
            s.tools
                .iter()
                .map(|t| (t.model_tokens, probe_label(&s.name, &t.name)))
        })
        .collect();
    largest_first(&mut rows);
    rows.truncate(TOP_TOOLS);
    single("tokens per turn for the tool's definition", rows)
}

fn probe_label(server: &str, tool: &str) -> String {
    legible(&format!("{server}/{tool}"), LABEL_CHARS)
}

fn probe_tokens(report: &Report) -> Plan {
    let mut rows: Vec<(f64, Row)> = Vec::new();
    let mut budgets: BTreeMap<usize, usize> = BTreeMap::new();
    for s in &report.servers {
        for p in &s.probes {
            let Some(raw) = &p.raw else { continue };
            if let Some(b) = &p.budgeted {
                *budgets.entry(b.budget).or_default() += 1;
            }
            let raw_tokens = raw.model_tokens as f64;
            let values = vec![
                Some(raw_tokens),
                p.budgeted.as_ref().map(|b| b.tokens as f64),
            ];
            let label = probe_label(&s.name, &p.tool);
            rows.push((raw_tokens, Row { label, values }));
        }
    }
    let mut refs = Vec::new();
    // The most common budget; among equally common ones, the smallest.
    if let Some((&budget, _)) = budgets
        .iter()
        .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
    {
        refs.push(RefLine {
            at: budget as f64,
            label: format!("budget {}", thousands(budget)),
            color: DARK_GREY,
            dashed: true,
        });
    }
    refs.extend(claude_code_refs());
    Plan {
        x_desc: "tokens per result (log scale)",
        unit: Unit::Tokens,
        log: true,
        series: TOKEN_SERIES,
        rows: sorted_rows(rows),
        refs,
    }
}

/// Claude Code's warning and cap as reference lines (the client limits table is the one place
/// these numbers live).
fn claude_code_refs() -> Vec<RefLine> {
    let (warn, cap) = super::limits::claude_code_token_limits();
    vec![
        RefLine {
            at: warn as f64,
            label: format!("Claude Code warns {}k", warn / 1000),
            color: GREY,
            dashed: true,
        },
        RefLine {
            at: cap as f64,
            label: format!("Claude Code cap {}k", cap / 1000),
            color: CAP_RED,
            dashed: false,
        },
    ]
}

fn probe_latency(report: &Report) -> Plan {
    let rows = report
        .servers
        .iter()
        .flat_map(|s| s.probes.iter().map(move |p| (s, p)))
        .map(|(s, p)| {
            let engine_ms = p.budgeted.as_ref().map(|b| b.engine_us as f64 / 1000.0);
            let label = probe_label(&s.name, &p.tool);
            let values = vec![Some(p.latency_ms), engine_ms];
            (p.latency_ms, Row { label, values })
        })
        .collect();
    Plan {
        x_desc: "milliseconds (log scale)",
        unit: Unit::Millis,
        log: true,
        series: LATENCY_SERIES,
        rows: sorted_rows(rows),
        refs: Vec::new(),
    }
}

fn sorted_rows(mut rows: Vec<(f64, Row)>) -> Vec<Row> {
    rows.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.label.cmp(&b.1.label)));
    rows.into_iter().map(|(_, row)| row).collect()
}

// ---- PNG text ----------------------------------------------------------------------------

/// The bitmap backend with its text drawing replaced: plotters 0.3.7 places each ab_glyph glyph
/// without its left side bearing, which spaces letters unevenly ("scrap e_as_markdown"). Here
/// glyphs are placed at their exact advance, kerned, with the same anchor geometry as plotters,
/// so measured layouts still fit.
struct Bitmap<'a>(BitMapBackend<'a>);

type BitmapError = <BitMapBackend<'static> as DrawingBackend>::ErrorType;

impl DrawingBackend for Bitmap<'_> {
    type ErrorType = BitmapError;

    fn get_size(&self) -> (u32, u32) {
        self.0.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<BitmapError>> {
        self.0.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<BitmapError>> {
        self.0.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<BitmapError>> {
        self.0.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<BitmapError>> {
        self.0.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<BitmapError>> {
        self.0.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<BitmapError>> {
        self.0.fill_polygon(vert, style)
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<BitmapError>> {
        let color = style.color();
        let Some(font) = font().filter(|_| matches!(style.transform(), FontTransform::None)) else {
            return self.0.draw_text(text, style, pos);
        };
        if color.alpha == 0.0 {
            return Ok(());
        }
        let size = style.size() as f32;
        let scaled = font.as_scaled(size);
        let width = advance(font, size, text);
        // plotters' layout box is size / 1.24 high with the baseline size / 2 below its top;
        // centred text sits on a baseline half an x-height below the anchor, as in SVG.
        let height = size / 1.24;
        let anchor = style.anchor();
        let dx = match anchor.h_pos {
            HPos::Left => 0.0,
            HPos::Center => -width / 2.0,
            HPos::Right => -width,
        };
        let baseline = pos.1 as f32
            + match anchor.v_pos {
                VPos::Top => size / 2.0,
                VPos::Center => x_height(font, size) / 2.0,
                VPos::Bottom => size / 2.0 - height,
            };
        let mut x = pos.0 as f32 + dx;
        let mut prev = None;
        let mut coverage = Vec::new();
        for c in text.chars() {
            let id = scaled.glyph_id(c);
            if let Some(p) = prev {
                x += scaled.kern(p, id);
            }
            let glyph = id.with_scale_and_position(size, ab_glyph::point(x, baseline));
            if let Some(outline) = font.outline_glyph(glyph) {
                let b = outline.px_bounds();
                outline.draw(|gx, gy, cover| {
                    let point = (b.min.x as i32 + gx as i32, b.min.y as i32 + gy as i32);
                    coverage.push((point, cover));
                });
            }
            x += scaled.h_advance(id);
            prev = Some(id);
        }
        for (point, cover) in coverage.into_iter().filter(|c| c.1 > 0.0) {
            let alpha = color.alpha * f64::from(cover.min(1.0));
            self.0.draw_pixel(
                point,
                BackendColor {
                    alpha,
                    rgb: color.rgb,
                },
            )?;
        }
        Ok(())
    }
}

/// Height of a lowercase `x` in pixels at `size`.
fn x_height(font: &FontRef<'static>, size: f32) -> f32 {
    let glyph = font
        .glyph_id('x')
        .with_scale_and_position(size, ab_glyph::point(0.0, 0.0));
    font.outline_glyph(glyph)
        .map_or(size / 2.0, |o| -o.px_bounds().min.y)
}

/// Width of `text` in pixels at `size`, kerned, as plotters measures it.
fn advance(font: &FontRef<'static>, size: f32, text: &str) -> f32 {
    let scaled = font.as_scaled(size);
    let mut width = 0.0;
    let mut prev = None;
    for c in text.chars() {
        let id = scaled.glyph_id(c);
        if let Some(p) = prev {
            width += scaled.kern(p, id);
        }
        width += scaled.h_advance(id);
        prev = Some(id);
    }
    width
}

// ---- layout and drawing ------------------------------------------------------------------

const WIDTH: u32 = 1000;
const MARGIN: i32 = 24;
const RIGHT_MARGIN: i32 = 44;
const TITLE_H: u32 = 52;
const LEGEND_H: u32 = 28;
const REF_ROW_H: u32 = 20;
const X_AXIS_H: u32 = 50;
const BOTTOM_MARGIN: u32 = 10;
const MAX_LABEL_AREA: u32 = 420;
/// Between a row label and the axis.
const LABEL_GAP: u32 = 20;

const TITLE_PT: u32 = 24;
const LABEL_PT: u32 = 15;
const VALUE_PT: u32 = 13;
const TICK_PT: u32 = 14;

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

    fn height(&self) -> u32 {
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

fn draw<DB: DrawingBackend>(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{BudgetedCost, ProbeResult, RawCost, ServerReport, ToolCost};

    fn tool(name: &str, model_tokens: usize) -> ToolCost {
        ToolCost {
            name: name.to_string(),
            model_tokens,
            ..ToolCost::default()
        }
    }

    fn probe(tool: &str, latency_ms: f64, raw: usize, budgeted: Option<usize>) -> ProbeResult {
        ProbeResult {
            latency_ms,
            raw: Some(RawCost {
                model_tokens: raw,
                ..RawCost::default()
            }),
            budgeted: budgeted.map(|tokens| BudgetedCost {
                budget: 8000,
                tokens,
                tokens_before: raw,
                strategy: "shrunk".to_string(),
                engine_us: 850,
                spill_path: None,
                note: None,
                ..BudgetedCost::default()
            }),
            ..ProbeResult::new(tool)
        }
    }

    fn server(name: &str, tools: Vec<ToolCost>, probes: Vec<ProbeResult>) -> ServerReport {
        let mut s = ServerReport::new(name, "stdio", "demo", "test");
        s.tools_list.tool_count = tools.len();
        s.tools_list.model_tokens = tools.iter().map(|t| t.model_tokens).sum();
        s.tools = tools;
        s.probes = probes;
        s
    }

    fn report(servers: Vec<ServerReport>) -> Report {
        Report::new(vec!["cl100k_base".to_string()], servers)
    }

    /// Two servers (one with CJK and emoji tool names), probes with raw and budgeted tokens,
    /// one of them over Claude Code's 25k cap, and a failed server that must not be charted.
    fn fixture() -> Report {
        let github = server(
            "github",
            vec![
                tool("search_code", 1_840),
                tool("list_pull_requests", 12_345),
            ],
            vec![
                probe("search_code", 412.0, 61_234, Some(7_950)),
                probe("list_pull_requests", 88.5, 3_100, Some(3_100)),
            ],
        );
        let cjk = server(
            "中文-server",
            vec![tool("搜索", 640), tool("rocket🚀", 75)],
            vec![probe("搜索", 1_250.0, 9_000, None)],
        );
        let mut broken = server("broken", vec![tool("ghost", 99_999)], Vec::new());
        broken.status = Status::Error;
        report(vec![github, cjk, broken])
    }

    fn no_probes() -> Report {
        report(vec![server("solo", vec![tool("ping", 42)], Vec::new())])
    }

    #[test]
    fn legible_escapes_what_the_font_lacks() {
        assert_eq!(legible("search_code", 48), "search_code");
        assert_eq!(legible("café", 48), "café");
        assert_eq!(legible("中a", 48), "[U+4E2D]a");
        assert_eq!(legible("🚀", 48), "[U+1F680]");
        assert_eq!(legible("a\tb", 48), "a[U+0009]b");
    }

    #[test]
    fn legible_truncates_at_a_boundary() {
        assert_eq!(legible("abcdefghij", 10), "abcdefghij");
        assert_eq!(legible("abcdefghijk", 10), "abcdefghi…");
        // An escape is never cut in half.
        assert_eq!(legible("ab中中", 12), "ab[U+4E2D]…");
        assert_eq!(legible("abc", 1), "…");
    }

    #[test]
    fn wide_labels_are_cut_to_the_label_area() {
        let wide = "W".repeat(LABEL_CHARS);
        let max_px = (MAX_LABEL_AREA - LABEL_GAP) as f32;
        let font = font().unwrap();
        assert!(advance(font, LABEL_PT as f32, &wide) > max_px);
        let cut = fit_width(&wide, max_px);
        assert!(cut.ends_with('…') && cut.len() < wide.len(), "{cut}");
        assert!(advance(font, LABEL_PT as f32, &cut) <= max_px);
        assert_eq!(fit_width("demo/read_file", max_px), "demo/read_file");
    }

    #[test]
    fn rows_are_largest_first_and_skip_failed_servers() {
        let r = fixture();
        let tax = plan(&r, ChartKind::SchemaTax).unwrap();
        let labels: Vec<&str> = tax.rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(
            labels,
            ["github (2 tools)", "[U+4E2D][U+6587]-server (2 tools)"]
        );
        let top = plan(&r, ChartKind::TopTools).unwrap();
        assert_eq!(top.rows[0].label, "broken/ghost");
        assert_eq!(top.rows[1].label, "github/list_pull_requests");
        assert_eq!(top.rows.len(), 5);
        let tokens = plan(&r, ChartKind::ProbeTokens).unwrap();
        assert_eq!(tokens.rows[0].values, [Some(61_234.0), Some(7_950.0)]);
        assert_eq!(tokens.rows[1].values, [Some(9_000.0), None]);
        let latency = plan(&r, ChartKind::ProbeLatency).unwrap();
        assert_eq!(latency.rows[0].values, [Some(1_250.0), None]);
        assert_eq!(latency.rows[1].values, [Some(412.0), Some(0.85)]);
    }

    #[test]
    fn top_tools_keeps_fifteen() {
        let tools = (0..20)
            .map(|i| tool(&format!("t{i:02}"), 100 + i))
            .collect();
        let r = report(vec![server("many", tools, Vec::new())]);
        let top = plan(&r, ChartKind::TopTools).unwrap();
        assert_eq!(top.rows.len(), TOP_TOOLS);
        assert_eq!(top.rows[0].label, "many/t19");
    }

    #[test]
    fn the_most_common_budget_is_drawn() {
        let mut r = fixture();
        let mut odd = probe("search_code", 1.0, 500, Some(500));
        odd.budgeted.as_mut().unwrap().budget = 2_000;
        r.servers[1].probes.push(odd);
        let refs = plan(&r, ChartKind::ProbeTokens).unwrap().refs;
        assert_eq!(refs[0].label, "budget 8,000");
    }

    #[test]
    fn every_svg_has_title_axis_and_labels() {
        let r = fixture();
        for kind in ChartKind::ALL {
            let svg = render_svg(&r, kind).unwrap();
            assert!(svg.starts_with("<svg"), "{kind:?}");
            assert!(svg.trim_end().ends_with("</svg>"), "{kind:?}");
            assert_eq!(svg.matches("<text").count(), svg.matches("</text>").count());
            assert!(svg.contains(kind.title()), "{kind:?}");
        }
        let tax = render_svg(&r, ChartKind::SchemaTax).unwrap();
        assert!(tax.contains("tokens sent to the model every turn"));
        assert!(tax.contains("[U+4E2D][U+6587]-server (2 tools)"));
        assert!(tax.contains("14,185"), "value label with separators");
        assert!(!tax.contains("broken"));
        let top = render_svg(&r, ChartKind::TopTools).unwrap();
        assert!(top.contains("rocket[U+1F680]"));
        assert!(top.contains("github/list_pull_requests"));
        let tokens = render_svg(&r, ChartKind::ProbeTokens).unwrap();
        for text in [
            "tokens per result (log scale)",
            "budget 8,000",
            "Claude Code warns 10k",
            "Claude Code cap 25k",
            "61,234",
            "10,000",
            "raw result",
            "after the budget engine",
        ] {
            assert!(tokens.contains(text), "{text}");
        }
        let latency = render_svg(&r, ChartKind::ProbeLatency).unwrap();
        for text in [
            "milliseconds (log scale)",
            "upstream call",
            "budget engine",
            "0.85",
        ] {
            assert!(latency.contains(text), "{text}");
        }
    }

    #[test]
    fn charts_without_data_are_none() {
        let r = no_probes();
        assert!(render_svg(&r, ChartKind::ProbeTokens).is_none());
        assert!(render_svg(&r, ChartKind::ProbeLatency).is_none());
        assert!(render_png(&r, ChartKind::ProbeTokens).unwrap().is_none());
        assert!(render_svg(&r, ChartKind::SchemaTax).is_some());
        let empty = report(Vec::new());
        for kind in ChartKind::ALL {
            assert!(render_svg(&empty, kind).is_none(), "{kind:?}");
        }
    }

    /// Width, height and the share of pixels that are not white.
    fn decode(bytes: &[u8]) -> (u32, u32, f64) {
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        let decoder = png::Decoder::new(bytes);
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        let pixels = &buf[..info.buffer_size()];
        let inked = pixels.chunks(3).filter(|p| p != &[255, 255, 255]).count();
        (
            info.width,
            info.height,
            inked as f64 / (pixels.len() / 3) as f64,
        )
    }

    #[test]
    fn every_png_decodes_and_is_drawn_on() {
        let r = fixture();
        for kind in ChartKind::ALL {
            let bytes = render_png(&r, kind).unwrap().unwrap();
            let plan = plan(&r, kind).unwrap();
            let (w, h, inked) = decode(&bytes);
            assert_eq!((w, h), (WIDTH, plan.height()), "{kind:?}");
            assert!(inked > 0.02, "{kind:?}: {inked}");
        }
    }

    #[test]
    fn write_charts_writes_exactly_what_it_returns() {
        let dir = tempfile::tempdir().unwrap();
        let written = write_charts(&fixture(), dir.path()).unwrap();
        assert_eq!(written.len(), 8);
        let mut on_disk: Vec<PathBuf> = std::fs::read_dir(dir.path().join("charts"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        on_disk.sort();
        let mut expected = written.clone();
        expected.sort();
        assert_eq!(on_disk, expected);
        assert!(written.contains(&dir.path().join("charts/probe-tokens.svg")));

        let dir = tempfile::tempdir().unwrap();
        let written = write_charts(&no_probes(), dir.path()).unwrap();
        let names: Vec<_> = written.iter().map(|p| p.file_name().unwrap()).collect();
        assert_eq!(
            names,
            [
                "schema-tax.svg",
                "schema-tax.png",
                "top-tools.svg",
                "top-tools.png"
            ]
        );
    }

    fn stats_row(tool: &str, calls: usize, raw_p95: usize, returned_p95: usize) -> StatsRow {
        StatsRow {
            server: "demo".into(),
            tool: tool.into(),
            calls,
            errors: 0,
            spilled: 0,
            raw_tokens_p50: raw_p95 / 2,
            raw_tokens_p95: raw_p95,
            raw_tokens_max: raw_p95,
            returned_tokens_p50: returned_p95 / 2,
            returned_tokens_p95: returned_p95,
            returned_tokens_max: returned_p95,
            engine_ms_p50: 1.0,
            engine_ms_p95: 2.0,
            engine_ms_max: 3.0,
        }
    }

    #[test]
    fn the_stats_chart_draws_each_tools_p95_largest_first() {
        let rows = [
            stats_row("get_forecast", 1, 1_616, 1_616),
            stats_row("scrape_as_markdown", 12, 237_481, 3_998),
        ];
        let plan = stats_plan(&rows).unwrap();
        let labels: Vec<&str> = plan.rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "demo/scrape_as_markdown (12 calls)",
                "demo/get_forecast (1 call)"
            ]
        );
        assert_eq!(plan.rows[0].values, [Some(237_481.0), Some(3_998.0)]);
        assert!(plan.log);
        let svg = render_stats_chart(&rows, false).unwrap().unwrap();
        let svg = String::from_utf8(svg).unwrap();
        for text in [
            STATS_TITLE,
            "demo/scrape_as_markdown (12 calls)",
            "Claude Code cap 25k",
            "returned to the client (p95)",
            "237,481",
        ] {
            assert!(svg.contains(text), "{text} is not in the SVG");
        }
        let png = render_stats_chart(&rows, true).unwrap().unwrap();
        let (w, h, inked) = decode(&png);
        assert_eq!((w, h), (WIDTH, plan.height()));
        assert!(inked > 0.02, "{inked}");
        assert!(render_stats_chart(&[], true).unwrap().is_none());
    }
}
