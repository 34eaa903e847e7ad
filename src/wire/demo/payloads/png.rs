//! PNG encoding by hand: signature, IHDR (8-bit RGB), one IDAT, IEND, a CRC-32 per chunk.
//!
//! [`png_image`] is a screenshot-like page (see `screen`) deflated with `miniz_oxide`, so a
//! 1280x800 image weighs what real screenshots do. `thumbnail_png` keeps the original noisy,
//! incompressible pattern in stored deflate blocks: the scraped page inlines those as 2-8 KB
//! data URIs, and its bytes must not change.

use super::rng::Rng;
use super::screen::screenshot_scanlines;

const CRC_TABLE: [u32; 256] = {
    let (mut table, mut n) = ([0u32; 256], 0);
    while n < 256 {
        let (mut c, mut k) = (n as u32, 0);
        while k < 8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        table[n] = c;
        n += 1;
    }
    table
};

fn crc32(bytes: &[u8]) -> u32 {
    let step = |c: u32, b: &u8| CRC_TABLE[((c ^ u32::from(*b)) & 0xff) as usize] ^ (c >> 8);
    !bytes.iter().fold(!0u32, step)
}

fn adler32(bytes: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for chunk in bytes.chunks(5_552) {
        for &x in chunk {
            a += u32::from(x);
            b += a;
        }
        (a, b) = (a % 65_521, b % 65_521);
    }
    (b << 16) | a
}

fn png_chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    let len = u32::try_from(data.len()).expect("PNG chunks built here are far below 4 GiB");
    out.extend_from_slice(&len.to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// A zlib stream (no preset dictionary) of stored deflate blocks of at most 65,535 bytes each.
fn zlib_stored(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + data.len() / 65_535 * 5 + 16);
    out.extend_from_slice(&[0x78, 0x01]);
    let mut blocks = data.chunks(65_535).peekable();
    while let Some(block) = blocks.next() {
        let len = u16::try_from(block.len()).expect("blocks are at most 65535 bytes");
        out.push(u8::from(blocks.peek().is_none()));
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(block);
    }
    out.extend_from_slice(&adler32(data).to_be_bytes());
    out
}

/// Filter-0 scanlines: gradients and a checkerboard tinted by `seed`, plus noise.
fn thumbnail_scanlines(width: usize, height: usize, seed: u64) -> Vec<u8> {
    let (mut rng, tint) = (Rng(seed), seed.to_le_bytes());
    let mut raw = Vec::with_capacity(height * (3 * width + 1));
    for y in 0..height {
        raw.push(0);
        for x in 0..width {
            let noise = (rng.next_u64() & 0x1f) as u8;
            let checker = [0u8, 96][(x / 8 + y / 8) % 2];
            raw.push(((x * 255 / width) as u8).wrapping_add(tint[0]) ^ noise);
            raw.push(((y * 255 / height) as u8).wrapping_add(tint[1]) ^ noise);
            raw.push(checker.wrapping_add(tint[2]) ^ noise);
        }
    }
    raw
}

/// Signature, IHDR for an 8-bit RGB image, one IDAT holding `zlib`, IEND.
fn encode(width: u32, height: u32, zlib: &[u8]) -> Vec<u8> {
    let mut ihdr = [0u8; 13];
    ihdr[..4].copy_from_slice(&width.to_be_bytes());
    ihdr[4..8].copy_from_slice(&height.to_be_bytes());
    ihdr[8..].copy_from_slice(&[8, 2, 0, 0, 0]);
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    png_chunk(&mut out, b"IHDR", &ihdr);
    png_chunk(&mut out, b"IDAT", zlib);
    png_chunk(&mut out, b"IEND", &[]);
    out
}

