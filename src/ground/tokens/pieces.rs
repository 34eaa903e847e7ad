//! Pre-tokenisation: the pieces a text is split into before byte-pair merging, exactly as
//! tiktoken's regexes split them. Both regexes end with a look-ahead, `\s+(?!\S)`, that
//! regex-automata does not have; it is built in here instead. Every alternative before it is
//! one pattern; a second pattern, `\s+`, takes a run of white space (one without a line break:
//! a run with one is taken by `\s*[\r\n]`), and such a run followed by more text gives back
//! its last character, which then starts the next piece (` word`, ` 123`, or a one-character
//! run). That is what `\s+(?!\S)|\s` (cl100k) and `\s+(?!\S)|\s+` (o200k) match.
//! Where the text is ASCII a piece is found by hand (`ascii.rs`), the regex only where a byte
//! that is not ASCII decides.

use regex_automata::meta::{Cache, Regex};
use regex_automata::{Anchored, Input};

use super::ascii::{piece_end, Pattern};

/// cl100k_base's pattern before `\s+(?!\S)|\s` (tiktoken 0.14; its possessive quantifiers
/// match what these greedy ones match, since nothing after them could take a character back).
const CL100K: &str = concat!(
    r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s+$|\s*[\r\n]",
);

/// o200k_base's pattern before `\s+(?!\S)|\s+`.
const O200K: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+",
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*",
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+",
);

/// Texts from this many bytes are split with a search cache of their own.
const OWN_CACHE_FROM_BYTES: usize = 64 * 1024;

/// The second pattern: a run of white space.
const SPACES: &str = r"\s+";

/// A compiled pre-tokeniser.
pub(crate) struct Pretokenizer {
    regex: Regex,
    pattern: Pattern,
}

impl Pretokenizer {
    pub(crate) fn cl100k() -> Pretokenizer {
        Pretokenizer::new(CL100K, Pattern::Cl100k)
    }

    pub(crate) fn o200k() -> Pretokenizer {
        Pretokenizer::new(O200K, Pattern::O200k)
    }

    fn new(regex: &str, pattern: Pattern) -> Pretokenizer {
        let regex = Regex::new_many(&[regex, SPACES]).expect("the patterns are valid");
        Pretokenizer { regex, pattern }
    }

    /// The pieces of `text`, in order; they cover it.
    pub(crate) fn pieces<'t>(&'t self, text: &'t str) -> Pieces<'t> {
        self.split(text, Some(self.pattern))
    }

    /// The pieces as the regexes alone find them (the definition `ascii.rs` is checked against).
    #[cfg(test)]
    fn regex_pieces<'t>(&'t self, text: &'t str) -> Pieces<'t> {
        self.split(text, None)
    }

    fn split<'t>(&'t self, text: &'t str, by_hand: Option<Pattern>) -> Pieces<'t> {
        Pieces {
            by_hand,
            regex: &self.regex,
            // a large text's iterator has its own search cache: the regex's shared pool costs
            // a lock per piece on every thread but the first (8% of a count on two threads);
            // a small text takes the pool's, since a cache of its own costs microseconds
            cache: (text.len() >= OWN_CACHE_FROM_BYTES).then(|| self.regex.create_cache()),
            text,
            at: 0,
        }
    }
}

/// Iterator over the pieces of a text.
pub(crate) struct Pieces<'t> {
    /// The pattern to find ASCII pieces of by hand (`None`: the regex finds every piece).
    by_hand: Option<Pattern>,
    regex: &'t Regex,
    cache: Option<Cache>,
    text: &'t str,
    at: usize,
}

impl<'t> Iterator for Pieces<'t> {
    type Item = &'t str;

