//! The table `mcp-budget count` prints.

use crate::text::one_line;
use comfy_table::{Cell, CellAlignment};

use super::grid::{grid, Fit};
use crate::tokens::{Counts, TokenizerSet};
use crate::units::thousands;

/// One row per file (name, bytes, counts), then a total when there are several.
pub fn render_count_table(set: &TokenizerSet, rows: &[(String, usize, Counts)]) -> String {
    let mut t = grid(Fit::Content);
    let mut header = vec!["file".to_string(), "bytes".to_string()];
    header.extend(set.all().iter().map(|t| t.to_string()));
    t.set_header(header);
    let right = |n: usize| Cell::new(thousands(n)).set_alignment(CellAlignment::Right);
    let mut total = (0usize, set.uniform(0));
    for (file, bytes, c) in rows {
        let mut cells = vec![Cell::new(one_line(file)), right(*bytes), right(c.primary)];
        cells.extend(set.all()[1..].iter().map(|tk| right(c.others[tk.name()])));
        t.add_row(cells);
        total.0 += bytes;
        total.1.add(c);
    }
    if rows.len() > 1 {
        let mut cells = vec![Cell::new("total"), right(total.0), right(total.1.primary)];
        cells.extend(
            set.all()[1..]
                .iter()
                .map(|tk| right(total.1.others[tk.name()])),
        );
        t.add_row(cells);
    }
    format!("{t}\n")
}
