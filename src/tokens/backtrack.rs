//! Long pieces in time linear in practice: the backtracking form of byte-pair encoding.
//!
//! BPE's merge loop is quadratic on a long piece, and even over a heap it costs a heap entry and
//! several lookups per byte (17 MB of one letter took 20 s). A piece's encoding can instead be
//! found left to right. Every token BPE can make has a *split*, the two tokens its last merge
//! joined, found by encoding the token's own bytes. Two tokens may stand side by side in an
//! encoding only when no merge across their boundary happens before the merges that built them
//! ([`Long::fits_after`] walks the two merge trees down their facing edges to check it). The
//! encoding is then the sequence, built left to right, that takes at each position the longest
//! token that fits after the previous one and from whose end the rest can still be encoded,
//! backing up (and remembering the position as a dead end) when nothing fits. The tables this
//! needs are built from the vocabulary the first time an encoding meets a long piece.

use super::tables::Vocab;

/// Per-encoding tables for long pieces.
pub(crate) struct Long {
    /// For each token, the two tokens its last merge joined: a single byte is its own split
    /// twice; a token BPE never makes from its own bytes has `NEVER` twice.
    split: Vec<(u32, u32)>,
    /// For each token, the longest token BPE makes that is a proper prefix of it, or `NEVER`.
    shorter: Vec<u32>,
    /// For each pair of first bytes, the byte length of the longest token starting with them.
    longest_from: Vec<u8>,
}

const NEVER: u32 = u32::MAX;

/// Scratch space reused across the long pieces of one text.
#[derive(Default)]
pub(crate) struct Backtracker {
    tokens: Vec<u32>,
    /// One bit per byte position: clear once the position is known to be a dead end.
    open: Vec<u64>,
}

impl Long {
    /// Build the tables; `merge_below(bytes, limit, starts)` must leave in `starts` the parts
    /// of `bytes` after every merge of rank below `limit` (the ordinary merge loop).
    pub(crate) fn build(
        vocab: &Vocab,
        mut merge_below: impl FnMut(&[u8], u32, &mut Vec<usize>),
    ) -> Long {
        let n = vocab.len();
        let mut split = vec![(NEVER, NEVER); n];
        let mut starts = Vec::new();
        for (t, slot) in split.iter_mut().enumerate() {
            let t = t as u32;
            let bytes = vocab.bytes(t);
            if bytes.len() == 1 {
                *slot = (t, t);
                continue;
            }
            // every merge before this token's own: what remains must be exactly its two halves
            merge_below(bytes, t, &mut starts);
            if let [0, mid, end] = starts[..] {
                debug_assert_eq!(end, bytes.len());
                let left = vocab.rank(&bytes[..mid]).expect("merged parts are tokens");
                let right = vocab.rank(&bytes[mid..]).expect("merged parts are tokens");
                *slot = (left, right);
            }
        }
        let made = |t: u32| split[t as usize].0 != NEVER;
        let mut shorter = vec![NEVER; n];
        let mut longest_from = vec![0u8; 1 << 16];
        for (t, slot) in shorter.iter_mut().enumerate() {
            let bytes = vocab.bytes(t as u32);
            *slot = (1..bytes.len())
                .rev()
                .filter_map(|len| vocab.rank(&bytes[..len]))
                .find(|r| made(*r))
                .unwrap_or(NEVER);
            if bytes.len() >= 2 && made(t as u32) {
                let key = pair_key(bytes);
                let len = u8::try_from(bytes.len()).expect("tokens are at most 255 bytes");
                longest_from[key] = longest_from[key].max(len);
            }
        }
        Long {
            split,
            shorter,
            longest_from,
        }
    }