    fn next(&mut self) -> Option<&'t str> {
        let start = self.at;
        if start >= self.text.len() {
            return None;
        }
        if let Some(end) = self
            .by_hand
            .and_then(|p| piece_end(p, self.text.as_bytes(), start))
        {
            self.at = end;
            return Some(&self.text[start..end]);
        }
        let input = Input::new(self.text).range(start..).anchored(Anchored::Yes);
        let found = match &mut self.cache {
            Some(cache) => self.regex.search_with(cache, &input),
            None => self.regex.search(&input),
        };
        let mut end = found.map_or_else(|| next_char_end(self.text, start), |m| m.end());
        if found.is_some_and(|m| m.pattern().as_usize() == 1) && end < self.text.len() {
            // `\s+(?!\S)`: a run followed by text gives back its last character
            let last = self.text[start..end]
                .chars()
                .next_back()
                .map_or(0, char::len_utf8);
            if end - last > start {
                end -= last;
            }
        }
        self.at = end;
        Some(&self.text[start..end])
    }
}

/// Every character matches one of the alternatives; this keeps the iterator total regardless.
fn next_char_end(text: &str, start: usize) -> usize {
    start + text[start..].chars().next().map_or(1, char::len_utf8)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(p: &Pretokenizer, text: &str) -> Vec<String> {
        p.pieces(text).map(str::to_string).collect()
    }

    fn both(text: &str) {
        static BOTH: std::sync::LazyLock<[Pretokenizer; 2]> =
            std::sync::LazyLock::new(|| [Pretokenizer::cl100k(), Pretokenizer::o200k()]);
        for p in BOTH.iter() {
            let by_hand: Vec<&str> = p.pieces(text).collect();
            let by_regex: Vec<&str> = p.regex_pieces(text).collect();
            assert_eq!(by_hand, by_regex, "{:?} {text:?}", p.pattern);
        }
    }

    /// Every string of up to four characters of an alphabet with one of each kind the patterns
    /// tell apart, ASCII or not (the contractions' letters in both cases, a letter, a mark and
    /// a digit that are not ASCII, white space that is not ASCII, the long s that `(?i)` folds
    /// onto `s`).
    #[test]
    fn by_hand_equals_the_regex_on_every_short_string() {
        let alphabet = [
            'a', 'B', 's', 'L', 'e', 'm', 'T', 'd', 'V', 'r', '1', ' ', '\t', '\n', '\r', '\'',
            '.', '/', 'é', '\u{a0}', '\u{17f}', '\u{301}', '٣',
        ];
        let mut text = String::new();
        fn all(alphabet: &[char], text: &mut String, left: usize) {
            both(text);
            if left == 0 {
                return;
            }
            for c in alphabet {
                text.push(*c);
                all(alphabet, text, left - 1);
                text.pop();
            }
        }
        all(&alphabet, &mut text, 4);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        /// Longer text of the same kinds, runs of white space and indentation included.
        #[test]
        fn by_hand_equals_the_regex(
            text in "([a-zA-Z]{1,6}|[0-9]{1,5}|[ \t]{1,5}|\r?\n|\n {2,8}|'(s|S|t|T|m|M|d|D|ll|lL|Ve|vE|re|RE|x)?\
                     |[.,;:!?/()<>=\\-]{1,3}|é|ß|東京|\u{a0}|\u{17f}|\u{301}|٣|😀|\x0b|\x1c|\x00){0,40}",
        ) {
            both(&text);
        }
    }

    #[test]
    fn splits_like_tiktoken() {
        let cl = Pretokenizer::cl100k();
        assert_eq!(split(&cl, "hello world"), ["hello", " world"]);
        assert_eq!(split(&cl, "a   b"), ["a", "  ", " b"]);
        assert_eq!(split(&cl, "a \n  b"), ["a", " \n", " ", " b"]);
        assert_eq!(
            split(&cl, "x\n  "),
            ["x", "\n  "],
            "`\\s+$` before `\\s*[\\r\\n]`"
        );
        assert_eq!(split(&cl, "don't 12345"), ["don", "'t", " ", "123", "45"]);
        assert_eq!(split(&cl, " \t"), [" \t"]);
        let o2 = Pretokenizer::o200k();
        assert_eq!(split(&o2, "x\n  "), ["x", "\n", "  "]);
        assert_eq!(split(&o2, "HelloWorld don't"), ["Hello", "World", " don't"]);
        assert_eq!(split(&o2, "a/\n/b"), ["a", "/\n/", "b"]);
    }
}
