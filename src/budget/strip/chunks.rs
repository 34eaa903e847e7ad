//! Where a text can be cut into pieces that are stripped and counted one at a time, with the
//! same result as stripping and counting it whole. A cut must be a safe token cut (see
//! [`is_safe_cut`]) and no strip rule may match across it. Only three rules can: a run of blank
//! lines, a Markdown data-URI image (white space around its URI, a space in its alt text) and an
//! HTML `<img>` tag with a data URI (any bytes up to its `>`). So a piece ends:
//! - at the start of a line (before its indentation) when the white space before it does not
//!   follow a `(` and the next line does not open with `)` (a Markdown image's URI may have
//!   white space around it), and an indented line does not follow white space (a blank run
//!   takes the next line's indentation with it); or
//! - before a space between two ASCII letters, outside a Markdown image's alt text (a long line
//!   with no line break: minified HTML, one enormous paragraph);
//!
//! and never inside an `<img` tag. Indented trees (accessibility snapshots, YAML, pretty HTML,
//! code in a diff) have such places on nearly every line.

use crate::ground::tokens::cuts::is_safe_cut;

/// What is open at a byte: constructs that a strip rule can match across white space in.
#[derive(Debug, Clone, Copy, Default)]
struct Open {
    /// Inside `<img ...`, before its closing `>`.
    img_tag: bool,
    /// Inside a quoted `data:` URI in such a tag (from a quote followed by `data:` to the next
    /// quote), where the rule lets a `>` through.
    data: bool,
    /// Inside the alt text of `![...`, before `]` or the end of the line.
    alt: bool,
}

impl Open {
    fn any(&self) -> bool {
        self.img_tag || self.alt
    }

    /// The state after byte `i` of `bytes`.
    fn step(&mut self, bytes: &[u8], i: usize) {
        let b = bytes[i];
        if self.img_tag {
            match b {
                b'"' | b'\'' => self.data = bytes[i + 1..].starts_with(b"data:"),
                b'>' if !self.data => self.img_tag = false,
                _ => {}
            }
        } else if b == b'<' && opens_img(&bytes[i + 1..]) {
            (self.img_tag, self.data) = (true, false);
        }
        if self.alt {
            self.alt = !matches!(b, b']' | b'\n');
        } else if b == b'[' && i > 0 && bytes[i - 1] == b'!' {
            self.alt = true;
        }
    }
}

