//! The embedded DejaVu Sans: loading and registering it, measuring text with its kerning, and
//! spelling the characters it lacks as `[U+XXXX]`.

use std::sync::OnceLock;

use ab_glyph::{Font, FontRef, ScaleFont};
use plotters::style::{register_font, FontStyle};

use super::error::ChartError;

/// The family name charts ask plotters for; SVG viewers draw it with their own sans-serif.
pub(super) const FAMILY: &str = "sans-serif";

/// DejaVu Sans deflated by `build.rs` (0.38 MB; 0.76 MB as it is).
static DEFLATED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/DejaVuSans.ttf.deflate"));

/// The font's bytes, inflated once (empty if they do not inflate, and then no font parses).
fn font_bytes() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| miniz_oxide::inflate::decompress_to_vec(DEFLATED).unwrap_or_default())
}

/// The embedded font, parsed once (None if it does not parse).
pub(super) fn font() -> Option<&'static FontRef<'static>> {
    static FONT: OnceLock<Option<FontRef<'static>>> = OnceLock::new();
    FONT.get_or_init(|| FontRef::try_from_slice(font_bytes()).ok())
        .as_ref()
}

/// Register the embedded font with plotters, once, before any text is measured or drawn.
pub(super) fn ensure_font() -> Result<(), ChartError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok =
        *REGISTERED.get_or_init(|| register_font(FAMILY, FontStyle::Normal, font_bytes()).is_ok());
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

/// Text sizes in points: the title, row labels, value labels and axis ticks.
pub(super) const TITLE_PT: u32 = 24;
pub(super) const LABEL_PT: u32 = 15;
pub(super) const VALUE_PT: u32 = 13;
pub(super) const TICK_PT: u32 = 14;

/// Height of a lowercase `x` in pixels at `size`.
pub(super) fn x_height(font: &FontRef<'static>, size: f32) -> f32 {
    let glyph = font
        .glyph_id('x')
        .with_scale_and_position(size, ab_glyph::point(0.0, 0.0));
    font.outline_glyph(glyph)
        .map_or(size / 2.0, |o| -o.px_bounds().min.y)
}

/// Width of `text` in pixels at `size`, kerned, as plotters measures it.
pub(super) fn advance(font: &FontRef<'static>, size: f32, text: &str) -> f32 {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_font_inflates_and_parses() {
        // the TrueType header, and a glyph for an ASCII letter and a Latin-1 one
        assert_eq!(&font_bytes()[..4], &[0, 1, 0, 0]);
        assert!(font_bytes().len() > 700_000);
        let f = font().expect("the embedded font parses");
        assert_ne!(f.glyph_id('x').0, 0);
        assert_ne!(f.glyph_id('é').0, 0);
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
}
