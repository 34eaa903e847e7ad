//! `mcp_budget_read`: the way back to a spilled original, a page of lines at a time within the
//! budget, or the lines matching a pattern with their numbers. Reads only files of the spill store.

mod window;

use serde::Deserialize;

use crate::budget::{SizeLimits, SpillStore};
use crate::tokens::Tokenizer;
use window::{fitting_prefix, windows, CONTEXT_BYTES};

/// The tool's name.
pub const READ_TOOL: &str = "mcp_budget_read";

/// The most a page's footer takes, in bytes (with line numbers in the millions).
const FOOTER_BYTES: usize = 300;

/// The added tool's definition (JSON, as tools/list sends it).
pub fn read_tool_definition() -> serde_json::Value {
    serde_json::json!({
        "name": READ_TOOL,
        "description": "Read more of a result that mcp-budget shortened: the full original was saved and its note gives the handle. Returns lines from start_line (1-based), as many as fit the budget, or with grep only the lines matching a regular expression, with their line numbers.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "handle": {"type": "string", "description": "The spill handle or mcp-budget://spill/ URI from the note"},
                "start_line": {"type": "integer", "minimum": 1, "description": "First line to return (default 1)"},
                "max_lines": {"type": "integer", "minimum": 1, "description": "Most lines to return (default: as many as fit)"},
                "grep": {"type": "string", "description": "Only lines matching this regular expression"},
                "start_char": {"type": "integer", "minimum": 0, "description": "Byte offset inside start_line, to continue inside a long line (the footer or a grep window says where)"}
            },
            "required": ["handle"]
        },
        "annotations": {"readOnlyHint": true}
    })
}

/// The tool's arguments.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {
    pub handle: String,
    pub start_line: Option<usize>,
    pub max_lines: Option<usize>,
    pub grep: Option<String>,
    /// Byte offset inside `start_line` (to continue a line longer than the budget).
    pub start_char: Option<usize>,
}

/// A refused or failed read (the message goes back to the model as a tool error).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ReadError {
    #[error("bad arguments for mcp_budget_read: {0}")]
    Arguments(String),
    #[error("no spilled result `{0}` (handles come from mcp-budget notes; reads are confined to the spill store)")]
    Unknown(String),
    #[error("cannot read spilled result `{handle}`: {message}")]
    Io { handle: String, message: String },
    #[error("invalid grep pattern: {0}")]
    Pattern(String),
}

/// Serve one read within `budget` tokens (counted with `tokenizer`). A line longer than the
/// budget is served in pieces: the footer then says `start_char` to continue inside it.
///
/// The spill is streamed ([`SpillStore::lines`]): lines before `start_line` are skipped without
/// being decoded, only the page is held in memory, and the rest is only counted (for the
/// footer's total), so a page of a 60 MB spill costs one pass over the file, not a copy of it.
pub fn read(
    store: &SpillStore,
    args: &ReadArgs,
    budget: usize,
    tokenizer: Tokenizer,
) -> Result<String, ReadError> {
    read_within(store, args, budget, SizeLimits::default(), tokenizer)
}

