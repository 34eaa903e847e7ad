//! report.html: the report page as one self-contained HTML page (inline CSS, inline SVG charts,
//! a few lines of inline script to sort tables; nothing loaded from the network).

use std::fmt::Write as _;

use super::charts::DrawnChart;
use super::markdown::CELL_CHARS;
use super::page::{Block, Page, Span, Table};
use crate::ground::text::cell_preview;

/// The page's style sheet.
const STYLE: &str = include_str!("data/report.css");

/// Sort a table by a header click: numbers by value (thousands separators and $ ignored).
const SCRIPT: &str = include_str!("data/sort-tables.js");

/// Write report.html. `charts` are inlined where the page shows them; a chart that was not
/// drawn is left out.
pub(crate) fn write_html(
    page: &Page,
    charts: &[DrawnChart],
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    out.write_all(html(page, charts).as_bytes())
}

fn html(page: &Page, charts: &[DrawnChart]) -> String {
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(
        out,
        "<meta name=\"generator\" content=\"mcp-budget {}\">",
        escape(&page.tool_version)
    );
    out.push_str("<title>MCP token audit</title>\n<style>");
    out.push_str(STYLE);
    out.push_str("</style>\n</head>\n<body>\n");
    for b in &page.blocks {
        match b {
            Block::Title(t) => {
                let _ = writeln!(out, "<h1>{}</h1>", escape(t));
            }
            Block::Heading(t) => {
                let _ = writeln!(out, "<h2>{}</h2>", escape(t));
            }
            Block::Para(spans) => {
                let _ = writeln!(out, "<p>{}</p>", para(spans));
            }
            Block::Chart(kind) => {
                if let Some(chart) = charts.iter().find(|c| c.kind == *kind) {
                    // the SVG's own XML declaration is not allowed inside HTML
                    let svg = &chart.svg;
                    let body = svg.find("<svg").map_or(svg.as_str(), |i| &svg[i..]);
                    let _ = writeln!(
                        out,
                        "<figure id=\"chart-{}\">{body}<figcaption>{}</figcaption></figure>",
                        kind.file_stem(),
                        escape(kind.title())
                    );
                }
            }
            Block::Table(t) => table(&mut out, t),
        }
    }
    out.push_str("<script>");
    out.push_str(SCRIPT);
    out.push_str("</script>\n</body>\n</html>\n");
    out
}

fn table(out: &mut String, t: &Table) {
    out.push_str("<div class=\"scroll\"><table class=\"sortable\">\n<thead><tr>");
    for (h, right) in t.headers.iter().zip(&t.right) {
        let class = if *right { " class=\"num\"" } else { "" };
        let _ = write!(out, "<th{class}>{}</th>", escape(h));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for r in &t.rows {
        out.push_str("<tr>");
        for ((c, right), code) in r.iter().zip(&t.right).zip(&t.code) {
            let class = if *right { " class=\"num\"" } else { "" };
            let c = &cell_preview(c, CELL_CHARS, "audit.json");
            let text = if *code && c != "-" {
                format!("<code>{}</code>", escape(c))
            } else {
                escape(c)
            };
            let _ = write!(out, "<td{class}>{text}</td>");
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
}

/// A paragraph: our words with their marks as HTML, others' text escaped, never marked up.
fn para(spans: &[Span]) -> String {
    spans
        .iter()
        .map(|s| match s {
            Span::Own(t) => inline(t),
            Span::Code(t) => format!(
                "<code>{}</code>",
                escape(&cell_preview(t, CELL_CHARS, "audit.json"))
            ),
            Span::Text(t) => escape(&cell_preview(t, CELL_CHARS, "audit.json")),
        })
        .collect()
}

/// Escape text for HTML: the five characters that mean markup, and control and format
/// characters as visible escapes (`\x1b`, `\u{202e}`).
fn escape(text: &str) -> String {
    let text = crate::ground::text::one_line(text);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A paragraph's `code`, **bold** and _emphasis_ spans as HTML (the text escaped first).
fn inline(text: &str) -> String {
    let escaped = escape(text);
    let mut out = String::new();
    let mut rest = escaped.as_str();
    let (mut code, mut bold) = (false, false);
    while let Some(i) = rest.find(['`', '*']) {
        out.push_str(&rest[..i]);
        if rest[i..].starts_with('`') {
            out.push_str(if code { "</code>" } else { "<code>" });
            code = !code;
            rest = &rest[i + 1..];
        } else if rest[i..].starts_with("**") && !code {
            out.push_str(if bold { "</strong>" } else { "<strong>" });
            bold = !bold;
            rest = &rest[i + 2..];
        } else {
            out.push('*');
            rest = &rest[i + 1..];
        }
    }
    out.push_str(rest);
    if code {
        out.push_str("</code>");
    }
    if bold {
        out.push_str("</strong>");
    }
    match out.strip_prefix('_').and_then(|o| o.strip_suffix('_')) {
        Some(em) => format!("<em>{em}</em>"),
        None => out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_spans_are_escaped_and_marked_up() {
        assert_eq!(
            inline("a `<b>` costs **1,000 tokens** & more"),
            "a <code>&lt;b&gt;</code> costs <strong>1,000 tokens</strong> &amp; more"
        );
        assert_eq!(inline("_note_"), "<em>note</em>");
        assert_eq!(inline("2 * 3"), "2 * 3");
    }
}
