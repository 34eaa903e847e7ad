//! `mcp_budget_read`: the way back to a spilled original, a page of lines at a time within the
//! budget, or the lines matching a pattern with their numbers. Reads only files of the spill store.

use serde::Deserialize;

use crate::budget::SpillStore;
use crate::tokens::Tokenizer;

/// The tool's name.
pub const READ_TOOL: &str = "mcp_budget_read";

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
                "start_char": {"type": "integer", "minimum": 0, "description": "Byte offset inside start_line, to continue a line longer than the budget (the note says when)"}
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
pub fn read(
    store: &SpillStore,
    args: &ReadArgs,
    budget: usize,
    tokenizer: Tokenizer,
) -> Result<String, ReadError> {
    let path = store
        .resolve(&args.handle)
        .ok_or_else(|| ReadError::Unknown(args.handle.clone()))?;
    let text = std::fs::read(&path).map_err(|e| ReadError::Io {
        handle: args.handle.clone(),
        message: e.to_string(),
    })?;
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<&str> = text.lines().collect();
    let total = lines.len();
    let start = args.start_line.unwrap_or(1).max(1);
    if start > total.max(1) {
        return Err(ReadError::Arguments(format!(
            "start_line {start} is past the end ({total} lines)"
        )));
    }
    let max_lines = args.max_lines.unwrap_or(usize::MAX).max(1);
    let pattern = match &args.grep {
        Some(p) => Some(regex::Regex::new(p).map_err(|e| ReadError::Pattern(e.to_string()))?),
        None => None,
    };
    // leave room for the footer
    let room = budget.saturating_sub(60).max(50);
    let mut out = String::new();
    let (mut used, mut shown, mut last) = (0, 0, start - 1);
    // where the next page starts inside a line cut short: (line, byte offset)
    let mut resume: Option<(usize, usize)> = None;
    for (i, whole) in lines.iter().enumerate().skip(start - 1) {
        if shown == max_lines {
            break;
        }
        let mut offset = 0;
        if i == start - 1 && pattern.is_none() {
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
            Some(_) => format!("{}: {line}\n", i + 1),
            None => format!("{line}\n"),
        };
        let cost = tokenizer.count(&piece);
        if used + cost <= room {
            out.push_str(&piece);
            used += cost;
            shown += 1;
            last = i + 1;
            continue;
        }
        if shown > 0 {
            break;
        }
        // the first line of the page is longer than the budget: as much of it as fits
        let cut = fitting_prefix(line, room, tokenizer)
            .max(line.chars().next().map_or(0, char::len_utf8));
        out.push_str(&line[..cut]);
        out.push('\n');
        shown += 1;
        if pattern.is_none() && cut < line.len() {
            resume = Some((i + 1, offset + cut));
            last = i;
        } else {
            last = i + 1;
        }
        break;
    }
    let footer = match (&pattern, resume) {
        (None, Some((line, at))) => format!(
            "[mcp-budget: line {line} is longer than the budget: shown up to byte {at} of {}; continue with start_line={line} start_char={at}]",
            lines[line - 1].len()
        ),
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
    };
    // tokens do not always add up across line breaks: drop whole lines until the page fits
    while resume.is_none() && shown > 1 && tokenizer.count(&out) + tokenizer.count(&footer) > budget
    {
        let end = out[..out.len() - 1].rfind('\n').map_or(0, |i| i + 1);
        out.truncate(end);
        shown -= 1;
    }
    out.push_str(&footer);
    Ok(out)
}

/// The longest char-boundary prefix of `text` within `limit` tokens (bisection on its length).
fn fitting_prefix(text: &str, limit: usize, tokenizer: Tokenizer) -> usize {
    let (mut lo, mut hi) = (0usize, text.len().min(limit * 8));
    while lo < hi {
        let mut mid = (lo + hi).div_ceil(2);
        while !text.is_char_boundary(mid) {
            mid -= 1;
        }
        if mid <= lo {
            break;
        }
        if tokenizer.count(&text[..mid]) <= limit {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Map;

    fn store_with(text: &str) -> (tempfile::TempDir, SpillStore, String) {
        let dir = tempfile::tempdir().unwrap();
        let store = SpillStore::new(dir.path().to_path_buf(), 1 << 30);
        let h = store
            .save("srv", "scrape", &Map::new(), "md", text.as_bytes())
            .unwrap();
        (dir, store, h.id)
    }

    fn args(handle: &str) -> ReadArgs {
        ReadArgs {
            handle: handle.into(),
            start_line: None,
            max_lines: None,
            grep: None,
            start_char: None,
        }
    }

    /// `start_line=N` and `start_char=K` from a footer.
    pub(crate) fn continuation(footer: &str) -> (Option<usize>, Option<usize>) {
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
}
