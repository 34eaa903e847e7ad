//! What `mcp-budget replay --compare` prints: each result as every contender gives it to the
//! model, side by side, as a table or JSON.

use serde::Serialize;

use super::fit::{Column, Fitted};
use super::render::{no_such_format, Listing};
use crate::ground::text::one_line;
use crate::ground::units::thousands;
use crate::judge::assess::compare::Comparison;
use crate::judge::assess::quality::JsonForm;

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
    let mut t = Fitted::new(vec![
        Column::text("contender", 10, 0),
        Column::text("outcome", 8, 1),
        Column::num("tokens", 0),
        Column::num("fill", 0),
        Column::text("items", 8, 2),
        Column::text("JSON", 7, 1),
        Column::text("cut number", 8, 2),
        Column::text("needles", 8, 1),
    ]);
    for v in &c.views {
        let j = &v.judged;
        let needles = match (j.needles, v.reachable) {
            (Some((shown, n)), Some((held, _))) => format!("{shown}/{n} ({held} by handle)"),
            (Some((shown, n)), None) => format!("{shown}/{n}"),
            _ => "-".into(),
        };
        t.row(vec![
            one_line(&v.contender).into_owned(),
            one_line(&v.outcome).into_owned(),
            thousands(v.tokens),
            j.fill.map_or("-".into(), |f| format!("{:.0}%", f * 100.0)),
            j.items.map_or("-".into(), |(w, n)| {
                format!("{} of {}", thousands(w), thousands(n))
            }),
            match j.json {
                JsonForm::NotJson => "-",
                JsonForm::Valid => "valid",
                JsonForm::LabelledPreview => "preview",
                JsonForm::Invalid => "INVALID",
            }
            .to_string(),
            j.cut_number
                .as_deref()
                .map_or(String::new(), |c| one_line(c).into_owned()),
            needles,
        ]);
    }
    let title = format!(
        "{} ({}): {} tokens, budget {}",
        one_line(&r.file),
        one_line(&r.tool),
        thousands(c.tokens_before),
        thousands(c.budget)
    );
    format!(
        "{}\n{}",
        super::fit::wrap_prose(&title, width, 2),
        t.shown(width, width, "the --format json output")
    )
}
