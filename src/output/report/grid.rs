//! The one comfy-table set-up every terminal table shares: UTF-8 lines, condensed rows.

use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table};

/// How a table uses the width it is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fit {
    /// Columns as wide as their content.
    Content,
    /// Cells wrap so the table fits the width (None: the terminal's, when stdout is one).
    Wrap(Option<u16>),
}

/// An empty table in the house style; the caller sets its header.
pub(crate) fn grid(fit: Fit) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    let width = match fit {
        Fit::Content => None,
        Fit::Wrap(width) => {
            t.set_content_arrangement(ContentArrangement::Dynamic);
            width
        }
    };
    if let Some(w) = width {
        t.set_width(w);
    }
    t
}
