//! Where a preview may end: a line end, a whole JSON element, a break between words, never
//! inside a number, a string escape or a UTF-8 sequence (issue 37, 3.1).

use super::floor_char_boundary;

/// Where a preview of a text may end: the kind of boundary a cut landed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Boundary {
    /// The end of the text: nothing was cut.
    End,
    /// After a line break.
    Line,
    /// After a complete element of a JSON array or object (a `,`, `}` or `]` outside strings).
    JsonElement,
    /// Before white space: between two words.
    Word,
    /// No boundary in reach (a text without white space, such as base64): at a character
    /// boundary, inside a word.
    Character,
}

impl Boundary {
    /// How a note says where a cut stopped.
    pub fn words(self) -> &'static str {
        match self {
            Boundary::End => "at the end",
            Boundary::Line => "at a line end",
            Boundary::JsonElement => "after a whole JSON element",
            Boundary::Word => "between words",
            Boundary::Character => "inside a word (no break in reach)",
        }
    }
}

/// The longest prefix of `text` within its first `len` bytes that ends on a boundary, and which
/// kind: a line end within the last tenth of `len`, a whole JSON element within its last
/// quarter, a break between words within its last tenth, else the latest boundary of any kind, else a character
/// boundary (a text without breaks). A cut never lands inside a number, a string escape or a
/// UTF-8 sequence unless the text has no break at all before `len`.
pub fn boundary_before(text: &str, len: usize) -> (usize, Boundary) {
    if len >= text.len() {
        return (text.len(), Boundary::End);
    }
    let len = floor_char_boundary(text, len);
    let head = &text.as_bytes()[..len];
    let near = len - len / 10;
    // a whole JSON element is worth more than a word: it may be further back
    let near_json = len - len / 4;
    let line = memchr::memrchr(b'\n', head).map(|i| i + 1);
    let json = looks_like_json(text)
        .then(|| last_json_element_end(head))
        .flatten();
    // before white space (the space itself is left out); a break right at `len` counts; a
    // `\` just before the break would read as an escape of what follows: it is left out too
    let word = if text.as_bytes()[len].is_ascii_whitespace() {
        Some(len)
    } else {
        head.iter()
            .rposition(|b| b.is_ascii_whitespace())
            .filter(|&i| i > 0)
    }
    .map(|at| before_a_lone_backslash(head, at));
    let candidates = [
        (line, Boundary::Line, near),
        (json, Boundary::JsonElement, near_json),
        (word, Boundary::Word, near),
    ];
    for (at, kind, from) in candidates {
        if let Some(at) = at.filter(|&at| at >= from && at > 0) {
            return (at, kind);
        }
    }
    candidates
        .into_iter()
        .filter_map(|(at, kind, _)| at.filter(|&at| at > 0).map(|at| (at, kind)))
        .max_by_key(|(at, _)| *at)
        .unwrap_or((outside_a_value(text, len), Boundary::Character))
}

/// `len`, or before the number or the string escape that `len` falls inside (a text with no
/// break: a number is not cut even there).
fn outside_a_value(text: &str, len: usize) -> usize {
    let b = text.as_bytes();
    let numeric = |c: u8| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-');
    let mut at = len;
    if b.get(at).is_some_and(|&c| numeric(c)) {
        let start = b[..at]
            .iter()
            .rposition(|&c| !numeric(c))
            .map_or(0, |i| i + 1);
        // a number, not the digits of a word (`abc123`)
        if start < at && (start == 0 || !b[start - 1].is_ascii_alphanumeric()) {
            at = start;
        }
    }
    // an escape: `\` alone, or `\u` with fewer than four hex digits after it
    let slash = b[..at]
        .iter()
        .rposition(|&c| c != b'\\')
        .map_or(0, |i| i + 1);
    if (at - slash) % 2 == 1 {
        return at - 1;
    }
    if let Some(u) = b[at.saturating_sub(5)..at]
        .windows(2)
        .rposition(|w| w == b"\\u")
    {
        let u = at.saturating_sub(5) + u;
        if at - u < 6 && b[..u].iter().rev().take_while(|&&c| c == b'\\').count() % 2 == 0 {
            return u;
        }
    }
    at
}

