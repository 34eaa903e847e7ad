//! Text from servers, clients and files made safe to show: control characters (ESC, BEL, CR,
//! the rest of C0, DEL and C1) and format characters (Cf: bidi controls, zero-width characters)
//! become visible escapes, so a tool name cannot clear a terminal,
//! write the clipboard with OSC 52 or break a table row. One helper for every output. And the
//! measures every limit on text shares: lines, characters, character boundaries.

mod boundary;
pub use boundary::{boundary_before, json_structure, Boundary};

use std::borrow::Cow;

/// Whether `c` is a format character (Unicode general category Cf): bidi controls (U+202A-E,
/// U+2066-9, U+061C), zero-width characters (U+200B-F), U+FEFF, tags. Invisible, and able to
/// reorder what a terminal or a page shows, so every output escapes them.
pub fn is_format(c: char) -> bool {
    !c.is_ascii()
        && unicode_general_category::get_general_category(c)
            == unicode_general_category::GeneralCategory::Format
}

/// A control or format character, which no output shows raw.
pub fn hidden(c: char) -> bool {
    c.is_control() || is_format(c)
}

fn escape(s: &str, keep_newlines: bool) -> Cow<'_, str> {
    let kept = |c: char| keep_newlines && (c == '\n' || c == '\t');
    if !s.chars().any(|c| hidden(c) && !kept(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            c if kept(c) => out.push(c),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() && (c as u32) < 0x100 => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if hidden(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// The first `max_chars` characters of `s` as one safe line, with `...` when it was cut (how a
/// message quotes a server's output, a cursor or a body).
pub fn preview(s: &str, max_chars: usize) -> String {
    let cut = match s.char_indices().nth(max_chars) {
        Some((at, _)) => &s[..at],
        None => s,
    };
    let more = if cut.len() < s.len() { "..." } else { "" };
    format!("{}{more}", one_line(cut))
}

/// The last `max_chars` characters of `s` as one safe line, with `...` before them when the
/// start was cut. Text from a server is redacted whole before it is cut
/// ([`crate::config::Redactor::tail`]).
pub fn tail(s: &str, max_chars: usize) -> String {
    let skip = char_count(s).saturating_sub(max_chars);
    match s.char_indices().nth(skip) {
        Some((at, _)) if skip > 0 => format!("...{}", one_line(&s[at..])),
        _ => one_line(s).into_owned(),
    }
}

/// One line for a terminal or a table cell: every control character escaped, newlines too.
pub fn one_line(s: &str) -> Cow<'_, str> {
    escape(s, false)
}

/// A block of text for a terminal: control characters escaped, newlines and tabs kept.
pub fn lines(s: &str) -> Cow<'_, str> {
    escape(s, true)
}

/// One line for Markdown: a line break becomes a space, other control and format characters
/// visible escapes.
fn markdown_line(s: &str) -> String {
    one_line(&s.replace("\r\n", " ").replace('\n', " ")).into_owned()
}

/// Markdown text (a table cell, words in a paragraph) that renders as exactly the text it is:
/// one line, and every character CommonMark or GitHub reads as markup backslash-escaped (code
/// spans, emphasis, links and images, raw HTML and entities, strikethrough, math, table pipes).
pub fn markdown_cell(s: &str) -> String {
    let line = markdown_line(s);
    let mut out = String::with_capacity(line.len() + 8);
    for c in line.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '&' | '|' | '~' | '$' | '!' | '#'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A Markdown code span of `s` that nothing ends early: fenced by one backtick more than its
/// longest run of backticks, padded when it starts or ends with one. In a table (`in_table`)
/// its `|` are escaped, as GitHub's tables need even inside code.
pub fn markdown_code(s: &str, in_table: bool) -> String {
    let mut text = markdown_line(s);
    if in_table {
        text = text.replace('|', "\\|");
    }
    if text.is_empty() {
        return String::new();
    }
    let (mut run, mut longest) = (0, 0);
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let edge = |c: Option<char>| matches!(c, Some('`' | ' '));
    let pad = if edge(text.chars().next()) || edge(text.chars().last()) {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// A CSV cell of text from a server, a client or a file, safe to open in a spreadsheet: control
/// and format characters escaped (line breaks and tabs kept: the CSV writer quotes them), and a
/// `'` before a cell that starts with `=`, `+`, `-`, `@` or a tab, which a spreadsheet would
/// run as a formula (OWASP's defence). A plain decimal number (`-12`, `0.25`) is left as it is,
/// so numeric columns stay numbers.
pub fn csv_cell(s: &str) -> Cow<'_, str> {
    let kept = lines(s);
    let formula = kept.starts_with(['=', '+', '-', '@', '\t']);
    if !formula || is_decimal(&kept) {
        return kept;
    }
    Cow::Owned(format!("'{kept}"))
}

/// `-12`, `3`, `0.25`: digits with an optional leading `-` and an optional fraction.
fn is_decimal(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    let (int, frac) = digits.split_once('.').unwrap_or((digits, "0"));
    !int.is_empty()
        && !frac.is_empty()
        && int.bytes().all(|b| b.is_ascii_digit())
        && frac.bytes().all(|b| b.is_ascii_digit())
}

/// `s` cut to its first `max` characters for a table cell, saying how many more there are and
/// where they are (`…(498,312 more characters in audit.json)`); whole when it fits. A display
/// cut of report text: the file named keeps it whole.
pub fn cell_preview<'a>(s: &'a str, max: usize, whole_in: &str) -> Cow<'a, str> {
    let Some((at, _)) = s.char_indices().nth(max) else {
        return Cow::Borrowed(s);
    };
    let more = char_count(&s[at..]);
    Cow::Owned(format!(
        "{}…({} more characters in {whole_in})",
        &s[..at],
        crate::ground::units::thousands(more)
    ))
}

/// An error's causes, below its own message, each once (a cause that repeats one already said is
/// left out): the lines a one-line error joins, without the top line (reqwest's names the URL,
/// which may carry a token).
pub fn error_causes(e: &dyn std::error::Error) -> Vec<String> {
    let mut causes: Vec<String> = Vec::new();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !causes.iter().any(|c| c.contains(&text)) {
            causes.push(text);
        }
        source = s.source();
    }
    causes
}

