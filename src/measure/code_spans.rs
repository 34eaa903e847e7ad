//! Where a tool description holds code or an example rather than prose: fenced blocks, inline
//! code, JSON and XML examples. A suggested cut never lands inside one (a `.` before a space in
//! `{"path": "a. b"}` or in `// ...` is not the end of a sentence).

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

/// An XML or HTML tag: `<name ...>`, `</name>` or `<name/>` (a name starts with a letter, so
/// `a < b` is no tag).
static TAG: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"<(/?)([A-Za-z][\w:.-]*)[^<>]*?(/?)>").expect("static regex"));

/// The byte ranges of `text` that are code or examples, sorted and merged.
pub fn code_spans(text: &str) -> Vec<Range<usize>> {
    let mut spans = fenced(text);
    spans.extend(inline_code(text, &spans.clone()));
    spans.extend(brackets(text));
    spans.extend(tags(text));
    merged(spans)
}

/// Whether byte `at` falls inside one of `spans` (as [`code_spans`] gives them), its ends
/// excluded: a sentence may end right after an example closes.
pub fn inside(spans: &[Range<usize>], at: usize) -> bool {
    let i = spans.partition_point(|s| s.end <= at);
    spans.get(i).is_some_and(|s| s.start < at && at < s.end)
}

/// Fenced blocks: from a line opening with ``` or ~~~ to the line that closes it (or the end).
fn fenced(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut open: Option<(usize, &str)> = None;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let fence = ["```", "~~~"].into_iter().find(|f| trimmed.starts_with(f));
        match (open, fence) {
            (None, Some(f)) => open = Some((at, f)),
            (Some((start, f)), Some(g)) if f == g => {
                out.push(start..at + line.len());
                open = None;
            }
            _ => {}
        }
        at += line.len();
    }
    if let Some((start, _)) = open {
        out.push(start..text.len());
    }
    out
}

/// `inline code`: a pair of backticks on one line, outside fenced blocks.
fn inline_code(text: &str, fences: &[Range<usize>]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let ticks: Vec<usize> = line
            .match_indices('`')
            .map(|(i, _)| at + i)
            .filter(|&i| !inside(fences, i) && !fences.iter().any(|f| f.start == i))
            .collect();
        out.extend(ticks.chunks_exact(2).map(|p| p[0]..p[1] + 1));
        at += line.len();
    }
    out
}

/// Balanced `{...}` and `[...]`, with JSON strings inside them read as strings (a bracket in
/// `"a]"` does not close anything). An opener that never closes marks nothing.
fn brackets(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut stack: Vec<(u8, usize)> = Vec::new();
    let (mut in_string, mut escaped) = (false, false);
    for (i, b) in text.bytes().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                b'\n' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'{' | b'[' => stack.push((b, i)),
            b'}' | b']' => {
                let want = if b == b'}' { b'{' } else { b'[' };
                if let Some(depth) = stack.iter().rposition(|(o, _)| *o == want) {
                    let (_, start) = stack[depth];
                    stack.truncate(depth);
                    out.push(start..i + 1);
                }
            }
            b'"' if !stack.is_empty() => in_string = true,
            _ => {}
        }
    }
    out
}

/// XML or HTML: from an opening tag to the tag that closes it; a tag alone when none does.
fn tags(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut open: Vec<(&str, usize, usize)> = Vec::new();
    for c in TAG.captures_iter(text) {
        let whole = c.get(0).expect("a match");
        let name = c.get(2).expect("a tag has a name").as_str();
        if !c[1].is_empty() {
            if let Some(depth) = open.iter().rposition(|(n, ..)| *n == name) {
                out.push(open[depth].1..whole.end());
                open.truncate(depth);
                continue;
            }
        } else if c[3].is_empty() {
            open.push((name, whole.start(), whole.end()));
            continue;
        }
        out.push(whole.range());
    }
    out.extend(open.into_iter().map(|(_, start, end)| start..end));
    out
}

fn merged(mut spans: Vec<Range<usize>>) -> Vec<Range<usize>> {
    spans.sort_by_key(|s| (s.start, s.end));
    let mut out: Vec<Range<usize>> = Vec::with_capacity(spans.len());
    for s in spans {
        match out.last_mut() {
            Some(last) if s.start < last.end => last.end = last.end.max(s.end),
            _ => out.push(s),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marked(text: &str) -> Vec<&str> {
        code_spans(text).into_iter().map(|r| &text[r]).collect()
    }

    #[test]
    fn code_and_examples_are_found() {
        let d = "Call it. Example:\n```json\n{\"a\": 1}\n```\nUse `x. y` or {\"path\": \"a. b\", \"more\": [1, 2, ...]} and <example>Do this. Then</example>. Done.";
        assert_eq!(
            marked(d),
            [
                "```json\n{\"a\": 1}\n```\n",
                "`x. y`",
                "{\"path\": \"a. b\", \"more\": [1, 2, ...]}",
                "<example>Do this. Then</example>",
            ]
        );
        let spans = code_spans(d);
        let after_example = d.find("</example>.").unwrap() + "</example>".len();
        assert!(!inside(&spans, after_example));
        assert!(inside(&spans, d.find("a. b").unwrap() + 1));
    }

    #[test]
    fn prose_marks_nothing_and_strays_do_not_run_on() {
        assert!(code_spans("A sentence. Another one! a < b > c.").is_empty());
        // an opener that never closes, a lone backtick, a tag that never closes
        assert_eq!(
            marked("Give {the name. Or ` this. See <revision>:<path> and [1]."),
            ["<revision>", "<path>", "[1]"]
        );
        // a closing bracket inside a string closes nothing
        assert_eq!(marked(r#"x {"a": "b}. c"} y"#), [r#"{"a": "b}. c"}"#]);
    }
}
