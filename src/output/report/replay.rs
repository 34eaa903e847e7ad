//! What `mcp-budget replay` prints: before and after per payload, as a table or JSON.

use crate::ground::text::one_line;
use serde::{Deserialize, Serialize};

use super::fit::{Column, Fitted};
use super::render::{no_such_format, Listing};
use crate::ground::units::{micros_as_ms, thousands};

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
    pub items: Option<crate::measure::facts::ItemsKept>,
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
fn items(i: &crate::measure::facts::ItemsKept) -> String {
    let inside = match i.inside {
        0 => String::new(),
        n => format!(" +{} cut", thousands(n)),
    };
    format!("{}{inside} of {}", thousands(i.whole), thousands(i.total))
}

fn table(rows: &[ReplayRow], width: Option<u16>) -> String {
    let toon = rows.iter().any(|r| r.toon_tokens.is_some());
    // before and after stay; the spill's path (in the note of each result too) goes first
    let mut columns = vec![
        Column::text("file", 10, 0),
        Column::text("tool", 8, 2),
        Column::num("before", 0),
        Column::num("after", 0),
        Column::num("budget", 1),
        Column::num("fill", 1),
        Column::text("items", 8, 2),
        Column::text("strategy", 8, 1),
        Column::num("engine", 2),
    ];
    if toon {
        columns.push(Column::num("as TOON", 2));
    }
    columns.push(Column::text("spill", 12, 3));
    let mut t = Fitted::new(columns);
    for r in rows {
        let mut row = vec![
            one_line(&r.file).into_owned(),
            one_line(&r.tool).into_owned(),
            thousands(r.tokens_before),
            thousands(r.tokens_after),
            thousands(r.budget),
            r.fill.map_or("-".into(), percent),
            r.items.as_ref().map_or("-".into(), items),
            r.strategy.clone(),
            micros_as_ms(r.engine_us),
        ];
        if toon {
            row.push(r.toon_tokens.map_or("-".into(), thousands));
        }
        row.push(
            one_line(&match (&r.spill_path, &r.spill_error) {
                (Some(path), _) => path.clone(),
                (None, Some(e)) => format!("NOT SAVED: {e}"),
                (None, None) => String::new(),
            })
            .into_owned(),
        );
        t.row(row);
    }
    t.shown(width, width, "the --format json output")
}