/// `s` without a leading UTF-8 byte order mark (Windows editors save config files with one).
pub fn strip_bom(s: &str) -> &str {
    s.strip_prefix('\u{feff}').unwrap_or(s)
}

/// `s.lines().count()`, by a byte scan.
pub fn line_count(s: &str) -> usize {
    let breaks = memchr::memchr_iter(b'\n', s.as_bytes()).count();
    breaks + usize::from(!s.is_empty() && !s.ends_with('\n'))
}

/// `s.chars().count()`: the bytes that do not continue a UTF-8 sequence.
pub fn char_count(s: &str) -> usize {
    s.bytes().filter(|b| (*b as i8) >= -0x40).count()
}

/// The largest character boundary of `s` at or before `i` (`i` past the end: the end).
pub fn floor_char_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest character boundary of `s` at or after `i` (`i` past the end: the end).
pub fn ceil_char_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// `text` cut to at most `max` characters, at the end of a sentence (`.`, `!` or `?` before a
/// space or a line break) when one is in the last third, else at a word, with `…` added.
pub fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max.saturating_sub(1)).collect();
    // a sentence ends at `.`, `!` or `?` before a space or a line break
    let sentence = cut
        .match_indices(['.', '!', '?'])
        .map(|(i, _)| i)
        .rfind(|&i| cut[i + 1..].starts_with([' ', '\n']))
        .filter(|&i| i * 3 >= cut.len() * 2);
    match sentence {
        Some(i) => cut[..=i].to_string(),
        None => {
            let word = cut
                .rfind(' ')
                .filter(|&i| i * 3 >= cut.len() * 2)
                .unwrap_or(cut.len());
            format!("{}…", cut[..word].trim_end())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_are_cut_at_a_sentence_or_a_word() {
        let d = "Search code across repositories. Returns matching files with line numbers and context.";
        assert_eq!(shorten(d, 200), d);
        assert_eq!(shorten(d, 40), "Search code across repositories.");
        let cut = shorten(d, 60);
        assert!(cut.ends_with('…') && cut.chars().count() <= 60, "{cut}");
        assert!(!cut.contains("  "));
        assert_eq!(shorten("日本語のテキストです", 5), "日本語の…");
    }

    #[test]
    fn a_preview_is_cut_by_characters_and_escaped() {
        assert_eq!(preview("p\u{9b}2", 60), "p\\x9b2", "not cut: no dots");
        assert_eq!(preview("abc\x1b[2J", 4), "abc\\x1b...");
        assert_eq!(preview("日本語", 2), "日本...");
    }

    #[test]
    fn ansi_and_osc_sequences_are_shown_not_run() {
        let name = "evil\x1b[2J\x1b]52;c;aGk=\x07\u{9b}31m";
        assert_eq!(one_line(name), "evil\\x1b[2J\\x1b]52;c;aGk=\\x07\\x9b31m");
        assert_eq!(one_line("plain ünïcode"), "plain ünïcode");
        assert!(matches!(one_line("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn format_characters_are_shown_not_applied() {
        let name = "abc\u{202e}fed\u{2066}\u{200b}\u{feff}\u{61c}\u{e0041}";
        assert_eq!(
            one_line(name),
            "abc\\u{202e}fed\\u{2066}\\u{200b}\\u{feff}\\u{61c}\\u{e0041}"
        );
        assert_eq!(lines("a\n\u{202d}"), "a\n\\u{202d}");
        assert!(!is_format('a') && !is_format('é') && is_format('\u{200d}'));
    }

    #[test]
    fn newlines_are_kept_only_in_blocks() {
        assert_eq!(one_line("a\nb\r\tc"), "a\\nb\\r\\tc");
        assert_eq!(lines("a\nb\r\tc\x1b"), "a\nb\\r\tc\\x1b");
        assert_eq!(markdown_cell("a|b\r\nc\x1b"), "a\\|b c\\\\x1b");
    }

    #[test]
    fn markdown_shows_text_as_text() {
        assert_eq!(
            markdown_cell("x`<img src=x>`*a*"),
            "x\\`\\<img src=x\\>\\`\\*a\\*"
        );
        assert_eq!(markdown_code("a`b``c", false), "```a`b``c```");
        assert_eq!(markdown_code("`a|b", true), "`` `a\\|b ``");
        assert_eq!(markdown_code("", true), "");
    }

    #[test]
    fn csv_cells_cannot_be_formulas_but_numbers_stay_numbers() {
        assert_eq!(csv_cell("=HYPERLINK(\"x\")"), "'=HYPERLINK(\"x\")");
        for f in ["+1+1", "-1+1", "@SUM(A1)", "\tx", "-", "-inf"] {
            assert!(csv_cell(f).starts_with('\''), "{f}");
        }
        for n in ["-12", "-0.25", "3", "a=b", ""] {
            assert_eq!(csv_cell(n), n);
        }
        assert_eq!(csv_cell("a\x1b[2J\nb"), "a\\x1b[2J\nb");
    }

    #[test]
    fn a_cell_preview_says_how_much_more_and_where() {
        assert_eq!(cell_preview("abc", 3, "audit.json"), "abc");
        let long = "é".repeat(1_205);
        assert_eq!(
            cell_preview(&long, 3, "audit.json"),
            "ééé…(1,202 more characters in audit.json)"
        );
    }

    #[test]
    fn counts_and_boundaries_agree_with_std() {
        for t in ["", "a", "a\n", "\n\n", "héllo\r\nwörld", "x\n\ny", "😀é\n"] {
            assert_eq!(line_count(t), t.lines().count(), "{t:?}");
            assert_eq!(char_count(t), t.chars().count(), "{t:?}");
        }
        let t = "aé😀b";
        let floors: Vec<usize> = (0..=t.len() + 1)
            .map(|i| floor_char_boundary(t, i))
            .collect();
        assert_eq!(floors, [0, 1, 1, 3, 3, 3, 3, 7, 8, 8]);
        let ceils: Vec<usize> = (0..=t.len() + 1)
            .map(|i| ceil_char_boundary(t, i))
            .collect();
        assert_eq!(ceils, [0, 1, 3, 3, 7, 7, 7, 7, 8, 8]);
    }
}
