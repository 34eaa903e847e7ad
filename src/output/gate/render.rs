//! One entry point for every format of a verdict: a closed `GateFormat` picks the writer.

use std::io::Write;

use super::github::render_github;
use super::markdown::render_markdown;
use super::table::render_table;
use crate::judge::gate::Verdict;

/// An output format of a gate verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateFormat {
    /// The terminal table; `width` fixes its width (None: the terminal's, if any); `wrap`
    /// wraps each broken threshold's line to it (at a terminal, or given a width).
    Table { width: Option<u16>, wrap: bool },
    /// gate.md: the PR comment.
    Markdown,
    /// gate.json.
    Json,
    /// GitHub workflow commands: an annotation per violation.
    Github,
}

/// Write `verdict` in `format` to `out`.
pub fn render(verdict: &Verdict, format: GateFormat, out: &mut dyn Write) -> std::io::Result<()> {
    match format {
        GateFormat::Table { width, wrap } => {
            out.write_all(render_table(verdict, width, wrap).as_bytes())
        }
        GateFormat::Markdown => out.write_all(render_markdown(verdict).as_bytes()),
        GateFormat::Json => {
            serde_json::to_writer_pretty(&mut *out, verdict)?;
            out.write_all(b"\n")
        }
        GateFormat::Github => out.write_all(render_github(verdict).as_bytes()),
    }
}
