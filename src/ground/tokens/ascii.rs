//! The pre-tokenisers' pieces found by hand where the text is ASCII: what cl100k_base's and
//! o200k_base's regexes match at a position, decided from a byte class table instead of a regex
//! search (a search costs more per piece than the merge that follows it). Each function answers
//! only when every byte it had to look at is ASCII; at the first other byte it answers `None`
//! and the caller runs the regex from the same place, so a piece of any other text is the
//! regex's own. `pieces.rs` checks both against the regexes on every string of a small alphabet
//! and on random text.

/// What the regexes can tell apart among ASCII bytes.
const LOWER: u8 = 1;
const UPPER: u8 = 2;
const DIGIT: u8 = 4;
/// `\r` and `\n`.
const BREAK: u8 = 8;
/// The space character (` ?` in the punctuation alternatives).
const SPACE: u8 = 16;
/// `\t`, vertical tab and form feed: white space that is neither a break nor a space.
const BLANK: u8 = 32;
/// Neither white space, letter nor digit: `[^\s\p{L}\p{N}]`.
const PUNCT: u8 = 64;
/// A byte of a character that is not ASCII: the regex decides.
const OTHER: u8 = 128;

const LETTER: u8 = LOWER | UPPER;
const WHITE: u8 = BREAK | SPACE | BLANK;
/// May stand before a letter run: `[^\r\n\p{L}\p{N}]`.
const PREFIX: u8 = SPACE | BLANK | PUNCT;

static CLASS: [u8; 256] = {
    let mut t = [OTHER; 256];
    let mut b = 0;
    while b < 128 {
        t[b] = match b as u8 {
            b'a'..=b'z' => LOWER,
            b'A'..=b'Z' => UPPER,
            b'0'..=b'9' => DIGIT,
            b'\r' | b'\n' => BREAK,
            b' ' => SPACE,
            // \t, \v, \f: Unicode White_Space (0x1c-0x1f are not)
            0x09 | 0x0b | 0x0c => BLANK,
            _ => PUNCT,
        };
        b += 1;
    }
    t
};

/// The two encodings' patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pattern {
    Cl100k,
    O200k,
}

/// Where the piece that starts at `start` ends, or `None` when that depends on a byte that is
/// not ASCII. `start` is before the end of `text`.
#[inline]
pub(crate) fn piece_end(pattern: Pattern, text: &[u8], start: usize) -> Option<usize> {
    match pattern {
        Pattern::Cl100k => cl100k(text, start),
        Pattern::O200k => o200k(text, start),
    }
}

#[inline]
fn class(text: &[u8], at: usize) -> u8 {
    // past the end reads as "no character": no class bit is set
    text.get(at).map_or(0, |b| CLASS[usize::from(*b)])
}

/// The first index from `at` whose class is not in `set`, or `None` when that byte is not
/// ASCII (the run might go on in a character the table does not know).
#[inline]
fn run_end(text: &[u8], mut at: usize, set: u8) -> Option<usize> {
    while at < text.len() && CLASS[usize::from(text[at])] & set != 0 {
        at += 1;
    }
    (class(text, at) != OTHER).then_some(at)
}

/// `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s+$|\s*[\r\n]`,
/// then `\s+(?!\S)|\s`.
fn cl100k(text: &[u8], start: usize) -> Option<usize> {
    let c = class(text, start);
    if c == OTHER {
        return None;
    }
    if text[start] == b'\'' {
        if let Some(end) = contraction(text, start)? {
            return Some(end);
        }
    }
    if let Some(at) = letters_from(text, start, c)? {
        return run_end(text, at, LETTER);
    }
    if c == DIGIT {
        return digits(text, start);
    }
    if let Some(end) = punctuation(text, start, c, BREAK)? {
        return Some(end);
    }
    white(text, start, true)
}

