//! Request bodies sent with `content-encoding: gzip` (RFC 1952), decoded with `miniz_oxide`
//! within the body limit; the CRC-32 and length in the trailer are checked. No client was seen
//! compressing its requests; this keeps one that does readable.

/// Why a gzip body could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum GzipError {
    /// Decoded, it would be over the limit.
    TooLarge,
    /// Not a gzip stream, or a damaged one.
    Invalid,
}

const FHCRC: u8 = 2;
const FEXTRA: u8 = 4;
const FNAME: u8 = 8;
const FCOMMENT: u8 = 16;

/// Where the deflate data starts after a gzip header.
fn header_len(data: &[u8]) -> Option<usize> {
    if data.len() < 18 || data[0..3] != [0x1f, 0x8b, 8] {
        return None;
    }
    let flags = data[3];
    let mut at = 10;
    if flags & FEXTRA != 0 {
        let extra = u16::from_le_bytes([*data.get(at)?, *data.get(at + 1)?]);
        at += 2 + usize::from(extra);
    }
    for flag in [FNAME, FCOMMENT] {
        if flags & flag != 0 {
            at += memchr::memchr(0, data.get(at..)?)? + 1;
        }
    }
    if flags & FHCRC != 0 {
        at += 2;
    }
    (at <= data.len()).then_some(at)
}

/// The CRC-32 (IEEE) of `data`.
fn crc32(data: &[u8]) -> u32 {
    static TABLE: std::sync::OnceLock<[u32; 256]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t = [0u32; 256];
        for (n, slot) in t.iter_mut().enumerate() {
            let mut c = n as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
            *slot = c;
        }
        t
    });
    !data.iter().fold(!0u32, |c, b| {
        table[((c ^ u32::from(*b)) & 0xff) as usize] ^ (c >> 8)
    })
}

/// The decoded body of a one-member gzip stream, at most `limit` bytes.
pub(super) fn gunzip(data: &[u8], limit: usize) -> Result<Vec<u8>, GzipError> {
    let start = header_len(data).ok_or(GzipError::Invalid)?;
    let end = data
        .len()
        .checked_sub(8)
        .filter(|e| *e >= start)
        .ok_or(GzipError::Invalid)?;
    let out = miniz_oxide::inflate::decompress_to_vec_with_limit(&data[start..end], limit)
        .map_err(|e| match e.status {
            miniz_oxide::inflate::TINFLStatus::HasMoreOutput => GzipError::TooLarge,
            _ => GzipError::Invalid,
        })?;
    let trailer = &data[end..];
    let crc = u32::from_le_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]);
    let size = u32::from_le_bytes([trailer[4], trailer[5], trailer[6], trailer[7]]);
    if crc != crc32(&out) || size != out.len() as u32 {
        return Err(GzipError::Invalid);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crc_is_the_ieee_one() {
        // the check value of CRC-32/ISO-HDLC
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn a_damaged_or_foreign_stream_is_invalid() {
        assert_eq!(gunzip(b"{\"a\": 1}", 100), Err(GzipError::Invalid));
        let mut bad = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3];
        bad.extend_from_slice(&[0xff; 12]);
        assert_eq!(gunzip(&bad, 100), Err(GzipError::Invalid));
    }
}
