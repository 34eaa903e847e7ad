//! Counting only as much text as a decision needs. Text is counted segment by segment at safe
//! cuts (places where both encodings' pre-tokenisation splits whatever the text around:
//! [`crate::ground::tokens::cuts`]), stopping once a limit is passed, and a preview needs only its own
//! prefix encoded.

use crate::ground::tokens::cuts::{is_safe_cut, safe_cut, SEGMENT_BYTES};
use crate::ground::tokens::{Encoding, Tokenizer};

/// A text of more bytes than this many per token of a limit is first checked for more pieces
/// than the limit: at the 3-5 bytes per token of most text it is over, and the check costs a
/// fifth of a count.
const PIECE_CHECK_BYTES_PER_TOKEN: usize = 2;

/// An exact counter that can stop early.
#[derive(Clone, Copy)]
pub struct PrefixCounter {
    bpe: &'static Encoding,
    /// Tokens of the tokenizer the budget is written in per BPE token (the Claude estimate's factor).
    factor: f64,
}

impl std::fmt::Debug for PrefixCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PrefixCounter(x{})", self.factor)
    }
}

impl PrefixCounter {
    pub fn new(tokenizer: Tokenizer) -> Self {
        match tokenizer {
            Tokenizer::Cl100k => PrefixCounter {
                bpe: Encoding::cl100k(),
                factor: 1.0,
            },
            Tokenizer::O200k => PrefixCounter {
                bpe: Encoding::o200k(),
                factor: 1.0,
            },
            Tokenizer::ClaudeEstimate { factor } => PrefixCounter {
                bpe: Encoding::cl100k(),
                factor,
            },
        }
    }

    /// Bytes of the vocabulary's longest token.
    fn longest_token(&self) -> usize {
        self.bpe.longest_token_bytes()
    }

    /// A budget in the tokenizer's units, in BPE tokens.
    pub fn bpe_budget(&self, budget: usize) -> usize {
        (budget as f64 / self.factor).floor() as usize
    }

    /// BPE tokens in the tokenizer's units (the inverse of [`Self::bpe_budget`], rounding up).
    pub fn units(&self, bpe_tokens: usize) -> usize {
        (bpe_tokens as f64 * self.factor).ceil() as usize
    }

    /// Exact BPE count of `text`.
    pub fn count(&self, text: &str) -> usize {
        self.bpe.count(text)
    }

    /// The exact count when it is at most `limit`, else `None`; stops reading once over.
    pub fn count_up_to(&self, text: &str, limit: usize) -> Option<usize> {
        if text.len() <= limit {
            // every token is at least one byte
            return Some(self.count(text));
        }
        if text.len() > limit.saturating_mul(self.longest_token()) {
            // no token is longer than the vocabulary's longest, so the count is over `limit`
            // without reading the text (a 60 MB result costs nothing here)
            return None;
        }
        if text.len() > limit.saturating_mul(PIECE_CHECK_BYTES_PER_TOKEN)
            && self.bpe.pieces_exceed(text, limit)
        {
            // more pieces than the limit: over it, known without merging a piece
            return None;
        }
        self.bpe.count_up_to(text, limit)
    }

    /// The longest prefix of one segment within `limit` tokens, cut at a token boundary and a
    /// character boundary, verified by counting it.
    fn partial(&self, seg: &str, limit: usize) -> (usize, usize) {
        let tokens = self.bpe.encode(seg);
        let mut take = limit.min(tokens.len());
        loop {
            let bytes = self.bpe.decode(&tokens[..take]);
            let mut len = bytes.len().min(seg.len());
            while len > 0 && !seg.is_char_boundary(len) {
                len -= 1;
            }
            let n = self.count(&seg[..len]);
            if n <= limit || take == 0 {
                return (len, n);
            }
            take = take.saturating_sub((n - limit).max(1));
        }
    }
}

/// Token counts of a text's leading segments, kept so later passes over the same text (or a
/// text sharing its beginning) do not encode those bytes again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan {
    /// (end byte, tokens of `text[..end]`) after each segment read so far.
    bounds: Vec<(usize, usize)>,
    /// The whole text has been read.
    done: bool,
}