/// `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
/// the same with `+` and `*` swapped, `\p{N}{1,3}`, ` ?[^\s\p{L}\p{N}]+[\r\n/]*`, `\s*[\r\n]+`,
/// then `\s+(?!\S)|\s+`.
fn o200k(text: &[u8], start: usize) -> Option<usize> {
    let c = class(text, start);
    if c == OTHER {
        return None;
    }
    if let Some(at) = letters_from(text, start, c)? {
        // upper case then lower case (the first alternative), else upper case alone (the
        // second): in ASCII either ends where the lower-case run after the upper-case one ends
        let upper = run_end(text, at, UPPER)?;
        let end = run_end(text, upper, LOWER)?;
        if text.get(end) == Some(&b'\'') {
            if let Some(with) = contraction(text, end)? {
                return Some(with);
            }
        }
        return Some(end);
    }
    if c == DIGIT {
        return digits(text, start);
    }
    if let Some(end) = punctuation(text, start, c, BREAK)? {
        // `[\r\n/]*`: after the breaks, slashes and more breaks
        let mut end = end;
        while matches!(text.get(end), Some(b'\r' | b'\n' | b'/')) {
            end += 1;
        }
        return Some(end);
    }
    white(text, start, false)
}

/// Where a letter run starts when the piece at `start` is one (`[^\r\n\p{L}\p{N}]?\p{L}`):
/// `Some(Some(at))`, `Some(None)` when it is not, `None` when a byte that is not ASCII decides.
#[inline]
fn letters_from(text: &[u8], start: usize, c: u8) -> Option<Option<usize>> {
    if c & LETTER != 0 {
        return Some(Some(start));
    }
    if c & PREFIX == 0 {
        return Some(None);
    }
    match class(text, start + 1) {
        OTHER => None,
        next if next & LETTER != 0 => Some(Some(start + 1)),
        _ => Some(None),
    }
}

/// `\p{N}{1,3}` at a digit.
#[inline]
fn digits(text: &[u8], start: usize) -> Option<usize> {
    let mut end = start + 1;
    while end < start + 3 && class(text, end) == DIGIT {
        end += 1;
    }
    // a digit that is not ASCII could make a run of fewer than three longer
    (end == start + 3 || class(text, end) != OTHER).then_some(end)
}

/// ` ?[^\s\p{L}\p{N}]+` then a run of `tail` (line breaks): `Some(None)` when it does not
/// match at `start`.
#[inline]
fn punctuation(text: &[u8], start: usize, c: u8, tail: u8) -> Option<Option<usize>> {
    let from = match c {
        PUNCT => start,
        SPACE => match class(text, start + 1) {
            OTHER => return None,
            PUNCT => start + 1,
            _ => return Some(None),
        },
        _ => return Some(None),
    };
    let end = run_end(text, from, PUNCT)?;
    let mut end = end;
    while class(text, end) & tail != 0 {
        end += 1;
    }
    Some(Some(end))
}

/// A run of white space at `start`: to the end of the text when it reaches it (cl100k's
/// `\s+$`), else through its last line break (`\s*[\r\n]`), else the run less its last
/// character when more text follows (`\s+(?!\S)`), or the run when it is one character.
#[inline]
fn white(text: &[u8], start: usize, to_end: bool) -> Option<usize> {
    let end = run_end(text, start, WHITE)?;
    if end == text.len() && to_end {
        return Some(end);
    }
    if let Some(last) = text[start..end]
        .iter()
        .rposition(|b| matches!(b, b'\r' | b'\n'))
    {
        return Some(start + last + 1);
    }
    if end < text.len() && end - start > 1 {
        return Some(end - 1);
    }
    Some(end)
}

/// A contraction at the apostrophe at `at`: cl100k's `'(?i:[sdmt]|ll|ve|re)`, o200k's
/// `(?i:'s|'t|'re|'ve|'m|'ll|'d)` (the same seven; only where they may stand differs).
/// `Some(None)` when there is none.
#[inline]
fn contraction(text: &[u8], at: usize) -> Option<Option<usize>> {
    let one = |i: usize| -> Option<Option<u8>> {
        match text.get(i) {
            None => Some(None),
            // `(?i)` folds characters that are not ASCII onto ASCII letters (U+017F onto `s`)
            Some(b) if *b >= 0x80 => None,
            Some(b) => Some(Some(b.to_ascii_lowercase())),
        }
    };
    let end = match one(at + 1)? {
        Some(b's' | b't' | b'd' | b'm') => Some(at + 2),
        Some(first @ (b'l' | b'v' | b'r')) => {
            let second = match first {
                b'l' => b'l',
                _ => b'e',
            };
            (one(at + 2)? == Some(second)).then_some(at + 3)
        }
        _ => None,
    };
    Some(end)
}
