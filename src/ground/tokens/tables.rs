//! The rank tables of cl100k_base and o200k_base. `build.rs` packs each (`packed.rs`: a token
//! is its bytes or the two earlier tokens it joins) and they are embedded packed: 0.48 MB and
//! 0.97 MB. A table is read back, and the lookup from bytes to rank built, once per process, on
//! first use of the encoding (see docs/audit.md, "What the numbers mean", for what that costs).

use super::index::Index;
use super::packed;

static CL100K_PACKED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_base.packed"));
static O200K_PACKED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.packed"));

/// Which of the two embedded tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Table {
    Cl100k,
    O200k,
}

/// A BPE vocabulary: every token's bytes by rank, and the rank of every token's bytes.
pub(crate) struct Vocab {
    tokens: Vec<&'static [u8]>,
    ranks: Index,
    /// The rank of every two-byte token by its bytes (`u32::MAX`: not a token): the merge loop
    /// starts by asking this of every adjacent pair of bytes.
    pair_ranks: Box<[u32]>,
    /// The rank of each single byte (every byte is a token in both encodings).
    byte_ranks: [u32; 256],
    longest_bytes: usize,
}

impl Vocab {
    /// Read an embedded table and build its lookup.
    pub(crate) fn build(table: Table) -> Vocab {
        let packed = match table {
            Table::Cl100k => CL100K_PACKED,
            Table::O200k => O200K_PACKED,
        };
        let tokens = unpack(packed);
        let mut byte_ranks = [u32::MAX; 256];
        let mut pair_ranks = vec![u32::MAX; 1 << 16].into_boxed_slice();
        for (rank, bytes) in tokens.iter().enumerate() {
            let rank = u32::try_from(rank).expect("fewer than 2^32 tokens");
            match bytes {
                [b] => byte_ranks[usize::from(*b)] = rank,
                [a, b] => pair_ranks[pair(*a, *b)] = rank,
                _ => {}
            }
        }
        assert!(
            byte_ranks.iter().all(|r| *r != u32::MAX),
            "every byte is a token"
        );
        let longest_bytes = tokens.iter().map(|t| t.len()).max().unwrap_or(1);
        let ranks = Index::build(&tokens);
        Vocab {
            tokens,
            ranks,
            pair_ranks,
            byte_ranks,
            longest_bytes,
        }
    }

    /// The rank of a token's bytes, if they are a token.
    #[inline]
    pub(crate) fn rank(&self, bytes: &[u8]) -> Option<u32> {
        match bytes {
            [b] => Some(self.byte_ranks[usize::from(*b)]),
            [a, b] => Some(self.pair_ranks[pair(*a, *b)]).filter(|r| *r != u32::MAX),
            [] => None,
            _ => self.ranks.get(bytes, &self.tokens),
        }
    }

    /// The bytes of the token of `rank`.
    pub(crate) fn bytes(&self, rank: u32) -> &'static [u8] {
        self.tokens[rank as usize]
    }

    /// Number of tokens (special tokens excluded).
    pub(crate) fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Bytes of the longest token.
    pub(crate) fn longest_bytes(&self) -> usize {
        self.longest_bytes
    }
}

#[inline]
fn pair(a: u8, b: u8) -> usize {
    usize::from(a) << 8 | usize::from(b)
}

/// The tokens of a packed table, in rank order. Their bytes live as long as the process (a
/// table is read once, into the encoding's static).
fn unpack(packed: &[u8]) -> Vec<&'static [u8]> {
    let (bytes, ends) =
        packed::unpack(packed).unwrap_or_else(|e| panic!("an embedded rank table: {}", e.0));
    let bytes: &'static [u8] = Vec::leak(bytes);
    let mut start = 0;
    ends.iter()
        .map(|&end| {
            let token = &bytes[start..end as usize];
            start = end as usize;
            token
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_hold_every_token_once() {
        for (table, tokens, hello) in [
            (Table::Cl100k, 100_256, 15339),
            (Table::O200k, 199_998, 24912),
        ] {
            let vocab = Vocab::build(table);
            assert_eq!(vocab.len(), tokens);
            // every token's bytes lead back to its own rank: no two ranks share bytes, and the
            // one-byte, two-byte and general lookups agree with the table
            for r in 0..tokens as u32 {
                assert_eq!(vocab.rank(vocab.bytes(r)), Some(r));
            }
            assert_eq!(vocab.longest_bytes(), 128);
            assert_eq!(vocab.rank(b"hello"), Some(hello));
            assert_eq!(vocab.rank(b"\xff\xfe\xfd-not-a-token"), None);
            let r = vocab.rank(b" world").expect("a common token");
            assert_eq!(vocab.bytes(r), b" world");
        }
    }
}
