//! The pixels behind `png_image`: a screenshot-like browser page, drawn as raw scanlines.
//!
//! A light page with flat browser chrome, a coloured site header, a sidebar menu and stacked
//! content cards, filled with rows of small dark pseudo-glyphs standing in for text. Flat areas
//! and repeated glyphs compress the way real screenshots do; the layout and "words" vary with
//! the seed so different seeds give different images.

use super::rng::Rng;

type Rgb = [u8; 3];

const PAGE: Rgb = [248, 249, 251];
const WHITE: Rgb = [255, 255, 255];
const CHROME: Rgb = [222, 225, 230];
const FIELD: Rgb = [241, 243, 244];
const SIDEBAR: Rgb = [240, 242, 245];
const BORDER: Rgb = [216, 222, 228];
const MUTED: Rgb = [95, 99, 104];
const ACCENTS: [Rgb; 4] = [[37, 99, 235], [22, 163, 74], [124, 58, 237], [51, 65, 85]];
const PICTURES: [Rgb; 4] = [
    [203, 213, 225],
    [254, 215, 170],
    [187, 247, 208],
    [221, 214, 254],
];

/// Glyph cell: 5 columns of ink plus 1 of spacing; 9 rows (ascenders, x-height, descenders).
const GLYPH_W: usize = 6;
const GLYPH_H: usize = 9;

/// An RGB canvas that clips every drawing call to its bounds.
struct Canvas {
    width: usize,
    height: usize,
    px: Vec<u8>,
}

impl Canvas {
    fn new(width: usize, height: usize) -> Self {
        let px = PAGE
            .iter()
            .copied()
            .cycle()
            .take(width * height * 3)
            .collect();
        Canvas { width, height, px }
    }

    /// Applies `op` to every pixel of the rectangle that lies on the canvas.
    fn paint(&mut self, (x, y): (usize, usize), (w, h): (usize, usize), op: impl Fn(&mut [u8])) {
        let (x1, y1) = ((x + w).min(self.width), (y + h).min(self.height));
        for row in y.min(y1)..y1 {
            let start = (row * self.width + x.min(x1)) * 3;
            let end = (row * self.width + x1) * 3;
            self.px[start..end].chunks_exact_mut(3).for_each(&op);
        }
    }

    fn rect(&mut self, x: usize, y: usize, w: usize, h: usize, color: Rgb) {
        self.paint((x, y), (w, h), |p| p.copy_from_slice(&color));
    }

    /// Mixes a third of `ink` into what is there: the anti-aliased fringe of a glyph.
    fn blend(&mut self, x: usize, y: usize, size: usize, ink: Rgb) {
        let mix = |p: &mut [u8]| {
            for (v, i) in p.iter_mut().zip(ink) {
                *v = ((2 * u16::from(*v) + u16::from(i)) / 3) as u8;
            }
        };
        self.paint((x, y), (size, size), mix);
    }

    /// A filled box with a one-pixel outline.
    fn card(&mut self, x: usize, y: usize, w: usize, h: usize, fill: Rgb) {
        self.rect(x, y, w, h, BORDER);
        self.rect(x + 1, y + 1, w.saturating_sub(2), h.saturating_sub(2), fill);
    }

    /// Filter type 0 (None) scanlines, ready for zlib.
    fn into_scanlines(self) -> Vec<u8> {
        let mut raw = Vec::with_capacity(self.height * (1 + 3 * self.width));
        for row in self.px.chunks_exact(3 * self.width) {
            raw.push(0);
            raw.extend_from_slice(row);
        }
        raw
    }
}

/// 40 pseudo-glyphs as 9-row bitmaps (5 bits a row): x-height strokes, some with an
/// ascender stem or a descender, like lowercase text seen from a distance.
fn font() -> Vec<[u8; GLYPH_H]> {
    let mut rng = Rng::seeded("demo screenshot font", 8);
    let glyph = |rng: &mut Rng| {
        let mut rows = [0u8; GLYPH_H];
        for row in &mut rows[2..7] {
            *row = (rng.next_u64() as u8 & 0x1f) | (rng.next_u64() as u8 & 0b10001);
        }
        let stem = [0b10000, 0b00001][rng.below(2)];
        let (up, down) = (rng.chance(35), rng.chance(15));
        (0..2).filter(|_| up).for_each(|r| rows[r] = stem);
        (7..9).filter(|_| down).for_each(|r| rows[r] = stem);
        rows
    };
    (0..40).map(|_| glyph(&mut rng)).collect()
}

/// The canvas plus the seeded layout randomness and the glyph set.
struct Painter {
    c: Canvas,
    rng: Rng,
    font: Vec<[u8; GLYPH_H]>,
    accent: Rgb,
}

impl Painter {
    /// Words of random glyphs from `(x, y)` until `width` pixels are used; `scale` 2 for headings.
    fn text(&mut self, (x, y): (usize, usize), width: usize, scale: usize, ink: Rgb) {
        let (mut x, end) = (x, x + width);
        loop {
            let letters = self.rng.range(2, 9);
            if x + letters * GLYPH_W * scale > end {
                break;
            }
            for _ in 0..letters {
                let glyph = self.font[self.rng.below(self.font.len())];
                self.glyph(&glyph, (x, y), scale, ink);
                x += GLYPH_W * scale;
            }
            x += 4 * scale;
        }
    }