/// [`read`] with a client's bounds in bytes, characters and lines beside the token budget
/// (`proxy --client`): a page with its footer stays within them too.
pub fn read_within(
    store: &SpillStore,
    args: &ReadArgs,
    budget: usize,
    size: SizeLimits,
    tokenizer: Tokenizer,
) -> Result<String, ReadError> {
    let mut lines = store
        .lines(&args.handle)
        .ok_or_else(|| ReadError::Unknown(args.handle.clone()))?;
    let io = |e: std::io::Error| ReadError::Io {
        handle: args.handle.clone(),
        message: e.to_string(),
    };
    let start = args.start_line.unwrap_or(1).max(1);
    let skipped = lines.skip(start - 1).map_err(io)?;
    if start > 1 && lines.at_end().map_err(io)? {
        return Err(ReadError::Arguments(format!(
            "start_line {start} is past the end ({skipped} lines)"
        )));
    }
    // the footer is one line of at most a few hundred bytes
    let max_lines = args
        .max_lines
        .unwrap_or(usize::MAX)
        .min(size.lines.map_or(usize::MAX, |l| l.saturating_sub(1)))
        .max(1);
    let byte_room = match (size.bytes, size.chars) {
        (None, None) => usize::MAX,
        (b, c) => b
            .unwrap_or(usize::MAX)
            .min(c.unwrap_or(usize::MAX))
            .saturating_sub(FOOTER_BYTES),
    };
    let pattern = match &args.grep {
        Some(p) => Some(regex::Regex::new(p).map_err(|e| ReadError::Pattern(e.to_string()))?),
        None => None,
    };
    // leave room for the footer
    let room = budget.saturating_sub(60).max(50);
    let mut out = String::new();
    let (mut used, mut shown, mut last) = (0, 0, start - 1);
    // where the next page starts inside a line cut short: (line, byte offset, the line's length)
    let mut resume: Option<(usize, usize, usize)> = None;
    // where a grep continues inside a long line whose matches did not all fit: (line, byte)
    let mut grep_resume: Option<(usize, usize)> = None;
    // lines taken from the reader so far
    let mut consumed = start - 1;
    // the 0-based index of each line shown
    let mut shown_lines: Vec<usize> = Vec::new();
    while shown < max_lines {
        let Some(whole) = lines.next_line().map_err(io)? else {
            break;
        };
        let i = consumed;
        consumed += 1;
        let mut offset = 0;
        if i == start - 1 {
            offset = args.start_char.unwrap_or(0).min(whole.len());
            while !whole.is_char_boundary(offset) {
                offset -= 1;
            }
        }
        let line = &whole[offset..];
        let piece = match &pattern {
            Some(re) if !re.is_match(line) => {
                last = i + 1;
                continue;
            }
            // a matching line longer than the room left: a window around each match
            Some(re)
                if line.len() > 2 * CONTEXT_BYTES
                    && tokenizer.count(line) > room.saturating_sub(used) =>
            {
                let caps = (
                    byte_room.saturating_sub(out.len()),
                    max_lines.saturating_sub(shown),
                );
                let w = windows(
                    re,
                    &whole,
                    offset,
                    i + 1,
                    room - used.min(room),
                    caps,
                    tokenizer,
                );
                if w.text.is_empty() {
                    break;
                }
                out.push_str(&w.text);
                used += w.tokens;
                shown += 1;
                shown_lines.push(i);
                match w.resume_at {
                    Some(at) => {
                        grep_resume = Some((i + 1, at));
                        last = i;
                        break;
                    }
                    None => {
                        last = i + 1;
                        continue;
                    }
                }
            }
            Some(_) => format!("{}: {line}\n", i + 1),
            None => format!("{line}\n"),
        };
        let cost = tokenizer.count(&piece);
        if used + cost <= room && out.len() + piece.len() <= byte_room {
            out.push_str(&piece);
            used += cost;
            shown += 1;
            shown_lines.push(i);
            last = i + 1;
            continue;
        }
        if shown > 0 {
            break;
        }
        // the first line of the page is longer than the budget: as much of it as fits
        let mut cut = fitting_prefix(line, room, tokenizer);
        if cut > byte_room.saturating_sub(1) {
            cut = byte_room.saturating_sub(1);
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
        }
        let cut = cut.max(line.chars().next().map_or(0, char::len_utf8));
        out.push_str(&line[..cut]);
        out.push('\n');
        shown += 1;
        if pattern.is_none() && cut < line.len() {
            resume = Some((i + 1, offset + cut, whole.len()));
            last = i;
        } else {
            last = i + 1;
        }
        break;
    }
    let total = consumed + lines.count_rest().map_err(io)?;
    let footer = |shown: usize, last: usize| {
        match (&pattern, resume) {
        (None, Some((line, at, len))) => format!(
            "[mcp-budget: line {line} is longer than the budget: shown up to byte {at} of {len}; continue with start_line={line} start_char={at}]"
        ),
        (Some(_), _) if grep_resume.is_some() => {
            let (line, at) = grep_resume.unwrap_or_default();
            format!(
                "[mcp-budget: {shown} matching lines shown; line {line} has more matches: continue with start_line={line} start_char={at}]"
            )
        }
        (Some(_), _) if last >= total => {
            format!("[mcp-budget: {shown} matching lines shown; searched to the end, line {total}]")
        }
        (Some(_), _) => format!(
            "[mcp-budget: {shown} matching lines shown; searched lines {start}-{last} of {total}; continue with start_line={}]",
            last + 1
        ),
        (None, None) if last >= total => {
            format!("[mcp-budget: lines {start}-{last} of {total}; end of the original]")
        }
        (None, None) => format!(
            "[mcp-budget: lines {start}-{last} of {total}; continue with start_line={}]",
            last + 1
        ),
    }
    };
    let mut note = footer(shown, last);
    // tokens do not always add up across line breaks: drop whole lines until the page fits,
    // and continue from the first one dropped
    while resume.is_none()
        && grep_resume.is_none()
        && shown > 1
        && tokenizer.count(&out) + tokenizer.count(&note) > budget
    {
        let end = out[..out.len() - 1].rfind('\n').map_or(0, |i| i + 1);
        out.truncate(end);
        shown -= 1;
        last = shown_lines.pop().unwrap_or(last);
        note = footer(shown, last);
    }
    out.push_str(&note);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn store_with(text: &str) -> (tempfile::TempDir, SpillStore, String) {
        let dir = tempfile::tempdir().unwrap();
        let store = SpillStore::new(dir.path().to_path_buf(), 1 << 30);
        let h = store.save("srv", "scrape", "md", text.as_bytes()).unwrap();
        (dir, store, h.id)
    }

    #[test]
    fn pages_and_grep_windows_stay_within_a_clients_bytes_and_lines() {
        let size = SizeLimits {
            bytes: Some(10_000),
            chars: None,
            lines: Some(256),
        };
        let within = |page: &str| page.len() <= 10_000 && page.lines().count() <= 256;
        // short lines: the line bound binds before the 8,000 tokens
        let many: String = (0..5000).map(|i| format!("{i}\n")).collect();
        // one long JSON line with a match every few hundred bytes: grep windows
        let one_line = (0..3000)
            .map(|i| {
                format!(
                    "{{\"id\":{i},\"name\":\"needle {i}\",\"pad\":\"{}\"}}",
                    "x".repeat(300)
                )
            })
            .collect::<Vec<_>>()
            .join(",");
        for (text, grep) in [(many.as_str(), None), (one_line.as_str(), Some("needle"))] {
            let (_dir, store, id) = store_with(text);
            let mut a = args(&id);
            a.grep = grep.map(String::from);
            let page = read_within(&store, &a, 8000, size, Tokenizer::Cl100k).unwrap();
            assert!(
                within(&page),
                "{} bytes, {} lines",
                page.len(),
                page.lines().count()
            );
            assert!(
                page.contains("continue with"),
                "{}",
                &page[page.len() - 200..]
            );
        }
    }

    pub(super) fn args(handle: &str) -> ReadArgs {
        ReadArgs {
            handle: handle.into(),
            start_line: None,
            max_lines: None,
            grep: None,
            start_char: None,
        }
    }

    /// `start_line=N` and `start_char=K` from a footer.
    pub(super) fn continuation(footer: &str) -> (Option<usize>, Option<usize>) {
        let num = |key: &str| {
            footer.split(key).nth(1).map(|r| {
                r.chars()
                    .take_while(char::is_ascii_digit)
                    .collect::<String>()
                    .parse()
                    .unwrap()
            })
        };
        (num("start_line="), num("start_char="))
    }

    #[test]
    fn paging_to_the_end_returns_the_whole_original() {
        let mut text: String = (1..=2000)
            .map(|i| format!("line {i}: the quick brown fox jumps over the lazy dog\n"))
            .collect();
        // and a line far longer than the budget (an inline image), in the middle
        text.insert_str(
            20_000,
            &format!("data:image/png;base64,{}\n", "iVBORw0KGgoé".repeat(3000)),
        );
        let (_d, store, id) = store_with(&text);
        let mut got = String::new();
        let mut a = args(&format!("mcp-budget://spill/{id}"));
        let mut pages = 0;
        loop {
            let page = read(&store, &a, 2000, Tokenizer::Cl100k).unwrap();
            assert!(
                Tokenizer::Cl100k.count(&page) <= 2000,
                "a page fits the budget"
            );
            let (body, footer) = page.rsplit_once("[mcp-budget: ").unwrap();
            pages += 1;
            let (line, at) = continuation(footer);
            // a line cut short continues on the next page
            got.push_str(if at.is_some() {
                body.strip_suffix('\n').unwrap()
            } else {
                body
            });
            match line {
                Some(n) => (a.start_line, a.start_char) = (Some(n), at),
                None => break,
            }
        }
        assert_eq!(got, text);
        assert!(pages > 5, "{pages}");
    }

    #[test]
    fn grep_gives_numbered_lines_and_reads_are_confined() {
        let (_d, store, id) = store_with("alpha\nbeta\nalphabet\ngamma\n");
        let mut a = args(&id);
        a.grep = Some("^alpha".into());
        let page = read(&store, &a, 1000, Tokenizer::Cl100k).unwrap();
        assert!(
            page.starts_with("1: alpha\n3: alphabet\n[mcp-budget: 2 matching"),
            "{page}"
        );
        a.grep = Some("(".into());
        assert!(matches!(
            read(&store, &a, 1000, Tokenizer::Cl100k),
            Err(ReadError::Pattern(_))
        ));
        for evil in ["../etc/passwd", "srv/../../x", "/etc/passwd", "srv/nope.md"] {
            assert_eq!(
                read(&store, &args(evil), 1000, Tokenizer::Cl100k),
                Err(ReadError::Unknown(evil.into()))
            );
        }
        let mut far = args(&id);
        far.start_line = Some(99);
        assert!(matches!(
            read(&store, &far, 1000, Tokenizer::Cl100k),
            Err(ReadError::Arguments(_))
        ));
    }

    /// Every line of `text` as a page shows it (`str::lines`, each ended by `\n`).
    fn normalized(text: &str) -> String {
        text.lines().map(|l| format!("{l}\n")).collect()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

        /// Streamed pages: paging to the end gives back every line, each page fits, every
        /// footer has the right total, and grep pages give exactly the matching lines.
        #[test]
        fn streamed_pages_give_back_every_line(
            lines in proptest::collection::vec(
                proptest::prop_oneof![
                    "[a-z ]{0,40}",
                    "[a-zé日本 ]{0,12}\r",
                    "x{300,3000}",
                    proptest::strategy::Just(String::new()),
                ],
                0..120,
            ),
            trailing_newline in proptest::bool::ANY,
            budget in 150usize..1200,
        ) {
            let mut text = lines.join("\n");
            if trailing_newline && !text.is_empty() {
                text.push('\n');
            }
            let (_d, store, id) = store_with(&text);
            let total = text.lines().count();
            let mut a = args(&id);
            let mut got = String::new();
            for _ in 0..10_000 {
                let page = read(&store, &a, budget, Tokenizer::Cl100k).unwrap();
                proptest::prop_assert!(Tokenizer::Cl100k.count(&page) <= budget, "{page}");
                let (body, footer) = page.rsplit_once("[mcp-budget: ").unwrap();
                let of_total = format!(" of {total}");
                proptest::prop_assert!(
                    footer.contains(&of_total) || footer.contains("longer than the budget"),
                    "{footer}"
                );
                let (line, at) = continuation(footer);
                got.push_str(if at.is_some() { body.strip_suffix('\n').unwrap() } else { body });
                match line {
                    Some(n) => (a.start_line, a.start_char) = (Some(n), at),
                    None => break,
                }
            }
            proptest::prop_assert_eq!(got, normalized(&text));

            let mut g = args(&id);
            g.grep = Some("^[a-c]".into());
            let mut matched = String::new();
            for _ in 0..10_000 {
                let page = read(&store, &g, budget, Tokenizer::Cl100k).unwrap();
                let (body, footer) = page.rsplit_once("[mcp-budget: ").unwrap();
                matched.push_str(body);
                match continuation(footer).0 {
                    Some(n) => g.start_line = Some(n),
                    None => break,
                }
            }
            let re = regex::Regex::new("^[a-c]").unwrap();
            let want: String = text
                .lines()
                .enumerate()
                .filter(|(_, l)| re.is_match(l))
                .map(|(i, l)| format!("{}: {l}\n", i + 1))
                .collect();
            // a matching line longer than the budget is shown cut: compare line numbers
            let numbers = |s: &str| -> Vec<String> {
                s.lines().filter_map(|l| l.split_once(": ").map(|(n, _)| n.to_string())).collect()
            };
            proptest::prop_assert_eq!(numbers(&matched), numbers(&want));
        }
    }

    #[test]
    fn start_line_past_the_end_names_the_line_count() {
        for (text, start, ok) in [
            ("", 1, true),
            ("", 2, false),
            ("a\nb", 2, true),
            ("a\nb", 3, false),
            ("a\nb\n", 3, false),
            ("a\n\n", 2, true),
        ] {
            let (_d, store, id) = store_with(text);
            let mut a = args(&id);
            a.start_line = Some(start);
            let got = read(&store, &a, 1000, Tokenizer::Cl100k);
            assert_eq!(got.is_ok(), ok, "{text:?} from {start}: {got:?}");
            if let Err(e) = got {
                let want = format!("({} lines)", text.lines().count());
                assert!(e.to_string().contains(&want), "{e}");
            }
        }
    }
}