/// A valid PNG (8-bit RGB, no interlace) that looks like a screenshot of a web page: light
/// background, browser chrome, a coloured header, sidebar and cards, rows of text-like glyphs.
/// Deterministic from `seed`; the IDAT is zlib level 6, so 1280x800 is roughly 100 KB.
/// A zero width or height is raised to 1, since PNG forbids empty images.
pub fn png_image(width: u32, height: u32, seed: u64) -> Vec<u8> {
    let (width, height) = (width.max(1), height.max(1));
    let raw = screenshot_scanlines(width as usize, height as usize, seed);
    encode(
        width,
        height,
        &miniz_oxide::deflate::compress_to_vec_zlib(&raw, 6),
    )
}

/// A small noisy PNG in stored (uncompressed) deflate blocks, for the scrape's data URIs.
/// A zero width or height is raised to 1.
pub(super) fn thumbnail_png(width: u32, height: u32, seed: u64) -> Vec<u8> {
    let (width, height) = (width.max(1), height.max(1));
    let raw = thumbnail_scanlines(width as usize, height as usize, seed);
    encode(width, height, &zlib_stored(&raw))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn be32(bytes: &[u8]) -> u32 {
        u32::from_be_bytes(bytes[..4].try_into().expect("4 bytes"))
    }

    /// Walks a PNG: signature, chunk order and CRCs, IHDR, then inflates the IDAT (which checks
    /// its Adler-32) and checks one filter-0 byte per scanline. Returns (width, height, zlib).
    fn check_png(png: &[u8]) -> (u32, u32, Vec<u8>) {
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let (mut pos, mut chunks) = (8, Vec::new());
        while pos < png.len() {
            let len = be32(&png[pos..]) as usize;
            let (kind, data) = (&png[pos + 4..pos + 8], &png[pos + 8..pos + 8 + len]);
            let crc = crc32(&png[pos + 4..pos + 8 + len]);
            assert_eq!(be32(&png[pos + 8 + len..]), crc);
            chunks.push((kind, data));
            pos += 12 + len;
        }
        let kinds: Vec<&[u8]> = chunks.iter().map(|c| c.0).collect();
        assert_eq!(kinds, [&b"IHDR"[..], b"IDAT", b"IEND"]);
        let (ihdr, idat) = (chunks[0].1, chunks[1].1);
        assert_eq!(&ihdr[8..], &[8, 2, 0, 0, 0]);
        let (width, height) = (be32(ihdr), be32(&ihdr[4..]));
        let raw = miniz_oxide::inflate::decompress_to_vec_zlib(idat).expect("valid zlib");
        let stride = 1 + 3 * width as usize;
        assert_eq!(raw.len(), height as usize * stride);
        assert!(raw.chunks(stride).all(|row| row[0] == 0));
        (width, height, idat.to_vec())
    }

    #[test]
    fn png_image_is_a_valid_compressed_png() {
        for (w, h) in [(1, 1), (37, 23), (200, 150), (1280, 800)] {
            let (width, height, _) = check_png(&png_image(w, h, 9));
            assert_eq!((width, height), (w, h));
        }
        assert_eq!(check_png(&png_image(0, 5, 1)).0, 1);
        assert_eq!(check_png(&png_image(5, 0, 1)).1, 1);
        assert_eq!(png_image(16, 9, 3), png_image(16, 9, 3));
        assert_ne!(png_image(640, 400, 3), png_image(640, 400, 4));
    }

    #[test]
    fn screenshot_size_is_realistic() {
        let png = png_image(1280, 800, 7);
        assert!(
            (30_000..200_000).contains(&png.len()),
            "{} bytes",
            png.len()
        );
    }

    #[test]
    fn thumbnail_png_is_a_valid_stored_png() {
        for (w, h) in [(1, 1), (37, 23), (44, 44)] {
            let (width, height, zlib) = check_png(&thumbnail_png(w, h, 9));
            assert_eq!((width, height), (w, h));
            assert_eq!(zlib[2] & 0b110, 0, "first block is stored");
        }
        assert_eq!(check_png(&thumbnail_png(0, 5, 1)).0, 1);
        assert_eq!(crc32(b"IEND"), 0xAE42_6082);
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
    }
}
