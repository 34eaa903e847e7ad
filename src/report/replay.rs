//! What `mcp-budget replay` prints: before and after per payload, as a table or JSON.

use crate::text::one_line;
use comfy_table::{Cell, CellAlignment};
use serde::{Deserialize, Serialize};

use super::grid::{grid, Fit};
use super::render::{no_such_format, Listing};
use crate::units::{micros_as_ms, thousands};

/// One replayed payload (`--format json` prints `{"results": [...]}` of these).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayRow {
    pub file: String,
    pub tool: String,
    pub tokens_before: usize,
    pub tokens_after: usize,
    pub budget: usize,
    pub strategy: String,
    /// Median engine time over `--runs` passes, in microseconds.
    pub engine_us: u64,
    /// Each engine stage of the last pass and its microseconds.
    pub stages: Vec<(String, u64)>,
    pub spill_path: Option<String>,
    pub note: Option<String>,
    /// Why the full original could not be saved (then `spill_path` is empty and the exit
    /// status 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spill_error: Option<String>,
    /// The budgeted MCP tool result.
    pub result: serde_json::Value,
    /// The whole result with its JSON text written as TOON (lossless), in the budget's tokens;
    /// `None` when its JSON holds no array of same-shaped objects. The engine uses TOON only
    /// with the policy's `toon` and only when that fits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toon_tokens: Option<usize>,
}

/// The table form.
/// `replay`'s output: a table, or JSON with every row (`{"results": [...]}`).
pub fn render_replay(
    rows: &[ReplayRow],
    format: Listing,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    match format {
        Listing::Table { width } => out.write_all(table(rows, width).as_bytes()),
        Listing::Json => {
            serde_json::to_writer_pretty(&mut *out, &serde_json::json!({ "results": rows }))?;
            out.write_all(b"\n")
        }
        Listing::Csv => Err(no_such_format("replay", format)),
    }
}

fn table(rows: &[ReplayRow], width: Option<u16>) -> String {
    let mut t = grid(Fit::Wrap(width));
    let toon = rows.iter().any(|r| r.toon_tokens.is_some());
    let mut header = vec![
        "file", "tool", "before", "after", "budget", "strategy", "engine",
    ];
    if toon {
        header.push("as TOON");
    }
    header.push("spill");
    t.set_header(header);
    let right = |s: String| Cell::new(s).set_alignment(CellAlignment::Right);
    for r in rows {
        let mut row = vec![
            Cell::new(one_line(&r.file)),
            Cell::new(one_line(&r.tool)),
            right(thousands(r.tokens_before)),
            right(thousands(r.tokens_after)),
            right(thousands(r.budget)),
            Cell::new(&r.strategy),
            right(micros_as_ms(r.engine_us)),
        ];
        if toon {
            row.push(right(r.toon_tokens.map_or("-".into(), thousands)));
        }
        row.push(Cell::new(one_line(
            &match (&r.spill_path, &r.spill_error) {
                (Some(path), _) => path.clone(),
                (None, Some(e)) => format!("NOT SAVED: {e}"),
                (None, None) => String::new(),
            },
        )));
        t.add_row(row);
    }
    format!("{t}\n")
}
