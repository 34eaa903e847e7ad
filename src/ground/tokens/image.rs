//! Image pixel size from file headers, and what an image costs a Claude model in tokens.
//!
//! Claude's documented rule: an image whose long edge is over 1568 px, or that would cost more
//! than ~1,600 tokens, is first scaled down (aspect ratio kept) until it fits; it then costs
//! `ceil(width * height / 750)` tokens.

use serde::Serialize;

/// Longest edge Claude keeps before scaling down.
pub const CLAUDE_MAX_EDGE_PX: u32 = 1568;
/// Largest pixel area Claude keeps before scaling down (1,600 tokens x 750 px per token).
pub const CLAUDE_MAX_AREA_PX: u64 = 1_200_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ImageFormat {
    Png,
    Jpeg,
    Gif,
    Webp,
}

/// What the header says about an image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ImageInfo {
    pub format: ImageFormat,
    pub width_px: u32,
    pub height_px: u32,
}

/// Read the format and pixel size from the first bytes of an image; `None` when unknown or cut short.
pub fn image_dimensions(bytes: &[u8]) -> Option<ImageInfo> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        return png(bytes);
    }
    if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        let w = u16::from_le_bytes([*bytes.get(6)?, *bytes.get(7)?]) as u32;
        let h = u16::from_le_bytes([*bytes.get(8)?, *bytes.get(9)?]) as u32;
        return Some(info(ImageFormat::Gif, w, h));
    }
    if bytes.starts_with(b"\xff\xd8") {
        return jpeg(bytes);
    }
    if bytes.len() >= 12 && &bytes[0..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        return webp(bytes);
    }
    None
}

fn info(format: ImageFormat, width_px: u32, height_px: u32) -> ImageInfo {
    ImageInfo {
        format,
        width_px,
        height_px,
    }
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn png(b: &[u8]) -> Option<ImageInfo> {
    (b.get(12..16)? == b"IHDR").then_some(())?;
    Some(info(ImageFormat::Png, be32(b, 16)?, be32(b, 20)?))
}

fn jpeg(b: &[u8]) -> Option<ImageInfo> {
    let mut i = 2;
    while i + 4 <= b.len() {
        if b[i] != 0xff {
            return None;
        }
        let marker = b[i + 1];
        if marker == 0xff {
            i += 1;
            continue;
        }
        let len = u16::from_be_bytes([b[i + 2], b[i + 3]]) as usize;
        let is_sof = matches!(marker, 0xc0..=0xcf) && !matches!(marker, 0xc4 | 0xc8 | 0xcc);
        if is_sof {
            let h = u16::from_be_bytes([*b.get(i + 5)?, *b.get(i + 6)?]) as u32;
            let w = u16::from_be_bytes([*b.get(i + 7)?, *b.get(i + 8)?]) as u32;
            return Some(info(ImageFormat::Jpeg, w, h));
        }
        i += 2 + len;
    }
    None
}

fn webp(b: &[u8]) -> Option<ImageInfo> {
    let le24 = |at: usize| -> Option<u32> {
        Some(u32::from_le_bytes([
            *b.get(at)?,
            *b.get(at + 1)?,
            *b.get(at + 2)?,
            0,
        ]))
    };
    match b.get(12..16)? {
        b"VP8X" => Some(info(ImageFormat::Webp, le24(24)? + 1, le24(27)? + 1)),
        b"VP8L" => {
            let bits = u32::from_le_bytes(b.get(21..25)?.try_into().ok()?);
            Some(info(
                ImageFormat::Webp,
                (bits & 0x3fff) + 1,
                ((bits >> 14) & 0x3fff) + 1,
            ))
        }
        b"VP8 " => {
            let w = u16::from_le_bytes([*b.get(26)?, *b.get(27)?]) as u32 & 0x3fff;
            let h = u16::from_le_bytes([*b.get(28)?, *b.get(29)?]) as u32 & 0x3fff;
            Some(info(ImageFormat::Webp, w, h))
        }
        _ => None,
    }
}

/// Tokens Claude charges for an image of this size, after its documented downscaling, with the
/// size it is scaled to.
pub fn claude_image_tokens(width_px: u32, height_px: u32) -> (usize, u32, u32) {
    if width_px == 0 || height_px == 0 {
        return (0, width_px, height_px);
    }
    let (w, h) = (width_px as f64, height_px as f64);
    let edge_scale = CLAUDE_MAX_EDGE_PX as f64 / w.max(h);
    let area_scale = (CLAUDE_MAX_AREA_PX as f64 / (w * h)).sqrt();
    let scale = edge_scale.min(area_scale).min(1.0);
    let sw = ((w * scale).floor() as u32).max(1);
    let sh = ((h * scale).floor() as u32).max(1);
    let tokens = (sw as u64 * sh as u64).div_ceil(750) as usize;
    (tokens, sw, sh)
}

/// What an image block's base64 `data` costs as an image: its pixel size and Claude's token cost,
/// when the data decodes and starts with a known image header of a non-zero size. `None` means
/// no model sees it as an image: a client then pays for the base64 as text, and callers count it
/// so (never as 0).
pub fn image_data_cost(data_base64: &str) -> Option<(ImageInfo, usize)> {
    let info = image_info(data_base64)?;
    Some((info, claude_image_tokens(info.width_px, info.height_px).0))
}

/// The header's facts of base64 image data, when [`decode_image`] would give them: the data is
/// checked to be base64 whole, but only as much of it is decoded as the header needs (a PNG's
/// size is in its first 24 bytes; a JPEG's after its metadata segments), not the whole image.
pub fn image_info(data_base64: &str) -> Option<ImageInfo> {
    use base64::Engine as _;
    let data = data_base64.trim();
    // groups of four decode on their own: the last one holds the padding and the bits the
    // engine checks are zero, the others only need the alphabet
    if !is_padded_base64(data)
        || base64::engine::general_purpose::STANDARD
            .decode(&data[data.len().saturating_sub(4)..])
            .is_err()
    {
        return None;
    }
    let mut chars = 64;
    loop {
        let end = chars.min(data.len());
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&data[..end])
            .ok()?;
        if let Some(info) = image_dimensions(&bytes).filter(|i| i.width_px > 0 && i.height_px > 0) {
            return Some(info);
        }
        if end == data.len() {
            return None;
        }
        chars *= 16;
    }
}

