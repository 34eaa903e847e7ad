//! Exact byte-pair encoding as tiktoken defines it: pre-tokenise the text, then encode each
//! piece on its own. A piece that is a token is one token; any other piece starts as single
//! bytes and the adjacent pair whose concatenation has the lowest rank is merged (the leftmost
//! of equals), again and again, until no adjacent pair is a token. Short pieces do this over a
//! vector; long ones (a run of 200 KB of `a` is one piece) are encoded left to right by
//! backtracking (`backtrack.rs`), which gives the same tokens in time linear in practice.

use std::sync::{LazyLock, OnceLock};

use super::backtrack::{Backtracker, Long};
use super::cuts::chunks;
use super::merge::merge_below;
use super::pieces::Pretokenizer;
use super::tables::{Table, Vocab};

/// Pieces longer than this many bytes are encoded by backtracking.
const LONG_FROM_BYTES: usize = 128;

/// A text is counted on several threads when each gets at least this many bytes.
const PARALLEL_CHUNK_BYTES: usize = 512 * 1024;

/// One encoding: its vocabulary and its pre-tokeniser.
pub struct Encoding {
    vocab: Vocab,
    pre: Pretokenizer,
    /// The tables for long pieces, built the first time one is met.
    long: OnceLock<Long>,
}

static CL100K: LazyLock<Encoding> = LazyLock::new(|| Encoding::build(Table::Cl100k));
static O200K: LazyLock<Encoding> = LazyLock::new(|| Encoding::build(Table::O200k));

impl Encoding {
    /// cl100k_base, built on first use and kept for the process.
    pub fn cl100k() -> &'static Encoding {
        &CL100K
    }

    /// o200k_base, built on first use and kept for the process.
    pub fn o200k() -> &'static Encoding {
        &O200K
    }

    /// Build an encoding from its embedded table (what the first use of one costs; benches).
    pub fn build_cl100k() -> Encoding {
        Encoding::build(Table::Cl100k)
    }

    /// Build o200k_base from its embedded table (see [`Self::build_cl100k`]).
    pub fn build_o200k() -> Encoding {
        Encoding::build(Table::O200k)
    }

    fn build(table: Table) -> Encoding {
        let pre = match table {
            Table::Cl100k => Pretokenizer::cl100k(),
            Table::O200k => Pretokenizer::o200k(),
        };
        Encoding {
            vocab: Vocab::build(table),
            pre,
            long: OnceLock::new(),
        }
    }

    /// Bytes of the vocabulary's longest token.
    pub fn longest_token_bytes(&self) -> usize {
        self.vocab.longest_bytes()
    }

    /// The tables for long pieces, made on first need (a few milliseconds; what they hold of
    /// each token is found when a piece first needs it).
    fn long(&self) -> &Long {
        self.long.get_or_init(|| Long::new(&self.vocab))
    }

    /// Number of ordinary tokens in the vocabulary.
    pub fn vocab_len(&self) -> usize {
        self.vocab.len()
    }

    /// The pieces `text` is split into before merging.
    pub fn pieces<'t>(&'t self, text: &'t str) -> impl Iterator<Item = &'t str> + 't {
        self.pre.pieces(text)
    }

    /// Exact token count of `text`, special-token strings read as ordinary text. A large text
    /// is cut at safe cuts ([`chunks`]) and its chunks counted on all the cores at once.
    pub fn count(&self, text: &str) -> usize {
        let threads = cores().min(text.len() / PARALLEL_CHUNK_BYTES);
        if threads < 2 {
            return self.count_on_this_thread(text);
        }
        let parts = chunks(text, threads);
        std::thread::scope(|scope| {
            let handles: Vec<_> = parts[1..]
                .iter()
                .map(|part| scope.spawn(|| self.count_on_this_thread(part)))
                .collect();
            let first = self.count_on_this_thread(parts[0]);
            let rest: usize = handles
                .into_iter()
                .map(|h| h.join().expect("counting does not panic"))
                .sum();
            first + rest
        })
    }

    /// Exact token count of `text` on this thread.
    pub fn count_on_this_thread(&self, text: &str) -> usize {
        let mut merger = Merger::default();
        self.pre
            .pieces(text)
            .map(|piece| merger.count(self, piece.as_bytes()))
            .sum()
    }

    /// The exact count when it is at most `limit`, else `None`, stopping at the piece that
    /// passes the limit.
    pub fn count_up_to(&self, text: &str, limit: usize) -> Option<usize> {
        let mut merger = Merger::default();
        let mut total = 0usize;
        for piece in self.pre.pieces(text) {
            total += merger.count(self, piece.as_bytes());
            if total > limit {
                return None;
            }
        }
        Some(total)
    }

    /// Whether `text` has more than `limit` pieces, read only until it has: every piece is at
    /// least one token, so then the text is over `limit` tokens too (a proof at the cost of
    /// pre-tokenising, without merging).
    pub fn pieces_exceed(&self, text: &str, limit: usize) -> bool {
        self.pre.pieces(text).nth(limit).is_some()
    }

    /// The tokens (ranks) of `text`.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let mut merger = Merger::default();
        let mut tokens = Vec::with_capacity(text.len() / 3);
        for piece in self.pre.pieces(text) {
            merger.encode(self, piece.as_bytes(), &mut tokens);
        }
        tokens
    }

    /// The bytes of `tokens`, one after the other.
    pub fn decode(&self, tokens: &[u32]) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(tokens.len() * 4);
        for &t in tokens {
            bytes.extend_from_slice(self.vocab.bytes(t));
        }
        bytes
    }
}

