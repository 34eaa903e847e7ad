//! The rank tables of cl100k_base and o200k_base. `build.rs` writes each as its tokens in rank
//! order (one length byte, then the bytes) and they are embedded as they are: 0.7 MB and 1.6 MB.
//! The lookup from bytes to rank is built from them once per process, on first use of the
//! encoding (see the README for what that costs).

use rustc_hash::FxHashMap;

static CL100K_RANKS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_base.ranks"));
static O200K_RANKS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.ranks"));

/// Which of the two embedded tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Table {
    Cl100k,
    O200k,
}

/// A BPE vocabulary: every token's bytes by rank, and the rank of every token's bytes.
pub(crate) struct Vocab {
    tokens: Vec<&'static [u8]>,
    ranks: FxHashMap<&'static [u8], u32>,
    /// The rank of each single byte (every byte is a token in both encodings).
    byte_ranks: [u32; 256],
    longest_bytes: usize,
}

impl Vocab {
    /// Read an embedded table and build its lookup.
    pub(crate) fn build(table: Table) -> Vocab {
        let blob = match table {
            Table::Cl100k => CL100K_RANKS,
            Table::O200k => O200K_RANKS,
        };
        let tokens = split_blob(blob);
        let mut ranks = FxHashMap::with_capacity_and_hasher(tokens.len(), Default::default());
        let mut byte_ranks = [u32::MAX; 256];
        for (rank, bytes) in tokens.iter().enumerate() {
            let rank = u32::try_from(rank).expect("fewer than 2^32 tokens");
            ranks.insert(*bytes, rank);
            if let [b] = bytes {
                byte_ranks[usize::from(*b)] = rank;
            }
        }
        assert!(
            byte_ranks.iter().all(|r| *r != u32::MAX),
            "every byte is a token"
        );
        let longest_bytes = tokens.iter().map(|t| t.len()).max().unwrap_or(1);
        Vocab {
            tokens,
            ranks,
            byte_ranks,
            longest_bytes,
        }
    }

    /// The rank of a token's bytes, if they are a token.
    #[inline]
    pub(crate) fn rank(&self, bytes: &[u8]) -> Option<u32> {
        match bytes {
            [b] => Some(self.byte_ranks[usize::from(*b)]),
            _ => self.ranks.get(bytes).copied(),
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

/// The tokens of a table, in rank order.
fn split_blob(blob: &'static [u8]) -> Vec<&'static [u8]> {
    let mut tokens = Vec::with_capacity(blob.len() / 7);
    let mut rest = blob;
    while let [len, tail @ ..] = rest {
        let (token, after) = tail.split_at(usize::from(*len));
        tokens.push(token);
        rest = after;
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_hold_every_token_once() {
        for (table, tokens) in [(Table::Cl100k, 100_256), (Table::O200k, 199_998)] {
            let vocab = Vocab::build(table);
            assert_eq!(vocab.len(), tokens);
            assert_eq!(vocab.ranks.len(), tokens, "no two ranks share bytes");
            assert_eq!(vocab.longest_bytes(), 128);
            assert_eq!(
                vocab.rank(b"hello"),
                vocab.ranks.get(&b"hello"[..]).copied()
            );
            let r = vocab.rank(b" world").expect("a common token");
            assert_eq!(vocab.bytes(r), b" world");
        }
    }
}
