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
//! backing up (and remembering the position as a dead end) when nothing fits. What this needs
//! of a token is found the first time a piece needs it.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use super::merge::merge_below;
use super::tables::Vocab;

/// Per-encoding tables for long pieces. What they hold of a token is found the first time a
/// piece needs it (a token's split costs one short merge), so making them costs one pass over
/// the vocabulary (a few milliseconds), not a merge of every token (50 ms for cl100k_base,
/// 160 ms for o200k_base).
pub(crate) struct Long {
    /// For each token, the two tokens its last merge joined, packed (`UNKNOWN` until found): a
    /// single byte is its own split twice; a token BPE never makes from its own bytes has
    /// `NEVER` twice.
    split: Vec<AtomicU64>,
    /// For each token, the longest token BPE makes that is a proper prefix of it, or `NEVER`
    /// (`UNKNOWN` until found).
    shorter: Vec<AtomicU32>,
    /// For each pair of first bytes, the byte length of the longest token starting with them.
    longest_from: Vec<u8>,
}

const NEVER: u32 = u32::MAX;
const UNKNOWN: u32 = u32::MAX - 1;
const UNKNOWN_SPLIT: u64 = pack(NEVER, UNKNOWN);

const fn pack(left: u32, right: u32) -> u64 {
    (left as u64) << 32 | right as u64
}

/// Scratch space reused across the long pieces of one text.
#[derive(Default)]
pub(crate) struct Backtracker {
    tokens: Vec<u32>,
    /// One bit per byte position: clear once the position is known to be a dead end.
    open: Vec<u64>,
}

impl Long {
    pub(crate) fn new(vocab: &Vocab) -> Long {
        let n = vocab.len();
        let mut longest_from = vec![0u8; 1 << 16];
        for t in 0..n as u32 {
            let bytes = vocab.bytes(t);
            if bytes.len() >= 2 {
                let key = pair_key(bytes);
                let len = u8::try_from(bytes.len()).expect("tokens are at most 255 bytes");
                longest_from[key] = longest_from[key].max(len);
            }
        }
        Long {
            split: (0..n).map(|_| AtomicU64::new(UNKNOWN_SPLIT)).collect(),
            shorter: (0..n).map(|_| AtomicU32::new(UNKNOWN)).collect(),
            longest_from,
        }
    }

    /// The two tokens `t`'s last merge joined (see [`Long::split`]'s field).
    fn split(&self, vocab: &Vocab, t: u32) -> (u32, u32) {
        let known = self.split[t as usize].load(Ordering::Relaxed);
        if known != UNKNOWN_SPLIT {
            return ((known >> 32) as u32, known as u32);
        }
        let bytes = vocab.bytes(t);
        let found = if bytes.len() == 1 {
            (t, t)
        } else {
            // every merge before this token's own: what remains must be exactly its two halves
            let (mut starts, mut ranks) = (Vec::new(), Vec::new());
            merge_below(vocab, bytes, t, &mut starts, &mut ranks);
            match starts[..] {
                [0, mid, _] => (
                    vocab.rank(&bytes[..mid]).expect("merged parts are tokens"),
                    vocab.rank(&bytes[mid..]).expect("merged parts are tokens"),
                ),
                _ => (NEVER, NEVER),
            }
        };
        self.split[t as usize].store(pack(found.0, found.1), Ordering::Relaxed);
        found
    }

    /// Whether BPE makes `t` from its own bytes (only such tokens appear in encodings).
    fn made(&self, vocab: &Vocab, t: u32) -> bool {
        self.split(vocab, t).0 != NEVER
    }

    /// The longest token BPE makes that is a proper prefix of `t`.
    fn shorter(&self, vocab: &Vocab, t: u32) -> Option<u32> {
        let mut known = self.shorter[t as usize].load(Ordering::Relaxed);
        if known == UNKNOWN {
            let bytes = vocab.bytes(t);
            known = (1..bytes.len())
                .rev()
                .filter_map(|len| vocab.rank(&bytes[..len]))
                .find(|r| self.made(vocab, *r))
                .unwrap_or(NEVER);
            self.shorter[t as usize].store(known, Ordering::Relaxed);
        }
        (known != NEVER).then_some(known)
    }

