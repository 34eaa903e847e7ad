//! The merge loop of byte-pair encoding, as tiktoken runs it: a piece starts as single bytes
//! and the adjacent pair whose concatenation has the lowest rank is merged (the leftmost of
//! equals), again and again. Quadratic in the piece's length: the encoder uses it for short
//! pieces, and the backtracking tables use it to find how each token was made.

use super::tables::Vocab;

/// Leave in `starts` the boundaries of `piece`'s parts (then its end) after every merge of rank
/// below `below` (`u32::MAX`: all of them, the piece's tokens); `ranks` is scratch space.
pub(crate) fn merge_below(
    vocab: &Vocab,
    piece: &[u8],
    below: u32,
    starts: &mut Vec<usize>,
    ranks: &mut Vec<u32>,
) {
    starts.clear();
    starts.extend(0..=piece.len());
    ranks.clear();
    ranks.extend((0..piece.len().saturating_sub(1)).map(|i| pair_rank(vocab, piece, i, i + 2)));
    loop {
        let Some((i, _)) = ranks
            .iter()
            .enumerate()
            .filter(|(_, r)| **r < below)
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

/// The rank of `piece[from..to]` as one token, or `u32::MAX`.
#[inline]
fn pair_rank(vocab: &Vocab, piece: &[u8], from: usize, to: usize) -> u32 {
    vocab.rank(&piece[from..to]).unwrap_or(u32::MAX)
}
