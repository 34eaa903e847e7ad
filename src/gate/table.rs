//! The gate's verdict as terminal text: the verdict, what broke, and the changes table.

use crate::text::one_line;
use comfy_table::{Cell, CellAlignment};

use super::{Subject, Verdict};
use crate::report::fit::wrap_prose;
use crate::report::grid::{grid, Fit};
use crate::units::thousands;

/// Characters of a name shown in a cell at most (gate.json keeps it whole).
const CELL_CHARS: usize = 200;

/// A name for a cell: cut to a preview, control and format characters escaped.
fn name(s: &str) -> String {
    one_line(&crate::text::cell_preview(s, CELL_CHARS, "gate.json")).into_owned()
}

/// Render the verdict; `width` fixes the table width (None: the terminal's), and with `wrap`
/// each broken threshold's line is wrapped to it.
pub fn render_table(v: &Verdict, width: Option<u16>, wrap: bool) -> String {
    let mut out = String::new();
    if v.passed {
        out.push_str("gate passed\n");
    } else {
        out.push_str(&format!(
            "gate FAILED: {} threshold(s) broken\n",
            v.violations.len()
        ));
        for x in &v.violations {
            let line = format!("  {}: {}", x.rule, one_line(&x.message));
            out.push_str(&wrap_prose(&line, width.filter(|_| wrap), 4));
            out.push('\n');
        }
    }
    let Some(base) = &v.baseline else {
        return out;
    };
    let moved: Vec<_> = v.moved().collect();
    out.push_str(&format!(
        "\nChanges against {}: {} of {} moved\n",
        one_line(base),
        moved.len(),
        v.changes.len()
    ));
    if moved.is_empty() {
        return out;
    }
    let mut t = grid(Fit::Wrap(width));
    t.set_header([
        "change", "what", "server", "name", "before", "after", "delta", "%",
    ]);
    let num = |s: String| Cell::new(s).set_alignment(CellAlignment::Right);
    for c in moved {
        t.add_row(vec![
            Cell::new(format!("{:?}", c.movement).to_lowercase()),
            Cell::new(match c.subject {
                Subject::Server => "schema tax",
                Subject::Tool => "tool",
                Subject::Probe => "result",
            }),
            Cell::new(name(&c.server)),
            Cell::new(name(&c.name)),
            num(c.before.map_or("-".into(), thousands)),
            num(c.after.map_or("-".into(), thousands)),
            num(format!("{:+}", c.delta)),
            num(c.pct_text()),
        ]);
    }
    out.push_str(&t.to_string());
    out.push('\n');
    out
}
