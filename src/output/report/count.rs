//! The table `mcp-budget count` prints.

use crate::ground::text::one_line;

use std::io::Write;

use super::fit::{Column, Fitted};
use super::render::{no_such_format, Listing};
use crate::ground::tokens::{Counts, TokenizerSet};
use crate::ground::units::thousands;

/// `count`'s output: a table, or JSON with every file's bytes and tokens by tokenizer.
pub fn render_count(
    set: &TokenizerSet,
    rows: &[(String, usize, Counts)],
    format: Listing,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    match format {
        Listing::Table { width } => out.write_all(table(set, rows, width).as_bytes()),
        Listing::Json => {
            let names: Vec<&str> = set.all().iter().map(|t| t.name()).collect();
            let files: Vec<serde_json::Value> = rows
                .iter()
                .map(|(f, bytes, c)| {
                    let mut v = serde_json::json!({"file": f, "bytes": bytes, "tokens": c.primary});
                    v["by_tokenizer"] = serde_json::json!(c.others);
                    v
                })
                .collect();
            let doc = serde_json::json!({"tokenizers": names, "files": files});
            serde_json::to_writer_pretty(&mut *out, &doc)?;
            out.write_all(b"\n")
        }
        Listing::Csv => Err(no_such_format("count", format)),
    }
}

/// `count --plain`, for scripts: each file's tokens by every tokenizer asked for, as bare
/// numbers separated by tabs; with more than one file, the file's name after a tab (as `wc`),
/// and no total.
pub fn render_count_plain(
    set: &TokenizerSet,
    rows: &[(String, usize, Counts)],
    out: &mut dyn Write,
) -> std::io::Result<()> {
    for (file, _, c) in rows {
        let mut line = c.primary.to_string();
        for tk in &set.all()[1..] {
            line.push('\t');
            line.push_str(&c.others[tk.name()].to_string());
        }
        if rows.len() > 1 {
            line.push('\t');
            line.push_str(&one_line(file));
        }
        line.push('\n');
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

/// One row per file (name, bytes, counts), then a total when there are several.
fn table(set: &TokenizerSet, rows: &[(String, usize, Counts)], width: Option<u16>) -> String {
    // the file and the primary count stay; the other tokenizers go before the bytes
    let mut columns = vec![
        Column::text("file", 12, 0),
        Column::num("bytes", 2),
        Column::num(set.primary().name(), 0),
    ];
    columns.extend(set.all()[1..].iter().map(|t| Column::num(t.name(), 1)));
    let mut t = Fitted::new(columns);
    let mut total = (0usize, set.uniform(0));
    for (file, bytes, c) in rows {
        let mut cells = vec![
            one_line(file).into_owned(),
            thousands(*bytes),
            thousands(c.primary),
        ];
        cells.extend(
            set.all()[1..]
                .iter()
                .map(|tk| thousands(c.others[tk.name()])),
        );
        t.row(cells);
        total.0 += bytes;
        total.1.add(c);
    }
    if rows.len() > 1 {
        let mut cells = vec![
            "total".to_string(),
            thousands(total.0),
            thousands(total.1.primary),
        ];
        cells.extend(
            set.all()[1..]
                .iter()
                .map(|tk| thousands(total.1.others[tk.name()])),
        );
        t.row(cells);
    }
    t.shown(width, width, "the --format json output")
}