    /// The longest token BPE makes that starts `rest` (not empty).
    fn longest_at(&self, vocab: &Vocab, rest: &[u8]) -> u32 {
        if rest.len() >= 2 {
            let most = usize::from(self.longest_from[pair_key(rest)]).min(rest.len());
            for len in (2..=most).rev() {
                if let Some(t) = vocab.rank(&rest[..len]) {
                    if self.made(vocab, t) {
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
                left = self.split(vocab, left).1;
                if left == limit {
                    limit = right + 1;
                    right = self.split(vocab, right).0;
                    if right + 1 == limit {
                        return true;
                    }
                }
            } else {
                limit = right + 1;
                right = self.split(vocab, right).0;
                if right + 1 == limit {
                    limit = left;
                    left = self.split(vocab, left).1;
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
        self.walk(vocab, piece, scratch, None)
            .expect("an encoding that keeps every token never gives up");
        &scratch.tokens
    }

    /// The number of tokens of one piece, keeping only the last [`COUNT_WINDOW`] tokens to
    /// back up into (a 60 MB piece has 7.5 million tokens: 30 MB of them kept for nothing).
    /// Backing up further than that never happens in practice; when it would, the piece is
    /// encoded again keeping every token, so the count is always the encoding's.
    pub(crate) fn count(&self, vocab: &Vocab, piece: &[u8], scratch: &mut Backtracker) -> usize {
        match self.walk(vocab, piece, scratch, Some(COUNT_WINDOW)) {
            Some(n) => n,
            None => self
                .walk(vocab, piece, scratch, None)
                .expect("an encoding that keeps every token never gives up"),
        }
    }

    /// [`Self::count`] with another window, or `None` where it would encode again (tests).
    #[cfg(test)]
    pub(crate) fn count_in_window(
        &self,
        vocab: &Vocab,
        piece: &[u8],
        scratch: &mut Backtracker,
        window: usize,
    ) -> Option<usize> {
        self.walk(vocab, piece, scratch, Some(window))
    }

    /// Left to right, the longest token that fits after the previous one and leaves the rest
    /// encodable; at a dead end, back up. With a `window`, tokens more than twice that far
    /// back are only counted; `None` when backing up would need one of them.
    fn walk(
        &self,
        vocab: &Vocab,
        piece: &[u8],
        scratch: &mut Backtracker,
        window: Option<usize>,
    ) -> Option<usize> {
        let Backtracker { tokens, open } = scratch;
        tokens.clear();
        open.clear();
        open.resize(piece.len() / 64 + 1, u64::MAX);
        let is_open = |open: &[u64], p: usize| open[p / 64] >> (p % 64) & 1 == 1;
        let mut dropped = 0;
        let mut pos = 0;
        let mut candidate = Some(self.longest_at(vocab, piece));
        while pos < piece.len() {
            match candidate {
                Some(t) => {
                    if tokens.is_empty() && dropped > 0 {
                        // the token before is no longer known
                        return None;
                    }
                    let end = pos + vocab.bytes(t).len();
                    let fits = tokens
                        .last()
                        .is_none_or(|&prev| self.fits_after(vocab, prev, t));
                    if fits && is_open(open, end) {
                        tokens.push(t);
                        pos = end;
                        if let Some(w) = window.filter(|w| tokens.len() >= 2 * w) {
                            tokens.drain(..w);
                            dropped += w;
                        }
                        if pos < piece.len() {
                            candidate = Some(self.longest_at(vocab, &piece[pos..]));
                        }
                    } else {
                        candidate = self.shorter(vocab, t);
                    }
                }
                None => {
                    // nothing fits here: a dead end; back up and try the previous token shorter
                    open[pos / 64] &= !(1u64 << (pos % 64));
                    let prev = tokens.pop()?;
                    pos -= vocab.bytes(prev).len();
                    candidate = self.shorter(vocab, prev);
                }
            }
        }
        Some(dropped + tokens.len())
    }
}

/// Tokens a count keeps to back up into (see [`Long::count`]).
const COUNT_WINDOW: usize = 1024;

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