/// Whether `data` is what the standard base64 engine decodes: whole groups of four of its
/// alphabet, `=` only as the last one or two characters.
fn is_padded_base64(data: &str) -> bool {
    let b = data.as_bytes();
    if !b.len().is_multiple_of(4) {
        return false;
    }
    let pad = b.iter().rev().take(2).take_while(|c| **c == b'=').count();
    let body = &b[..b.len() - pad];
    // no early exit: the whole check is branch-free and vectorised, 16 bytes and more at a time
    body.iter().fold(true, |ok, &c| {
        let letter = (c | 0x20).wrapping_sub(b'a') < 26;
        let digit = c.wrapping_sub(b'0') < 10;
        ok & (letter | digit | (c == b'+') | (c == b'/'))
    })
}

/// The bytes of base64 image data and their header's facts, when it is an image at all (valid
/// base64, a known header, a size that is not 0).
pub fn decode_image(data_base64: &str) -> Option<(Vec<u8>, ImageInfo)> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data_base64.trim())
        .ok()?;
    let info = image_dimensions(&bytes).filter(|i| i.width_px > 0 && i.height_px > 0)?;
    Some((bytes, info))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The header read from a prefix of the data gives what decoding it whole gives, for every
    /// format, a JPEG whose size comes after 20 KB of metadata, and data that is no image or
    /// no valid base64 (bad characters, bad padding, a length that is no multiple of four).
    #[test]
    fn the_info_from_a_prefix_is_the_info_of_the_whole() {
        use base64::Engine as _;
        let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend_from_slice(&1200u32.to_be_bytes());
        png.extend_from_slice(&900u32.to_be_bytes());
        png.extend(std::iter::repeat_n(7u8, 50_000));
        let mut jpeg = vec![0xFF, 0xD8, 0xFF, 0xE1];
        let app = 20_000u16;
        jpeg.extend_from_slice(&app.to_be_bytes());
        jpeg.extend(std::iter::repeat_n(0u8, app as usize - 2));
        jpeg.extend_from_slice(&[0xFF, 0xC0, 0, 17, 8]);
        jpeg.extend_from_slice(&480u16.to_be_bytes());
        jpeg.extend_from_slice(&640u16.to_be_bytes());
        jpeg.extend(std::iter::repeat_n(1u8, 1000));
        let png64 = b64(&png);
        for data in [
            png64.clone(),
            b64(&jpeg),
            b64(b"GIF89a\x20\x03\x58\x02rest of it"),
            b64(b"not an image at all, only text"),
            format!("{}!", &png64[..png64.len() - 1]),
            png64[..png64.len() - 1].to_string(),
            format!("{}====", &png64[..png64.len() - 4]),
            // trailing bits that are not zero: "AB==" is refused by the engine
            format!("{}AB==", &png64[..png64.len() - 4]),
            format!("  {png64}\n"),
        ] {
            let whole = decode_image(&data).map(|(_, info)| info);
            assert_eq!(image_info(&data), whole, "{}", &data[..40.min(data.len())]);
        }
        assert!(image_info(&png64).is_some() && image_info(&b64(&jpeg)).is_some());
    }

    #[test]
    fn reads_png_gif_jpeg_webp_headers() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend_from_slice(&640u32.to_be_bytes());
        png.extend_from_slice(&480u32.to_be_bytes());
        assert_eq!(
            image_dimensions(&png),
            Some(info(ImageFormat::Png, 640, 480))
        );

        let gif = b"GIF89a\x20\x03\x58\x02rest";
        assert_eq!(
            image_dimensions(gif),
            Some(info(ImageFormat::Gif, 800, 600))
        );

        // SOI, APP0 (len 16), SOF0 with height 0x01e0 (480) width 0x0280 (640)
        let mut jpg = vec![0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10];
        jpg.extend_from_slice(&[0u8; 14]);
        jpg.extend_from_slice(&[0xff, 0xc0, 0x00, 0x11, 0x08, 0x01, 0xe0, 0x02, 0x80]);
        assert_eq!(
            image_dimensions(&jpg),
            Some(info(ImageFormat::Jpeg, 640, 480))
        );

        let mut webp = b"RIFF\0\0\0\0WEBPVP8X".to_vec();
        webp.extend_from_slice(&[0u8; 8]);
        webp.extend_from_slice(&[0x1f, 0x03, 0x00, 0x57, 0x02, 0x00]); // 800x600 minus one
        assert_eq!(
            image_dimensions(&webp),
            Some(info(ImageFormat::Webp, 800, 600))
        );

        assert_eq!(image_dimensions(b"not an image"), None);
        assert_eq!(image_dimensions(b"\x89PNG\r\n\x1a\n\0\0"), None);
    }

    #[test]
    fn image_data_cost_needs_valid_base64_and_a_known_header() {
        use base64::Engine as _;
        let enc = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend_from_slice(&200u32.to_be_bytes());
        png.extend_from_slice(&200u32.to_be_bytes());
        let (info, tokens) = image_data_cost(&enc(&png)).unwrap();
        assert_eq!((info.width_px, tokens), (200, 54));
        assert!(image_data_cost("!!! not base64 ???").is_none());
        assert!(image_data_cost(&enc(&[0u8; 64])).is_none(), "no header");
        png[16..24].fill(0);
        assert!(image_data_cost(&enc(&png)).is_none(), "a 0x0 image");
    }

    #[test]
    fn claude_cost_matches_documented_examples() {
        // Anthropic's table: 200x200 ~54 tokens, 1000x1000 ~1334, 1092x1092 ~1590.
        assert_eq!(claude_image_tokens(200, 200).0, 54);
        assert_eq!(claude_image_tokens(1000, 1000).0, 1334);
        assert_eq!(claude_image_tokens(1092, 1092).0, 1590);
        // A 4000x3000 photo is scaled until it fits: never over ~1,600 tokens.
        let (t, w, h) = claude_image_tokens(4000, 3000);
        assert!(t <= 1600 && w <= 1568 && h <= 1568, "{t} {w}x{h}");
        assert!((w as f64 / h as f64 - 4.0 / 3.0).abs() < 0.01);
    }
}