impl Scan {
    /// A scan of `new` that keeps what `old_scan` knew of `old`, up to where they differ.
    pub fn rebase(old: &str, old_scan: &Scan, new: &str) -> Scan {
        let same = common_prefix(old.as_bytes(), new.as_bytes());
        if same == old.len() && same == new.len() {
            return old_scan.clone();
        }
        // a cut at `end` was chosen by looking at the bytes from `end` on: keep the cuts before
        // `same` that are still safe cuts of the new text
        let bounds = old_scan
            .bounds
            .iter()
            .copied()
            .take_while(|(end, _)| *end < same && is_safe_cut(new, *end))
            .collect();
        Scan {
            bounds,
            done: false,
        }
    }

    /// A scan from (end byte, cumulative tokens) pairs at safe cuts.
    pub fn from_bounds(bounds: Vec<(usize, usize)>, done: bool) -> Scan {
        Scan { bounds, done }
    }

    /// A finished scan of a text whose exact count is known.
    pub fn known(len: usize, tokens: usize) -> Scan {
        Scan {
            bounds: vec![(len, tokens)],
            done: true,
        }
    }

    fn last(&self) -> (usize, usize) {
        self.bounds.last().copied().unwrap_or((0, 0))
    }
}

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let chunk = 64;
    let mut i = 0;
    while i + chunk <= n && a[i..i + chunk] == b[i..i + chunk] {
        i += chunk;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

impl PrefixCounter {
    /// Like [`Self::count_up_to`], reading only what `scan` does not know yet.
    pub fn count_scanned(&self, text: &str, limit: usize, scan: &mut Scan) -> Option<usize> {
        loop {
            let (end, tokens) = scan.last();
            if tokens > limit {
                return None;
            }
            if scan.done || end >= text.len() {
                scan.done = true;
                return Some(tokens);
            }
            let rest = &text[end..];
            let Some(cut) = safe_cut(rest, SEGMENT_BYTES) else {
                // no safe cut ahead (minified JSON, base64): count the rest, stopping early
                let n = self.count_up_to(rest, limit - tokens)?;
                scan.bounds.push((text.len(), tokens + n));
                continue;
            };
            scan.bounds
                .push((end + cut, tokens + self.count(&rest[..cut])));
        }
    }

    /// The longest prefix of `text` with at most `limit` tokens, preferring a cut right after a
    /// line break when one is within `line_slack` of the end; returns (bytes, tokens). Reuses
    /// and extends `scan`, so segments already counted are not encoded again.
    pub fn prefix_scanned(
        &self,
        text: &str,
        limit: usize,
        line_slack: f64,
        scan: &mut Scan,
    ) -> (usize, usize) {
        if self.count_scanned(text, limit, scan).is_some() {
            return (text.len(), scan.last().1);
        }
        // the last whole segment within the limit, then part of the next
        let i = scan.bounds.iter().rposition(|(_, t)| *t <= limit);
        let (start, before) = i.map_or((0, 0), |i| scan.bounds[i]);
        // the segment that passed the limit, or the uncounted rest of the text
        let next_end = scan
            .bounds
            .get(i.map_or(0, |i| i + 1))
            .map_or(text.len(), |b| b.0);
        let (plen, ptok) = self.partial(&text[start..next_end], limit - before);
        let end = start + plen;
        let mut floor = end - ((end as f64 * line_slack) as usize).min(end);
        while !text.is_char_boundary(floor) {
            floor -= 1;
        }
        let Some(nl) = text[floor..end].rfind('\n') else {
            return (end, before + ptok);
        };
        let cut = floor + nl + 1;
        let (seg_start, seg_before) = scan
            .bounds
            .iter()
            .rev()
            .copied()
            .find(|(e, _)| *e <= cut)
            .unwrap_or((0, 0));
        (cut, seg_before + self.count(&text[seg_start..cut]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ground::tokens::cuts::segments;
    use proptest::prelude::*;

    fn text_strategy() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("\n".to_string()),
            Just("\n\n".to_string()),
            Just("\r\n".to_string()),
            Just(" ".to_string()),
            Just("/".to_string()),
            Just("://".to_string()),
            "[a-zA-Z]{1,12}",
            "[0-9]{1,7}",
            "[ \t]{1,4}",
            "[.,;:!?'\"(){}\\[\\]-]{1,3}",
            "[é世界😀ß]{1,3}",
            "\n[ \t]{1,12}",
            "\r\n {2,8}",
            "[\u{a0}\u{2028}\u{85}\u{0b}\u{301}]{1,2}",
            "'(s|t|re|ll)",
        ];
        proptest::collection::vec(piece, 0..3000).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn segment_counts_add_up_to_the_whole(text in text_strategy()) {
            for tk in [Tokenizer::Cl100k, Tokenizer::O200k] {
                let c = PrefixCounter::new(tk);
                let whole = c.count(&text);
                let parts: usize = segments(&text).map(|s| c.count(s)).sum();
                prop_assert_eq!(parts, whole);
                prop_assert_eq!(c.count_up_to(&text, usize::MAX), Some(whole));
            }
        }

        #[test]
        fn scans_agree_with_fresh_counts(text in text_strategy(), limit in 0usize..3000, cut in 0usize..4000) {
            let c = PrefixCounter::new(Tokenizer::Cl100k);
            let mut scan = Scan::default();
            prop_assert_eq!(c.count_scanned(&text, limit, &mut scan), c.count_up_to(&text, limit));
            let (len, n) = c.prefix_scanned(&text, limit, 0.1, &mut scan);
            prop_assert!(text.is_char_boundary(len) && n <= limit);
            prop_assert_eq!(n, c.count(&text[..len]));
            // an edited text keeps only what is still true
            let mut at = cut.min(text.len());
            while !text.is_char_boundary(at) { at -= 1; }
            let edited = format!("{}[removed]{}", &text[..at], &text[at..]);
            let mut rebased = Scan::rebase(&text, &scan, &edited);
            prop_assert_eq!(c.count_scanned(&edited, usize::MAX, &mut rebased), Some(c.count(&edited)));
        }

        #[test]
        fn prefix_fits_and_is_counted_exactly(text in text_strategy(), limit in 0usize..3000) {
            let c = PrefixCounter::new(Tokenizer::Cl100k);
            let (len, n) = c.prefix_scanned(&text, limit, 0.1, &mut Scan::default());
            prop_assert!(text.is_char_boundary(len));
            prop_assert_eq!(n, c.count(&text[..len]));
            prop_assert!(n <= limit);
        }
    }

    /// The check by pieces never decides wrongly: for texts of few long pieces (each many
    /// tokens) and of many short ones, at every limit around their count.
    #[test]
    fn count_up_to_is_exact_at_every_limit_whatever_the_pieces() {
        let c = PrefixCounter::new(Tokenizer::Cl100k);
        for text in [
            "abcdefghij".repeat(300),
            "x".repeat(2000) + " " + &"y".repeat(2000),
            "a b c d e f g h ".repeat(200),
            "{\"k\": [1, 2, 3], \"s\": \"ünïcödé\"}\n".repeat(100),
        ] {
            let n = c.count(&text);
            for limit in [0, 1, n / 4, n / 2, n - 1, n, n + 1, n * 2] {
                let want = (n <= limit).then_some(n);
                assert_eq!(c.count_up_to(&text, limit), want, "{limit} of {n}");
            }
        }
    }

    #[test]
    fn count_up_to_stops_early_and_is_exact_below() {
        let c = PrefixCounter::new(Tokenizer::Cl100k);
        let text = "The quick brown fox jumps over the lazy dog.\n".repeat(2000);
        assert_eq!(c.count_up_to(&text, 10), None);
        assert_eq!(c.count_up_to(&text, 1_000_000), Some(c.count(&text)));
        // the shortcut by the longest token: a text too long to fit is over without counting,
        // and one just short of the bound is still counted exactly
        let longest = c.longest_token();
        assert!((64..=1024).contains(&longest), "{longest}");
        let spaces = " ".repeat(longest * 3);
        assert_eq!(c.count_up_to(&spaces, 2), None);
        assert_eq!(c.count_up_to(&spaces, 3), Some(c.count(&spaces)));
        assert_eq!(c.count(&spaces), 3, "runs of spaces use the longest token");
    }

    #[test]
    fn prefix_prefers_a_line_break() {
        let c = PrefixCounter::new(Tokenizer::Cl100k);
        let text = "alpha beta gamma delta\n".repeat(100);
        let (len, n) = c.prefix_scanned(&text, 50, 0.1, &mut Scan::default());
        assert!(text[..len].ends_with('\n'), "{:?}", &text[..len]);
        assert!((40..=50).contains(&n));
    }
}
