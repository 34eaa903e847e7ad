//! PNG charts: the bitmap backend with kerned text, and the encoder.

use ab_glyph::{Font, ScaleFont};
use plotters::backend::{BitMapBackend, DrawingBackend};
use plotters::drawing::IntoDrawingArea;
use plotters::style::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind, FontTransform,
};

use super::draw::{draw, WIDTH};
use super::error::{draw_error, ChartError};
use super::font::{advance, ensure_font, font, x_height};
use super::plan::Plan;

/// The PNG bytes of a plan, titled `title`; `stem` names the chart in errors.
pub(super) fn png_of(plan: &Plan, title: &str, stem: &'static str) -> Result<Vec<u8>, ChartError> {
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
