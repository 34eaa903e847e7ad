//! `mcp_budget_read`: the way back to a spilled original, a page of lines at a time within the
//! budget, or the lines matching a pattern with their numbers. Reads only files of the spill store.

mod window;

use serde::Deserialize;

use crate::budget::{SizeLimits, SpillStore};
use crate::ground::tokens::Tokenizer;
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
        // on a boundary (a whole JSON element, a word), never inside a value
        let cut = match cut < line.len() {
            true => crate::ground::text::boundary_before(line, cut).0,
            false => cut,
        };
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
mod tests;
