//! report.html: one self-contained page (inline CSS, inline SVG charts, a few lines of inline
//! script to sort tables; nothing loaded from the network), from the same blocks as report.md.

use std::fmt::Write as _;

use super::markdown::{blocks, Block};
use super::model::Report;

const STYLE: &str = r#"
:root { --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --head: #f6f8fa; --accent: #4C78A8; }
* { box-sizing: border-box; }
body { font: 15px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
       max-width: 1180px; margin: 2rem auto; padding: 0 1.25rem; }
h1 { font-size: 1.9rem; margin-bottom: .4rem; }
h2 { font-size: 1.3rem; margin-top: 2.2rem; border-bottom: 1px solid var(--line); padding-bottom: .3rem; }
p { max-width: 62rem; }
em { color: var(--muted); }
code { font: .9em ui-monospace, SFMono-Regular, Menlo, monospace; background: var(--head);
       padding: .1em .3em; border-radius: 4px; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: .8rem 0 1.2rem; font-size: .9rem; }
th, td { border: 1px solid var(--line); padding: .35rem .6rem; vertical-align: top; }
th { background: var(--head); text-align: left; cursor: pointer; user-select: none; white-space: nowrap; }
th[aria-sort="ascending"]::after { content: " \25B2"; color: var(--accent); }
th[aria-sort="descending"]::after { content: " \25BC"; color: var(--accent); }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr:nth-child(even) td { background: #fbfcfd; }
figure { margin: 1rem 0 1.6rem; }
figure svg { max-width: 100%; height: auto; border: 1px solid var(--line); border-radius: 6px; }
figcaption { color: var(--muted); font-size: .85rem; }
"#;

/// Sort a table by a header click: numbers by value (thousands separators and $ ignored).
const SCRIPT: &str = r#"
document.querySelectorAll("table.sortable th").forEach(function (th, col) {
  th.addEventListener("click", function () {
    var table = th.closest("table"), body = table.tBodies[0];
    var asc = th.getAttribute("aria-sort") !== "ascending";
    table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", asc ? "ascending" : "descending");
    var key = function (tr) {
      var t = tr.children[th.cellIndex].textContent.trim();
      var n = parseFloat(t.replace(/[$,]/g, ""));
      return isNaN(n) || !/^[$\d.,-]/.test(t) ? t.toLowerCase() : n;
    };
    Array.from(body.rows).sort(function (a, b) {
      var x = key(a), y = key(b);
      var c = typeof x === typeof y ? (x < y ? -1 : x > y ? 1 : 0) : (typeof x === "number" ? -1 : 1);
      return asc ? c : -c;
    }).forEach(function (tr) { body.appendChild(tr); });
  });
});
"#;

/// Escape text for HTML.
pub(crate) fn escape(text: &str) -> String {
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

/// Render report.html. `charts` holds (file stem, SVG text) of every chart to inline.
pub fn render_html(report: &Report, charts: &[(&str, String)]) -> String {
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(
        out,
        "<meta name=\"generator\" content=\"mcp-budget {}\">",
        escape(&report.tool_version)
    );
    out.push_str("<title>MCP token audit</title>\n<style>");
    out.push_str(STYLE);
    out.push_str("</style>\n</head>\n<body>\n");
    for b in blocks(report) {
        match b {
            Block::Title(t) => {
                let _ = writeln!(out, "<h1>{}</h1>", escape(&t));
            }
            Block::Heading(t) => {
                let _ = writeln!(out, "<h2>{}</h2>", escape(&t));
            }
            Block::Para(t) => {
                let _ = writeln!(out, "<p>{}</p>", inline(&t));
            }
            Block::Chart(stem, alt) => {
                if let Some((_, svg)) = charts.iter().find(|(s, _)| *s == stem) {
                    // the SVG's own XML declaration is not allowed inside HTML
                    let body = svg.find("<svg").map_or(svg.as_str(), |i| &svg[i..]);
                    let _ = writeln!(
                        out,
                        "<figure id=\"chart-{stem}\">{body}<figcaption>{}</figcaption></figure>",
                        escape(alt)
                    );
                }
            }
            Block::Table(t) => {
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
        }
    }
    out.push_str("<script>");
    out.push_str(SCRIPT);
    out.push_str("</script>\n</body>\n</html>\n");
    out
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
