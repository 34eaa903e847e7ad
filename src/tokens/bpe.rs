//! Exact byte-pair encoding as tiktoken defines it: pre-tokenise the text, then encode each
//! piece on its own. A piece that is a token is one token; any other piece starts as single
//! bytes and the adjacent pair whose concatenation has the lowest rank is merged (the leftmost
//! of equals), again and again, until no adjacent pair is a token. Short pieces do this over a
//! vector; long ones (a run of 200 KB of `a` is one piece) over a heap and a linked list, so
//! no piece costs more than O(n log n).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::{LazyLock, OnceLock};

use super::cuts::chunks;
use super::pieces::Pretokenizer;
use super::tables::{Table, Vocab};

/// Pieces longer than this many bytes are merged with the heap.
const HEAP_FROM_BYTES: usize = 128;

/// A text is counted on several threads when each gets at least this many bytes.
const PARALLEL_CHUNK_BYTES: usize = 512 * 1024;

/// One encoding: its vocabulary and its pre-tokeniser.
pub struct Encoding {
    vocab: Vocab,
    pre: Pretokenizer,
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
        }
    }

    /// Bytes of the vocabulary's longest token.
    pub fn longest_token_bytes(&self) -> usize {
        self.vocab.longest_bytes()
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
            .map(|piece| merger.count(&self.vocab, piece.as_bytes()))
            .sum()
    }

    /// The exact count when it is at most `limit`, else `None`, stopping at the piece that
    /// passes the limit.
    pub fn count_up_to(&self, text: &str, limit: usize) -> Option<usize> {
        let mut merger = Merger::default();
        let mut total = 0usize;
        for piece in self.pre.pieces(text) {
            total += merger.count(&self.vocab, piece.as_bytes());
            if total > limit {
                return None;
            }
        }
        Some(total)
    }

    /// The tokens (ranks) of `text`.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let mut merger = Merger::default();
        let mut tokens = Vec::with_capacity(text.len() / 3);
        for piece in self.pre.pieces(text) {
            merger.encode(&self.vocab, piece.as_bytes(), &mut tokens);
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
}

impl Merger {
    fn count(&mut self, vocab: &Vocab, piece: &[u8]) -> usize {
        if piece.len() <= 1 || vocab.rank(piece).is_some() {
            return usize::from(!piece.is_empty());
        }
        self.merge(vocab, piece);
        self.starts.len() - 1
    }

    fn encode(&mut self, vocab: &Vocab, piece: &[u8], out: &mut Vec<u32>) {
        if let Some(rank) = vocab.rank(piece) {
            out.push(rank);
            return;
        }
        self.merge(vocab, piece);
        for w in self.starts.windows(2) {
            out.push(
                vocab
                    .rank(&piece[w[0]..w[1]])
                    .expect("merged parts are tokens"),
            );
        }
    }

    /// Leave in `starts` the boundaries of the piece's tokens.
    fn merge(&mut self, vocab: &Vocab, piece: &[u8]) {
        if piece.len() > HEAP_FROM_BYTES {
            merge_heap(vocab, piece, &mut self.starts);
        } else {
            self.merge_short(vocab, piece);
        }
    }

    /// The quadratic merge, fastest for short pieces.
    fn merge_short(&mut self, vocab: &Vocab, piece: &[u8]) {
        let starts = &mut self.starts;
        let ranks = &mut self.pair_ranks;
        starts.clear();
        starts.extend(0..=piece.len());
        ranks.clear();
        ranks.extend((0..piece.len() - 1).map(|i| pair_rank(vocab, piece, i, i + 2)));
        loop {
            let Some((i, _)) = ranks
                .iter()
                .enumerate()
                .filter(|(_, r)| **r != u32::MAX)
                .min_by_key(|(i, r)| (**r, *i))
            else {
                return;
            };
            // part i absorbs part i + 1
            starts.remove(i + 1);
            ranks.remove(i);
            if i + 2 < starts.len() {
                ranks[i] = pair_rank(vocab, piece, starts[i], starts[i + 2]);
            }
            if i > 0 {
                ranks[i - 1] = pair_rank(vocab, piece, starts[i - 1], starts[i + 1]);
            }
        }
    }
}

/// The rank of `piece[from..to]` as one token, or `u32::MAX`.
#[inline]
fn pair_rank(vocab: &Vocab, piece: &[u8], from: usize, to: usize) -> u32 {
    vocab.rank(&piece[from..to]).unwrap_or(u32::MAX)
}

/// The same merge for long pieces: parts in a linked list, candidate pairs in a min-heap by
/// (rank, start). A popped pair is still current only if the pair starting there now has the
/// same rank (parts only grow, and a rank names one byte string, so a changed pair never
/// returns to an old rank).
fn merge_heap(vocab: &Vocab, piece: &[u8], starts: &mut Vec<usize>) {
    let n = piece.len();
    // part at byte i (when alive) ends where the next alive part starts: next[i]; n ends
    let mut next: Vec<usize> = (1..=n).collect();
    let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
    let mut alive = vec![true; n];
    let mut heap = BinaryHeap::with_capacity(n);
    for i in 0..n - 1 {
        let r = pair_rank(vocab, piece, i, i + 2);
        if r != u32::MAX {
            heap.push(Reverse((r, i)));
        }
    }
    let rank_at = |next: &[usize], i: usize| -> u32 {
        let j = next[i];
        if j >= n {
            return u32::MAX;
        }
        pair_rank(vocab, piece, i, next[j])
    };
    while let Some(Reverse((r, i))) = heap.pop() {
        if !alive[i] || rank_at(&next, i) != r {
            continue;
        }
        let j = next[i];
        alive[j] = false;
        next[i] = next[j];
        if next[i] < n {
            prev[next[i]] = i;
        }
        let after = rank_at(&next, i);
        if after != u32::MAX {
            heap.push(Reverse((after, i)));
        }
        if i > 0 {
            let before = rank_at(&next, prev[i]);
            if before != u32::MAX {
                heap.push(Reverse((before, prev[i])));
            }
        }
    }
    starts.clear();
    starts.extend((0..n).filter(|i| alive[*i]));
    starts.push(n);
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

    #[test]
    fn heap_and_short_merges_agree() {
        let cl = Encoding::cl100k();
        for piece in [
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "abcabcabcabcabcabcxyzzy",
            "ゆゆゆゆ",
        ] {
            let long = piece.repeat(20);
            let (mut short, mut heap) = (Merger::default(), Vec::new());
            short.merge_short(&cl.vocab, long.as_bytes());
            merge_heap(&cl.vocab, long.as_bytes(), &mut heap);
            assert_eq!(short.starts, heap, "{piece}");
        }
    }

    #[test]
    fn long_single_pieces_are_counted() {
        // one piece of 200 KB: a quadratic merge would take minutes here
        let text = "a".repeat(200_000);
        let n = Encoding::cl100k().count(&text);
        assert_eq!(n, bpe_openai::cl100k_base().count(text.as_str()));
    }
}