    /// The longest token BPE makes that starts `rest` (not empty).
    fn longest_at(&self, vocab: &Vocab, rest: &[u8]) -> u32 {
        if rest.len() >= 2 {
            let most = usize::from(self.longest_from[pair_key(rest)]).min(rest.len());
            for len in (2..=most).rev() {
                if let Some(t) = vocab.rank(&rest[..len]) {
                    if self.split[t as usize].0 != NEVER {
                        return t;
                    }
                }
            }
        }
        vocab.rank(&rest[..1]).expect("every byte is a token")
    }

    /// Whether BPE of `left`'s bytes followed by `right`'s is exactly `[left, right]`. The walk
    /// goes down the right edge of `left`'s merge tree and the left edge of `right`'s, newest
    /// merge first; at each step the two facing parts coexisted until `limit` (the rank of the
    /// merge that replaced one of them), and a token made of the two with a lower rank would
    /// have been merged across the boundary first. On equal ranks the leftmost merge goes
    /// first: a merge inside `left` beats the crossing one, the crossing one beats a merge
    /// inside `right` (hence `right + 1`).
    fn fits_after(&self, vocab: &Vocab, mut left: u32, mut right: u32) -> bool {
        let mut limit = NEVER;
        loop {
            if let Some(joined) = joined_rank(vocab, left, right) {
                if joined < limit {
                    return false;
                }
            }
            if left > right {
                limit = left;
                left = self.split[left as usize].1;
                if left == limit {
                    limit = right + 1;
                    right = self.split[right as usize].0;
                    if right + 1 == limit {
                        return true;
                    }
                }
            } else {
                limit = right + 1;
                right = self.split[right as usize].0;
                if right + 1 == limit {
                    limit = left;
                    left = self.split[left as usize].1;
                    if left == limit {
                        return true;
                    }
                }
            }
        }
    }

    /// Encode one piece into `scratch.tokens`.
    pub(crate) fn encode<'s>(
        &self,
        vocab: &Vocab,
        piece: &[u8],
        scratch: &'s mut Backtracker,
    ) -> &'s [u32] {
        let Backtracker { tokens, open } = scratch;
        tokens.clear();
        open.clear();
        open.resize(piece.len() / 64 + 1, u64::MAX);
        let is_open = |open: &[u64], p: usize| open[p / 64] >> (p % 64) & 1 == 1;
        let mut pos = 0;
        let mut candidate = Some(self.longest_at(vocab, piece));
        while pos < piece.len() {
            match candidate {
                Some(t) => {
                    let end = pos + vocab.bytes(t).len();
                    let fits = tokens
                        .last()
                        .is_none_or(|&prev| self.fits_after(vocab, prev, t));
                    if fits && is_open(open, end) {
                        tokens.push(t);
                        pos = end;
                        if pos < piece.len() {
                            candidate = Some(self.longest_at(vocab, &piece[pos..]));
                        }
                    } else {
                        candidate = Some(self.shorter[t as usize]).filter(|s| *s != NEVER);
                    }
                }
                None => {
                    // nothing fits here: a dead end; back up and try the previous token shorter
                    open[pos / 64] &= !(1u64 << (pos % 64));
                    let prev = tokens.pop().expect("single bytes always encode a piece");
                    pos -= vocab.bytes(prev).len();
                    candidate = Some(self.shorter[prev as usize]).filter(|s| *s != NEVER);
                }
            }
        }
        tokens
    }
}

/// The rank of `left`'s bytes followed by `right`'s, if that is a token.
fn joined_rank(vocab: &Vocab, left: u32, right: u32) -> Option<u32> {
    let (a, b) = (vocab.bytes(left), vocab.bytes(right));
    if a.len() + b.len() > vocab.longest_bytes() {
        return None;
    }
    let mut buf = [0u8; 512];
    let joined = &mut buf[..a.len() + b.len()];
    joined[..a.len()].copy_from_slice(a);
    joined[a.len()..].copy_from_slice(b);
    vocab.rank(joined)
}

fn pair_key(bytes: &[u8]) -> usize {
    usize::from(bytes[0]) << 8 | usize::from(bytes[1])
}