    /// One glyph: ink where its bits are set, a blended fringe beside them.
    fn glyph(&mut self, glyph: &[u8; GLYPH_H], (x, y): (usize, usize), scale: usize, ink: Rgb) {
        for (dy, &bits) in glyph.iter().enumerate() {
            let fringe = ((bits << 1) | (bits >> 1)) & !bits & 0x1f;
            for dx in 0..5 {
                let (px, py, bit) = (x + dx * scale, y + dy * scale, 1 << (4 - dx));
                if bits & bit != 0 {
                    self.c.rect(px, py, scale, scale, ink);
                } else if fringe & bit != 0 {
                    self.c.blend(px, py, scale, ink);
                }
            }
        }
    }

    /// `width` scaled by a random percentage in `lo..=hi`: ragged line lengths.
    fn share(&mut self, width: usize, lo: usize, hi: usize) -> usize {
        width * self.rng.range(lo, hi) / 100
    }

    /// Tab strip, address bar with a URL, and the site's coloured header with its navigation.
    /// Returns the y where the page body starts.
    fn chrome(&mut self) -> usize {
        let (w, h) = (self.c.width, self.c.height);
        let (tabs, bar, header) = (h * 45 / 1000, h * 50 / 1000, h * 80 / 1000);
        self.c.rect(0, 0, w, tabs, CHROME);
        self.c.rect(8, tabs / 4, w * 18 / 100, tabs, WHITE);
        self.text((20, tabs / 2), w * 12 / 100, 1, MUTED);
        self.c.rect(0, tabs, w, bar, WHITE);
        self.c.rect(
            w * 8 / 100,
            tabs + bar / 6,
            w * 62 / 100,
            bar * 2 / 3,
            FIELD,
        );
        self.text((w * 9 / 100, tabs + bar / 3), w * 40 / 100, 1, MUTED);
        let top = tabs + bar;
        self.c.rect(0, top, w, header, self.accent);
        self.c.rect(24, top + header / 4, w / 10, header / 2, WHITE);
        for item in 0..5 {
            let x = w * (30 + 11 * item) / 100;
            self.text(
                (x, (top + header / 2).saturating_sub(4)),
                w * 8 / 100,
                1,
                WHITE,
            );
        }
        top + header
    }

    /// The left menu: one highlighted entry, then short labels every 28 pixels.
    fn sidebar(&mut self, top: usize) {
        let (width, height) = (self.c.width / 5, self.c.height);
        self.c
            .rect(0, top, width, height.saturating_sub(top), SIDEBAR);
        let tint = self.accent.map(|v| v / 4 + 190);
        let (mut y, mut item) = (top + 20, 0);
        while y + 20 < height {
            if item == 2 {
                self.c.rect(8, y - 6, width.saturating_sub(16), 22, tint);
            }
            let label = self.share(width, 45, 80);
            self.text((20, y), label, 1, [40 + 8 * (item % 3) as u8; 3]);
            (y, item) = (y + 28, item + 1);
        }
    }

    /// A card: heading, a few ragged lines of body text, maybe a picture, then a button.
    /// Returns its height.
    fn card(&mut self, (x, y): (usize, usize), width: usize) -> usize {
        let lines = self.rng.range(3, 9);
        let side = self.rng.chance(40).then_some(width / 3);
        let fill = PICTURES[self.rng.below(PICTURES.len())];
        let height = (100 + lines * 18).max(side.map_or(0, |s| s * 2 / 3 + 32));
        self.c.card(x, y, width, height, WHITE);
        let text_width = width.saturating_sub(32 + side.map_or(0, |s| s + 16));
        let heading = self.share(text_width, 50, 90);
        self.text((x + 16, y + 16), heading, 2, [24, 28, 33]);
        for line in 0..lines {
            let (lo, hi) = if line + 1 == lines {
                (30, 80)
            } else {
                (88, 100)
            };
            let (len, ink) = (
                self.share(text_width, lo, hi),
                50 + self.rng.below(20) as u8,
            );
            self.text((x + 16, y + 52 + line * 18), len, 1, [ink; 3]);
        }
        if let Some(side) = side {
            let left = (x + width).saturating_sub(side + 16);
            self.c.rect(left, y + 16, side, side * 2 / 3, fill);
        }
        let button = (x + 16, y + 56 + lines * 18);
        self.c.rect(button.0, button.1, 120, 28, self.accent);
        self.text((button.0 + 14, button.1 + 10), 100, 1, WHITE);
        height
    }
}

/// Filter-0 scanlines (`height * (1 + 3 * width)` bytes) of a screenshot-like page from `seed`.
pub(super) fn screenshot_scanlines(width: usize, height: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng(seed);
    let accent = ACCENTS[rng.below(ACCENTS.len())];
    let (c, font) = (Canvas::new(width, height), font());
    let mut p = Painter {
        c,
        rng,
        font,
        accent,
    };
    let top = p.chrome();
    p.sidebar(top);
    let (left, mut y) = (width / 5 + 24, top + 24);
    let main = width.saturating_sub(left + 24);
    while y < height {
        let half = p.rng.chance(30).then_some(main.saturating_sub(16) / 2);
        let first = p.card((left, y), half.unwrap_or(main));
        let second = half.map_or(0, |half| p.card((left + half + 16, y), half));
        y += first.max(second) + 20;
    }
    p.c.into_scanlines()
}
