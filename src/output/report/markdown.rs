//! report.md: the report page as Markdown, a blog-style write-up: the summary paragraph, the
//! tables, the charts as images and the findings. Pure: the page in, text out.

use std::fmt::Write as _;

use super::charts::DrawnChart;
use super::page::{Block, Page, Span, Table};
use crate::ground::text::{cell_preview, markdown_cell, markdown_code};

/// Characters of a cell shown at most (audit.json keeps the whole text).
pub(crate) const CELL_CHARS: usize = 1_000;

/// Write report.md. `charts` are the charts written beside it (under charts/); a chart that
/// was not drawn is left out.
pub(crate) fn write_markdown(
    page: &Page,
    charts: &[DrawnChart],
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    out.write_all(markdown(page, charts).as_bytes())
}

fn markdown(page: &Page, charts: &[DrawnChart]) -> String {
    let mut out = String::new();
    for b in &page.blocks {
        match b {
            Block::Title(t) => {
                let _ = writeln!(out, "# {}\n", crate::ground::text::one_line(t));
            }
            Block::Heading(t) => {
                let _ = writeln!(out, "## {}\n", crate::ground::text::one_line(t));
            }
            Block::Para(spans) => {
                let _ = writeln!(out, "{}\n", para(spans));
            }
            Block::Chart(kind) => {
                if charts.iter().any(|c| c.kind == *kind) {
                    let (stem, alt) = (kind.file_stem(), kind.title());
                    let _ = writeln!(out, "![{alt}](charts/{stem}.svg)\n");
                }
            }
            Block::Table(t) => table(&mut out, t),
        }
    }
    out
}

fn table(out: &mut String, t: &Table) {
    header(
        out,
        &t.headers.iter().map(String::as_str).collect::<Vec<_>>(),
        &t.right,
    );
    for r in &t.rows {
        let cells: Vec<String> = r
            .iter()
            .zip(&t.code)
            .map(|(c, code)| {
                let c = cell_preview(c, CELL_CHARS, "audit.json");
                if *code && c != "-" {
                    markdown_code(&c, true)
                } else {
                    markdown_cell(&c)
                }
            })
            .collect();
        row(out, &cells);
    }
    out.push('\n');
}

/// A paragraph: our words as written (one line), others' text escaped so it renders as text.
fn para(spans: &[Span]) -> String {
    spans
        .iter()
        .map(|s| match s {
            Span::Own(t) => crate::ground::text::one_line(t).into_owned(),
            Span::Code(t) => markdown_code(&cell_preview(t, CELL_CHARS, "audit.json"), false),
            Span::Text(t) => markdown_cell(&cell_preview(t, CELL_CHARS, "audit.json")),
        })
        .collect()
}

fn row(out: &mut String, cells: &[String]) {
    out.push('|');
    for c in cells {
        let _ = write!(out, " {} |", c);
    }
    out.push('\n');
}

fn header(out: &mut String, names: &[&str], right: &[bool]) {
    row(
        out,
        &names.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
    );
    out.push('|');
    for r in right {
        out.push_str(if *r { "---:|" } else { "---|" });
    }
    out.push('\n');
}
