//! The packed form of a rank table, shared by `build.rs` (which packs each table and checks that
//! this reading gives it back byte for byte) and `tables.rs` (which reads it once per process).
//!
//! A BPE token is nearly always two earlier tokens joined, so a table is packed as its tokens in
//! rank order, each either its bytes or the ranks of the two earlier tokens it joins, whichever
//! is shorter: 0.48 MB and 0.97 MB where the bytes alone are 0.74 MB and 1.60 MB. Reading it back
//! is one pass of small copies.
//!
//! Layout: the unpacked length (u32, little endian), the token count (u32), then one record a
//! token. A record's first byte `h`:
//! - `h < 0x80`: the token is the next `h + 1` bytes (tokens are 1 to 128 bytes);
//! - `h >= 0x80`: the token is token `a` then token `b`, both of lower rank, where
//!   `a = (h & 0x0f) << 14 | hi` and `b = lo`, with the next four bytes (big endian) holding
//!   `hi` (14 bits) and `lo` (18 bits): ranks below 2^18.

/// The last rank a joined token can name (both tables have under 2^18 tokens).
pub const MAX_RANK: u32 = (1 << 18) - 1;

/// A packed table that does not read back: a table built into this binary never is one.
#[derive(Debug, PartialEq, Eq)]
pub struct Broken(pub &'static str);

/// Tokens this short are copied as a fixed 16 bytes (into slack past the end), which compiles to
/// two moves where a copy of any length is a call: reading o200k_base back takes 1.2 ms, not 3.2.
const SHORT: usize = 16;

/// The tokens in rank order, as one buffer and where each token ends in it.
pub fn unpack(packed: &[u8]) -> Result<(Vec<u8>, Vec<u32>), Broken> {
    let word = |at: usize| -> Result<u32, Broken> {
        let b = packed
            .get(at..at + 4)
            .ok_or(Broken("the header is cut short"))?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let (size, count) = (word(0)? as usize, word(4)? as usize);
    let mismatch = Broken("the header's sizes do not match the records");
    // a record is at least 2 bytes and gives at most 256 (two tokens of 128): a header that
    // says more is broken, and nothing is allocated for it
    if count > packed.len() / 2 || size > count.saturating_mul(256) {
        return Err(mismatch);
    }
    let mut bytes = vec![0u8; size + SHORT];
    let mut ends: Vec<u32> = Vec::with_capacity(count);
    let (mut at, mut out) = (8, 0);
    while let Some(&h) = packed.get(at) {
        if h < 0x80 {
            let len = usize::from(h) + 1;
            let token = packed
                .get(at + 1..at + 1 + len)
                .ok_or(Broken("a token is cut short"))?;
            if out + len > size {
                return Err(mismatch);
            }
            match packed.get(at + 1..at + 1 + SHORT) {
                Some(chunk) if len <= SHORT => bytes[out..out + SHORT].copy_from_slice(chunk),
                _ => bytes[out..out + len].copy_from_slice(token),
            }
            out += len;
            at += 1 + len;
        } else if h >= 0x90 {
            return Err(Broken("a record's first byte is none the layout has"));
        } else {
            let w = packed
                .get(at + 1..at + 5)
                .ok_or(Broken("a joined token is cut short"))?;
            let w = u32::from_be_bytes([w[0], w[1], w[2], w[3]]);
            let a = (u32::from(h & 0x0f) << 14 | w >> 18) as usize;
            let b = (w & MAX_RANK) as usize;
            for part in [a, b] {
                let end = *ends.get(part).ok_or(Broken("a token joins a later one"))? as usize;
                let start = match part {
                    0 => 0,
                    p => ends[p - 1] as usize,
                };
                let len = end - start;
                if out + len > size {
                    return Err(mismatch);
                }
                // the earlier token ends at or before `out`: what is copied past it is written
                // over by what follows
                match len <= SHORT {
                    true => bytes.copy_within(start..start + SHORT, out),
                    false => bytes.copy_within(start..end, out),
                }
                out += len;
            }
            at += 5;
        }
        ends.push(u32::try_from(out).map_err(|_| Broken("over 4 GiB"))?);
    }
    if out != size || ends.len() != count {
        return Err(mismatch);
    }
    bytes.truncate(size);
    Ok((bytes, ends))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A packed table of `records` with the header's sizes given.
    fn table(size: u32, count: u32, records: &[u8]) -> Vec<u8> {
        [&size.to_le_bytes()[..], &count.to_le_bytes(), records].concat()
    }

    /// The record of a token that joins ranks `a` and `b`.
    fn joined(a: u32, b: u32) -> Vec<u8> {
        let mut r = vec![0x80 | (a >> 14) as u8];
        r.extend_from_slice(&((a & 0x3fff) << 18 | b).to_be_bytes());
        r
    }

    #[test]
    fn reads_bytes_and_joined_tokens() {
        // "ab", "c", "abc" (0 + 1), "cabc" (1 + 2), "abcab" (2 + 0)
        let mut records = vec![1, b'a', b'b', 0, b'c'];
        for (a, b) in [(0, 1), (1, 2), (2, 0)] {
            records.extend(joined(a, b));
        }
        let (bytes, ends) = unpack(&table(15, 5, &records)).expect("reads back");
        assert_eq!(bytes, b"abcabccabcabcab");
        assert_eq!(ends, [2, 3, 6, 10, 15]);
        // tokens over 16 bytes, as bytes and joined (the copies of any length)
        let long = b"abcdefghijklmnopqrstu";
        let mut records = vec![20];
        records.extend_from_slice(long);
        records.extend(joined(0, 0));
        let (bytes, ends) = unpack(&table(63, 2, &records)).expect("reads back");
        assert_eq!(bytes, [&long[..], long, long].concat());
        assert_eq!(ends, [21, 63]);
        // the widest ranks the layout holds
        let mut wide = vec![0u8, b'x'];
        wide.extend(joined(MAX_RANK, MAX_RANK));
        assert_eq!(
            unpack(&table(2, 2, &wide)),
            Err(Broken("a token joins a later one"))
        );
    }

    #[test]
    fn a_broken_table_is_an_error_not_a_panic() {
        let ok = [0u8, b'a'];
        assert_eq!(unpack(&[1, 0, 0]), Err(Broken("the header is cut short")));
        assert_eq!(
            unpack(&table(3, 1, &[2, b'a'])),
            Err(Broken("a token is cut short"))
        );
        let mut cut = ok.to_vec();
        cut.extend(&joined(0, 0)[..3]);
        assert_eq!(
            unpack(&table(2, 2, &cut)),
            Err(Broken("a joined token is cut short"))
        );
        let mut ahead = ok.to_vec();
        ahead.extend(joined(0, 1));
        assert_eq!(
            unpack(&table(2, 2, &ahead)),
            Err(Broken("a token joins a later one"))
        );
        assert_eq!(
            unpack(&table(2, 1, &ok)),
            Err(Broken("the header's sizes do not match the records"))
        );
        assert_eq!(
            unpack(&table(1, 2, &ok)),
            Err(Broken("the header's sizes do not match the records"))
        );
        // sizes no records could give are refused before anything is allocated
        for (size, count) in [(u32::MAX, 1), (2, u32::MAX)] {
            assert_eq!(
                unpack(&table(size, count, &ok)),
                Err(Broken("the header's sizes do not match the records"))
            );
        }
        let mut bad = ok.to_vec();
        bad.extend([0x90, 0, 0, 0, 0]);
        assert_eq!(
            unpack(&table(2, 2, &bad)),
            Err(Broken("a record's first byte is none the layout has"))
        );
    }
}