/// `at`, or one byte back where `head[..at]` ends in an odd run of `\\`.
fn before_a_lone_backslash(head: &[u8], at: usize) -> usize {
    let run = head[..at].iter().rev().take_while(|&&c| c == b'\\').count();
    at - run % 2
}

/// Whether a text is a JSON array or object (its first non-blank character).
fn looks_like_json(text: &str) -> bool {
    matches!(text.trim_start().as_bytes().first(), Some(b'{' | b'['))
}

/// The end of the last whole element of a JSON array or object in `head` (just after its `,`,
/// or after a closing `}` or `]`), outside strings.
fn last_json_element_end(head: &[u8]) -> Option<usize> {
    json_structure(head)
        .filter(|(_, b)| matches!(b, b',' | b'}' | b']'))
        .last()
        .map(|(i, _)| i + 1)
}

/// The bytes of a JSON text outside its strings, with their offsets (the quotes that open
/// strings left out too): its structure, whatever the strings hold.
pub fn json_structure(json: &[u8]) -> impl Iterator<Item = (usize, u8)> + '_ {
    let (mut in_string, mut escaped) = (false, false);
    json.iter().enumerate().filter_map(move |(i, &b)| {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            return None;
        }
        if b == b'"' {
            in_string = true;
            return None;
        }
        Some((i, b))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 37, 3.1: a one-line JSON text is never cut inside a number (the preview once read
    /// `"amount":900719925` of `9007199254740993.72`), an escape or a character.
    #[test]
    fn a_cut_ends_on_a_boundary_never_inside_a_value() {
        let row = r#"{"id":7,"amount":9007199254740993.72,"note":"a \"quoted\" word"}"#;
        let text = format!("[{}]", vec![row; 50].join(","));
        for len in 240..text.len() {
            let (at, kind) = boundary_before(&text, len);
            assert!(at <= len, "{len}");
            let head = &text[..at];
            assert_eq!(kind, Boundary::JsonElement, "{len}: {head}");
            assert!(head.ends_with(',') || head.ends_with('}'), "{len}: {head}");
            // no number cut short, no string left open
            let next = text[at..].chars().next();
            let in_number = head.ends_with(|c: char| c.is_ascii_digit())
                && next.is_some_and(|c| c.is_ascii_digit() || c == '.');
            assert!(!in_number, "{len}: {head}");
            let quotes = head.matches('"').count() - head.matches("\\\"").count();
            assert_eq!(quotes % 2, 0, "{len}: {head}");
        }
        // the last tenth: a line end first, else a word break
        let prose = "one two three\nfour five six seven eight nine ten eleven";
        assert_eq!(boundary_before(prose, 14), (14, Boundary::Line));
        let (at, kind) = boundary_before(prose, 42);
        assert_eq!(
            (&prose[..at], kind),
            ("one two three\nfour five six seven eight", Boundary::Word)
        );
        // a break far back is still better than a cut inside a word
        let long = format!("word {}", "x".repeat(100));
        assert_eq!(boundary_before(&long, 60), (4, Boundary::Word));
        // no break at all: a character boundary, never inside a UTF-8 sequence, a number or
        // an escape
        assert_eq!(boundary_before("[12345678901234567890", 8).0, 1);
        assert_eq!(boundary_before("abc12345678901234567890", 8).0, 8);
        assert_eq!(boundary_before(r#"["abc\u00e9def"#, 9).0, 5);
        assert_eq!(boundary_before(r#"["abc\\def"#, 6).0, 5);
        // a break after a lone backslash: the backslash is left out, an escaped one kept
        assert_eq!(boundary_before("one two\\ three four", 12).0, 7);
        assert_eq!(boundary_before("one two\\\\ three four", 13).0, 9);
        let wide = "日本語".repeat(20);
        let (at, kind) = boundary_before(&wide, 10);
        assert_eq!((at, kind), (9, Boundary::Character));
        assert_eq!(boundary_before("abc", 3), (3, Boundary::End));
    }
}
