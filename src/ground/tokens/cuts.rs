//! Places where a text can be cut without changing its token count. BPE tokenizers split text
//! into pieces by a regex before merging, and at some places both cl100k_base's and
//! o200k_base's split is certain whatever the text around (right after the last line break of
//! a run of white space, indented or not; before a space between two letters: see
//! [`is_safe_cut`]). The tokens of the two halves of such a cut add up to the tokens of the
//! whole (checked by the proptests in `budget::prefix` and `tokens::exact_tests`, and against
//! Python tiktoken by `scripts/check-cuts.py`). The engine counts segment by segment at such
//! cuts; a large text is counted in chunks on several threads.

/// Segments are cut near this many bytes.
pub const SEGMENT_BYTES: usize = 4096;
/// Past this many bytes without a safe cut, the rest is counted in one piece.
pub const MAX_SEGMENT_BYTES: usize = 64 * 1024;

/// How far past a line break [`is_safe_cut`] looks for the end of the white space that follows.
const MAX_LOOKAHEAD: usize = 256;

/// Split `text` at safe cuts into pieces of about [`SEGMENT_BYTES`].
pub fn segments(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let cut = safe_cut(rest, SEGMENT_BYTES).unwrap_or(rest.len());
        let (seg, tail) = rest.split_at(cut);
        rest = tail;
        Some(seg)
    })
}

/// Split `text` at safe cuts into at most `n` chunks of about equal length; fewer when a
/// stretch of [`MAX_SEGMENT_BYTES`] after an ideal cut has no safe cut.
pub fn chunks(text: &str, n: usize) -> Vec<&str> {
    let mut out = Vec::with_capacity(n);
    let mut start = 0;
    for k in 1..n {
        let target = text.len() / n * k;
        if target <= start {
            continue;
        }
        if let Some(cut) = safe_cut(&text[start..], target - start) {
            out.push(&text[start..start + cut]);
            start += cut;
        }
    }
    out.push(&text[start..]);
    out
}

/// The first safe cut at or after `from` bytes and before [`MAX_SEGMENT_BYTES`] (for a `from`
/// past half of that, before `from + MAX_SEGMENT_BYTES / 2`).
pub fn safe_cut(text: &str, from: usize) -> Option<usize> {
    if text.len() <= from {
        return None;
    }
    let stop = text
        .len()
        .min(MAX_SEGMENT_BYTES.max(from + MAX_SEGMENT_BYTES / 2));
    (from..stop).find(|&i| is_safe_cut(text, i))
}

/// Whether byte `p` of `text` is a place where both cl100k_base's and o200k_base's
/// pre-tokenisation split, so the tokens of `text[..p]` and `text[p..]` add up to the whole's.
/// Two kinds of place qualify:
/// - right after the last line break of a run of white space: `\s*[\r\n]+` ends a piece at
///   the last line break of the run it starts in, and what follows (spaces that indent a
///   line, then the line) starts a piece of its own. Not when a `\r` or `\n` follows within
///   the same run of white space (the piece would reach it), nor before `/` (o200k joins
///   `[\r\n/]*` to a punctuation run);
/// - before one space between two ASCII letters: a run of letters ends at the space, and the
///   space starts the next word's piece (` ?\p{L}+`), in one text or in two.
///
/// Checked against the whole-text count by proptests, and against Python tiktoken by
/// `scripts/check-cuts.py` (random joins of line breaks, CRLF, runs of spaces, tabs, NBSP,
/// U+2028, U+0085, contractions, digits, `/`, combining marks and CJK, both encodings).
pub fn is_safe_cut(text: &str, p: usize) -> bool {
    let bytes = text.as_bytes();
    if p == 0 || p >= bytes.len() {
        return false;
    }
    match bytes[p - 1] {
        b'\n' => {
            if matches!(bytes[p], b'\r' | b'\n' | b'/') {
                return false;
            }
            let end = bytes.len().min(p + MAX_LOOKAHEAD);
            // the white space ahead, up to the first character that is not white space
            let mut ahead = text[p..].char_indices();
            loop {
                match ahead.next() {
                    None => return true,
                    Some((i, _)) if p + i >= end => return false,
                    Some((_, '\r' | '\n')) => return false,
                    Some((_, c)) if c.is_whitespace() => {}
                    Some(_) => return true,
                }
            }
        }
        b if b.is_ascii_alphabetic() => {
            bytes[p] == b' ' && bytes.get(p + 1).is_some_and(u8::is_ascii_alphabetic)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_text_at_safe_cuts() {
        let text = "alpha beta\n  gamma\n".repeat(10_000);
        let parts = chunks(&text, 3);
        assert_eq!(parts.len(), 3);
        assert_eq!(parts.concat(), text);
        let mut at = 0;
        for part in &parts[..2] {
            at += part.len();
            assert!(is_safe_cut(&text, at));
        }
        // no safe cut anywhere: one chunk
        let digits = "1234567890".repeat(30_000);
        assert_eq!(chunks(&digits, 2), [digits.as_str()]);
    }
}
