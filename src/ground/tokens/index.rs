//! The lookup from a token's bytes to its rank: an open-addressing table whose slots hold the
//! first eight bytes and the length of their token, so a lookup is one hash, one slot read and
//! an integer compare (a token longer than eight bytes compares the rest too). A general hash
//! map of byte slices compares through `memcmp` and reads the token's bytes from the table
//! every time; the merge loop asks this once or twice for every byte of text.

/// One slot: a token's first eight bytes (zero-padded), its length (0: empty) and its rank.
#[derive(Clone, Copy, Default)]
#[repr(C)]
struct Slot {
    head: u64,
    len: u32,
    rank: u32,
}

pub(crate) struct Index {
    slots: Vec<Slot>,
    mask: usize,
    /// A slot is the top bits of the hash: 64 less the bits of the table's size.
    shift: u32,
}

impl Index {
    /// An index of `tokens` (by rank); each token's bytes are distinct.
    pub(crate) fn build(tokens: &[&'static [u8]]) -> Index {
        // at most half full: short probe runs
        let size = (tokens.len() * 2).next_power_of_two().max(16);
        let mut index = Index {
            slots: vec![Slot::default(); size],
            mask: size - 1,
            shift: 64 - size.trailing_zeros(),
        };
        for (rank, bytes) in tokens.iter().enumerate() {
            let rank = u32::try_from(rank).expect("fewer than 2^32 tokens");
            let mut at = index.slot(bytes);
            while index.slots[at].len != 0 {
                at = (at + 1) & index.mask;
            }
            index.slots[at] = Slot {
                head: head(bytes),
                len: u32::try_from(bytes.len()).expect("a token is short"),
                rank,
            };
        }
        index
    }

    /// The rank of `bytes` (at least one byte), if they are a token of `tokens` (the table
    /// this was built from).
    #[inline]
    pub(crate) fn get(&self, bytes: &[u8], tokens: &[&'static [u8]]) -> Option<u32> {
        let (h, len) = (head(bytes), bytes.len() as u32);
        let mut at = self.slot(bytes);
        loop {
            let slot = self.slots[at];
            if slot.len == 0 {
                return None;
            }
            if slot.head == h
                && slot.len == len
                && (len <= 8 || tokens[slot.rank as usize][8..] == bytes[8..])
            {
                return Some(slot.rank);
            }
            at = (at + 1) & self.mask;
        }
    }
}

impl Index {
    /// The first slot to look in for `bytes`: the top bits of a multiplicative hash of the
    /// first and last eight bytes and the length (the top bits depend on every bit hashed).
    #[inline]
    fn slot(&self, bytes: &[u8]) -> usize {
        const K1: u64 = 0x9E37_79B9_7F4A_7C15;
        const K2: u64 = 0xC2B2_AE3D_27D4_EB4F;
        let tail = match bytes.len() {
            0..=8 => 0,
            n => head(&bytes[n - 8..]),
        };
        let h = (head(bytes) ^ (bytes.len() as u64) << 59).wrapping_mul(K1) ^ tail.wrapping_mul(K2);
        (h.wrapping_mul(K1) >> self.shift) as usize
    }
}

/// The first eight bytes of `bytes`, zero-padded, as a little-endian number.
#[inline]
fn head(bytes: &[u8]) -> u64 {
    if let Some(eight) = bytes.first_chunk::<8>() {
        return u64::from_le_bytes(*eight);
    }
    let mut word = 0u64;
    for (i, b) in bytes.iter().enumerate() {
        word |= u64::from(*b) << (8 * i);
    }
    word
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_token_and_nothing_else() {
        let tokens: Vec<&'static [u8]> = vec![
            b"a",
            b"ab",
            b"abcdefgh",
            b"abcdefghi",
            b"abcdefghij",
            b"\0",
            b"\0\0",
            b" the",
            b"abcdefgh-longer-than-eight",
            b"abcdefgh-longer-than-eighT",
        ];
        let index = Index::build(&tokens);
        for (rank, t) in tokens.iter().enumerate() {
            assert_eq!(index.get(t, &tokens), Some(rank as u32), "{t:?}");
        }
        for missing in [
            &b"b"[..],
            b"abc",
            b"abcdefgi",
            b"abcdefghk",
            b"\0\0\0",
            b"the",
            b"abcdefgh-longer-than-eightt",
            b"abcdefgh-longer-than-eigh",
        ] {
            assert_eq!(index.get(missing, &tokens), None, "{missing:?}");
        }
    }
}
