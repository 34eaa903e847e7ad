//! The gate's verdict as terminal text: the verdict, what broke, and the changes table.

use crate::ground::text::one_line;

use crate::ground::units::thousands;
use crate::judge::gate::{Subject, Verdict};
use crate::output::report::fit::{wrap_prose, Column, Fitted};

/// Characters of a name shown in a cell at most (gate.json keeps it whole).
const CELL_CHARS: usize = 200;

/// A name for a cell: cut to a preview, control and format characters escaped.
fn name(s: &str) -> String {
    one_line(&crate::ground::text::cell_preview(
        s,
        CELL_CHARS,
        "gate.json",
    ))
    .into_owned()
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
    // the name and how it moved stay; the server (one, mostly) goes first
    let mut t = Fitted::new(vec![
        Column::text("change", 6, 1),
        Column::text("what", 6, 2),
        Column::text("server", 6, 3),
        Column::text("name", 10, 0),
        Column::num("before", 1),
        Column::num("after", 1),
        Column::num("delta", 0),
        Column::num("%", 0),
    ]);
    for c in moved {
        t.row(vec![
            format!("{:?}", c.movement).to_lowercase(),
            match c.subject {
                Subject::Server => "schema tax",
                Subject::Tool => "tool",
                Subject::Probe => "result",
            }
            .to_string(),
            name(&c.server),
            name(&c.name),
            c.before.map_or("-".into(), thousands),
            c.after.map_or("-".into(), thousands),
            format!("{:+}", c.delta),
            c.pct_text(),
        ]);
    }
    out.push_str(&t.shown(width, width.filter(|_| wrap), "gate.json"));
    out
}