/// `img` (any case) followed by a character that ends a word (the rule's `<img\b`).
fn opens_img(rest: &[u8]) -> bool {
    rest.len() >= 3
        && rest[..3].eq_ignore_ascii_case(b"img")
        && !rest
            .get(3)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

/// The first piece boundary at or after `from` in `text`, scanning from `start` (itself a
/// boundary, or 0), or the end of the text. Gives up (the end) when none comes within
/// `max_scan` bytes of `from`.
pub fn chunk_end(text: &str, start: usize, from: usize, max_scan: usize) -> usize {
    let bytes = text.as_bytes();
    let from = from.max(start + 1);
    let stop = text.len().min(from.saturating_add(max_scan));
    let mut open = Open::default();
    for i in start..stop {
        open.step(bytes, i);
        let p = i + 1;
        if p >= from && p < bytes.len() && !open.any() && is_boundary(text, p) {
            return p;
        }
    }
    text.len()
}

/// Whether `p` ends a piece, given that nothing is open there.
fn is_boundary(text: &str, p: usize) -> bool {
    let bytes = text.as_bytes();
    let line_start = bytes[p - 1] == b'\n';
    let between_words = bytes[p] == b' ' && bytes[p - 1].is_ascii_alphabetic();
    if !(line_start || between_words) || !is_safe_cut(text, p) {
        return false;
    }
    if between_words {
        return true;
    }
    // white space before the line break: a blank run may end here, and then it takes the
    // next line's indentation with it
    let head = &text[..p - 1];
    let head = head.strip_suffix('\r').unwrap_or(head);
    let mut from = head.len().saturating_sub(256);
    while !head.is_char_boundary(from) {
        from += 1;
    }
    let (tail, kept) = (&head[from..], head[from..].trim_end());
    if kept.len() < tail.len() && matches!(bytes[p], b' ' | b'\t') {
        return false;
    }
    // a Markdown image's `(` before the white space, or its `)` after it (and no look further
    // back than 256 bytes)
    if kept.is_empty() || kept.ends_with('(') {
        return false;
    }
    let opens_next = text[p..].chars().find(|c| !c.is_whitespace());
    opens_next != Some(')')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::parts::prefix::PrefixCounter;
    use crate::budget::policy::ToolPolicy;
    use crate::budget::strip::strip;
    use crate::ground::tokens::Tokenizer;
    use proptest::prelude::*;

    fn pieces(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        let mut pos = 0;
        while pos < text.len() {
            let end = chunk_end(text, pos, pos + 1, usize::MAX);
            out.push(&text[pos..end]);
            pos = end;
        }
        out
    }

    #[test]
    fn indented_trees_and_long_lines_have_places_to_cut() {
        let tree: String = (0..50)
            .map(|i| format!("    - link \"item {i}\" [ref=e{i}]:\n      - /url: /p/{i}\n"))
            .collect();
        assert!(pieces(&tree).len() >= 90, "{}", pieces(&tree).len());
        let line = "<div class=\"a b\">word word word</div> ".repeat(100);
        assert!(pieces(&line).len() >= 100);
        // nothing inside an <img> tag or a Markdown image's alt text
        let img = "<img alt=\"a b c\"\n  src=\"data:image/png;base64,QUJD\">\n![a b c](x)\nend";
        let cuts: Vec<usize> = pieces(img)
            .iter()
            .scan(0, |at, p| {
                *at += p.len();
                Some(*at)
            })
            .collect();
        let tag_end = img.find('>').unwrap();
        let alt_end = img.find("](").unwrap();
        assert!(
            cuts.iter()
                .all(|&c| c > tag_end && (c <= img.find("![").unwrap() || c > alt_end)),
            "{cuts:?}"
        );
    }

    fn noisy_text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("\n".to_string()),
            Just("\r\n".to_string()),
            Just("\n\n\n".to_string()),
            Just("  \n \t\n".to_string()),
            Just("    ".to_string()),
            Just("\t".to_string()),
            Just(" ".to_string()),
            Just("\u{a0}".to_string()),
            Just("(".to_string()),
            Just(")".to_string()),
            Just("word".to_string()),
            Just("Mot déjà".to_string()),
            Just("<img".to_string()),
            Just("<IMG ".to_string()),
            Just(" src=\"".to_string()),
            Just("'".to_string()),
            Just("\"".to_string()),
            Just(">".to_string()),
            Just("![alt text".to_string()),
            Just("](".to_string()),
            Just("data:image/png;base64,".to_string()),
            Just("QUJDRA==".repeat(20)),
            Just("https://example.org/a/b?utm_source=x&id=".to_string()),
            Just("x".repeat(120)),
            Just("- item [ref=e1]:".to_string()),
        ];
        proptest::collection::vec(piece, 0..400).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]
        #[test]
        fn stripping_piece_by_piece_equals_stripping_whole(text in noisy_text()) {
            let policy = ToolPolicy::default();
            let stripped: Vec<String> = pieces(&text).iter().map(|p| strip(p, &policy).0).collect();
            let whole = strip(&text, &policy).0;
            prop_assert_eq!(stripped.concat(), whole.as_str());
            // and the pieces, stripped, count to the whole's tokens
            for tk in [Tokenizer::Cl100k, Tokenizer::O200k] {
                let c = PrefixCounter::new(tk);
                let sum: usize = stripped.iter().map(|p| c.count(p)).sum();
                prop_assert_eq!(sum, c.count(&whole), "{}", tk.name());
            }
        }
    }
}
