//! What `mcp-budget replay --compare` prints: each result as every contender gives it to the
//! model, side by side, as a table or JSON.

use comfy_table::{Cell, CellAlignment};
use serde::Serialize;

use super::grid::{grid, Fit};
use super::render::{no_such_format, Listing};
use crate::assess::compare::Comparison;
use crate::assess::quality::JsonForm;
use crate::text::one_line;
use crate::units::thousands;

/// One compared file (`--format json` prints `{"results": [...]}` of these).
#[derive(Debug, Clone, Serialize)]
pub struct CompareRow {
    pub file: String,
    pub tool: String,
    #[serde(flatten)]
    pub comparison: Comparison,
}

/// `replay --compare`'s output.
pub fn render_compare(
    rows: &[CompareRow],
    format: Listing,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    match format {
        Listing::Table { width } => {
            for r in rows {
                out.write_all(table(r, width).as_bytes())?;
            }
            Ok(())
        }
        Listing::Json => {
            serde_json::to_writer_pretty(&mut *out, &serde_json::json!({ "results": rows }))?;
            out.write_all(b"\n")
        }
        Listing::Csv => Err(no_such_format("replay --compare", format)),
    }
}

fn table(r: &CompareRow, width: Option<u16>) -> String {
    let c = &r.comparison;
    let mut t = grid(Fit::Wrap(width));
    t.set_header(vec![
        "contender",
        "outcome",
        "tokens",
        "fill",
        "items",
        "JSON",
        "cut number",
        "needles",
    ]);
    let right = |s: String| Cell::new(s).set_alignment(CellAlignment::Right);
    for v in &c.views {
        let j = &v.judged;
        let needles = match (j.needles, v.reachable) {
            (Some((shown, n)), Some((held, _))) => format!("{shown}/{n} ({held} by handle)"),
            (Some((shown, n)), None) => format!("{shown}/{n}"),
            _ => "-".into(),
        };
        t.add_row(vec![
            Cell::new(one_line(&v.contender)),
            Cell::new(one_line(&v.outcome)),
            right(thousands(v.tokens)),
            right(j.fill.map_or("-".into(), |f| format!("{:.0}%", f * 100.0))),
            right(j.items.map_or("-".into(), |(w, n)| {
                format!("{} of {}", thousands(w), thousands(n))
            })),
            Cell::new(match j.json {
                JsonForm::NotJson => "-",
                JsonForm::Valid => "valid",
                JsonForm::LabelledPreview => "preview",
                JsonForm::Invalid => "INVALID",
            }),
            Cell::new(
                j.cut_number
                    .as_deref()
                    .map_or(String::new(), |c| one_line(c).into_owned()),
            ),
            right(needles),
        ]);
    }
    format!(
        "{} ({}): {} tokens, budget {}\n{t}\n",
        one_line(&r.file),
        one_line(&r.tool),
        thousands(c.tokens_before),
        thousands(c.budget)
    )
}