/// The cores this process may use (read once).
fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// Scratch space for merging, reused across the pieces of one text.
#[derive(Default)]
struct Merger {
    /// Start of each part, then the piece's end; and the rank of each part with the next.
    starts: Vec<usize>,
    pair_ranks: Vec<u32>,
    long: Backtracker,
}

impl Merger {
    fn count(&mut self, enc: &Encoding, piece: &[u8]) -> usize {
        if piece.len() <= 1 || enc.vocab.rank(piece).is_some() {
            return usize::from(!piece.is_empty());
        }
        if piece.len() > LONG_FROM_BYTES {
            return enc.long().count(&enc.vocab, piece, &mut self.long);
        }
        self.merge_short(&enc.vocab, piece, u32::MAX);
        self.starts.len() - 1
    }

    fn encode(&mut self, enc: &Encoding, piece: &[u8], out: &mut Vec<u32>) {
        let vocab = &enc.vocab;
        if let Some(rank) = vocab.rank(piece) {
            out.push(rank);
            return;
        }
        if piece.len() > LONG_FROM_BYTES {
            out.extend_from_slice(enc.long().encode(vocab, piece, &mut self.long));
            return;
        }
        self.merge_short(vocab, piece, u32::MAX);
        for w in self.starts.windows(2) {
            out.push(
                vocab
                    .rank(&piece[w[0]..w[1]])
                    .expect("merged parts are tokens"),
            );
        }
    }

    /// The merge loop over this merger's scratch space ([`merge_below`]).
    fn merge_short(&mut self, vocab: &Vocab, piece: &[u8], below: u32) {
        merge_below(vocab, piece, below, &mut self.starts, &mut self.pair_ranks);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_known_strings() {
        let cl = Encoding::cl100k();
        assert_eq!(cl.count("hello world"), 2);
        assert_eq!(cl.count(""), 0);
        assert_eq!(cl.encode("hello world"), [15339, 1917]);
        assert_eq!(cl.decode(&cl.encode("héllo 世界")), "héllo 世界".as_bytes());
        assert_eq!(Encoding::o200k().encode("hello world"), [24912, 2375]);
    }

    /// The merge loop's tokens for `piece`, the definition backtracking must meet.
    fn merged(enc: &Encoding, piece: &[u8]) -> Vec<u32> {
        let mut m = Merger::default();
        m.merge_short(&enc.vocab, piece, u32::MAX);
        let ranks = m
            .starts
            .windows(2)
            .map(|w| enc.vocab.rank(&piece[w[0]..w[1]]));
        ranks.map(|r| r.expect("merged parts are tokens")).collect()
    }

    fn backtracked(enc: &Encoding, piece: &[u8]) -> Vec<u32> {
        let mut scratch = Backtracker::default();
        let tokens = enc.long().encode(&enc.vocab, piece, &mut scratch).to_vec();
        // the count that keeps only a window of tokens counts the same, and a window too small
        // to back up into gives up rather than count wrong
        assert_eq!(
            enc.long().count(&enc.vocab, piece, &mut scratch),
            tokens.len()
        );
        for window in [1, 2, 3, 8] {
            let n = enc
                .long()
                .count_in_window(&enc.vocab, piece, &mut scratch, window);
            assert!(
                n.is_none_or(|n| n == tokens.len()),
                "{n:?} {}",
                tokens.len()
            );
        }
        tokens
    }

    #[test]
    fn backtracking_and_the_merge_loop_agree() {
        for enc in [Encoding::cl100k(), Encoding::o200k()] {
            for piece in [
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                "abcabcabcabcabcabcxyzzy",
                "ゆゆゆゆ",
                "================================",
                "                                ",
                "\n\n\n\t\t",
                "xXxXxxxXXXxxXXXXxxxxx",
                "supercalifragilisticexpialidocious",
            ] {
                let long = piece.repeat(20);
                assert_eq!(
                    backtracked(enc, long.as_bytes()),
                    merged(enc, long.as_bytes()),
                    "{piece}"
                );
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// Any byte string, however repetitive, backtracks to the merge loop's tokens.
        #[test]
        fn backtracking_equals_the_merge_loop(
            text in "(a|b|ab|ba|aa|x|=|-| |e|é|ゆ|😀|th|the|ing| the|[a-z]{1,3}){1,160}",
        ) {
            for enc in [Encoding::cl100k(), Encoding::o200k()] {
                proptest::prop_assert_eq!(
                    backtracked(enc, text.as_bytes()),
                    merged(enc, text.as_bytes())
                );
            }
        }
    }

    #[test]
    fn long_single_pieces_are_counted() {
        // one piece of 2 MB: a quadratic merge would take hours here
        for text in [
            "a".repeat(2_000_000),
            "ab".repeat(1_000_000),
            "=".repeat(2_000_000),
        ] {
            let n = Encoding::cl100k().count(&text);
            assert_eq!(n, bpe_openai::cl100k_base().count(text.as_str()));
            let n = Encoding::o200k().count(&text);
            assert_eq!(n, bpe_openai::o200k_base().count(text.as_str()));
        }
    }
}
