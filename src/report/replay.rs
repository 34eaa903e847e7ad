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
    /// Of a result over the budget: the share of the budget the model is sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill: Option<f64>,
    /// The largest list the engine cut, and what of it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<crate::facts::ItemsKept>,
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

/// `0.994` as `99%`.
fn percent(fill: f64) -> String {
    format!("{:.0}%", fill * 100.0)
}

/// Whole items kept of the list's items: `206 of 60,000` (`+1 cut` when one more is cut inside).
fn items(i: &crate::facts::ItemsKept) -> String {
    let inside = match i.inside {
        0 => String::new(),
        n => format!(" +{} cut", thousands(n)),
    };
    format!("{}{inside} of {}", thousands(i.whole), thousands(i.total))
}

fn table(rows: &[ReplayRow], width: Option<u16>) -> String {
    let mut t = grid(Fit::Wrap(width));
    let toon = rows.iter().any(|r| r.toon_tokens.is_some());
    let mut header = vec![
        "file", "tool", "before", "after", "budget", "fill", "items", "strategy", "engine",
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
            right(r.fill.map_or("-".into(), percent)),
            right(r.items.as_ref().map_or("-".into(), items)),
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
