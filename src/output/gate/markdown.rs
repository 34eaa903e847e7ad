//! The gate's verdict as Markdown for a pull-request comment: the verdict first, then what broke,
//! then a "tool changes" table against the baseline.

use std::fmt::Write as _;

use crate::ground::units::{signed_thousands, thousands};
use crate::judge::gate::{Movement, Subject, Verdict};

/// Rows of the changes table at most (the JSON format has them all).
const MAX_ROWS: usize = 50;

/// Characters of a name or message shown at most (gate.json keeps them whole).
const CELL_CHARS: usize = 1_000;

/// Text from a report (names, messages) as Markdown that renders as that text.
fn cell(text: &str) -> String {
    crate::ground::text::markdown_cell(&crate::ground::text::cell_preview(
        text,
        CELL_CHARS,
        "gate.json",
    ))
}

/// A name as a code span; `in_table` escapes its `|`.
fn code(text: &str, in_table: bool) -> String {
    let shown = crate::ground::text::cell_preview(text, CELL_CHARS, "gate.json");
    crate::ground::text::markdown_code(&shown, in_table)
}

/// Render the verdict.
pub fn render_markdown(v: &Verdict) -> String {
    let mut out = String::new();
    if v.passed {
        let _ = writeln!(out, "### ✅ mcp-budget gate passed\n");
    } else {
        let _ = writeln!(
            out,
            "### ❌ mcp-budget gate failed: {} threshold{} broken\n",
            v.violations.len(),
            if v.violations.len() == 1 { "" } else { "s" }
        );
        for x in &v.violations {
            let _ = writeln!(out, "- **{}**: {}", x.rule, cell(&x.message));
        }
        out.push('\n');
    }
    let Some(base) = &v.baseline else {
        let _ = writeln!(out, "_No baseline given: thresholds only._");
        return out;
    };
    let count = |m: Movement| v.changes.iter().filter(|c| c.movement == m).count();
    let _ = writeln!(
        out,
        "Against {}: {} added, {} removed, {} grown, {} shrunk, {} unchanged.\n",
        code(base, false),
        count(Movement::Added),
        count(Movement::Removed),
        count(Movement::Grown),
        count(Movement::Shrunk),
        count(Movement::Unchanged)
    );
    let moved: Vec<_> = v.moved().collect();
    if moved.is_empty() {
        let _ = writeln!(out, "No tool changes.");
        return out;
    }
    let _ = writeln!(out, "#### Tool changes\n");
    let _ = writeln!(
        out,
        "| | what | server | name | before | after | delta | % |"
    );
    let _ = writeln!(out, "|---|---|---|---|---:|---:|---:|---:|");
    for c in moved.iter().take(MAX_ROWS) {
        let mark = match c.movement {
            Movement::Added => "🆕 added",
            Movement::Removed => "🗑️ removed",
            Movement::Grown => "🔺 grown",
            Movement::Shrunk => "🔻 shrunk",
            Movement::Unchanged => "",
        };
        let what = match c.subject {
            Subject::Server => "schema tax",
            Subject::Tool => "tool",
            Subject::Probe => "result",
        };
        let name = match &c.arguments {
            Some(a) if a != "{}" => format!("{} {}", code(&c.name, true), cell(a)),
            _ => code(&c.name, true),
        };
        let _ = writeln!(
            out,
            "| {mark} | {what} | {} | {name} | {} | {} | {} | {} |",
            cell(&c.server),
            c.before.map_or("-".into(), thousands),
            c.after.map_or("-".into(), thousands),
            signed_thousands(c.delta),
            c.pct_text()
        );
    }
    if moved.len() > MAX_ROWS {
        let _ = writeln!(
            out,
            "\n_{} more changes in the JSON output (`--format json`)._",
            moved.len() - MAX_ROWS
        );
    }
    out
}
