//! The terminal summary: servers, the most expensive tools, and the probes.

use comfy_table::{Cell, CellAlignment, Table};

use super::grid::{grid, Fit};
use crate::facts::{ProbeStatus, Report, Status};
use crate::text::{cell_preview, char_count, lines, one_line};
use crate::units::{micros_as_ms, thousands, usd};

/// Tools shown in the "most expensive tools" table.
const TOP_TOOLS: usize = 10;

/// Write the summary. `width` fixes the table width (deterministic output when not a terminal).
pub(crate) fn write_table(
    report: &Report,
    width: Option<u16>,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    out.write_all(summary(report, width).as_bytes())
}

fn summary(report: &Report, width: Option<u16>) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "Schema tax per server ({})\n",
        report.tokenizers.join(", ")
    ));
    out.push_str(&servers(report, width).to_string());
    out.push('\n');
    let tools = top_tools(report, width);
    if tools.row_count() > 0 {
        out.push_str(&format!(
            "\nMost expensive tools (top {TOP_TOOLS}, tokens per turn)\n"
        ));
        out.push_str(&tools.to_string());
        out.push('\n');
    }
    let probes = probes(report, width);
    if probes.row_count() > 0 {
        out.push_str("\nProbe results (tokens of one call)\n");
        out.push_str(&probes.to_string());
        out.push('\n');
        if let Some(note) = super::page::engine_time_note(report) {
            out.push_str(&note);
            out.push('\n');
        }
    }
    let clients = clients(report, width);
    if clients.row_count() > 0 {
        out.push_str("\nWhat each client sees (tool definitions per turn; probe results, as sent -> after the engine with the client's limits)\n");
        out.push_str(&clients.to_string());
        out.push('\n');
        out.push_str("* unconfirmed: a rule behind the row has no primary source (see audit.json `clients`).\n");
        if let Some(text) = crate::assess::clients::measured_profiles_text(report) {
            out.push_str(&text);
            out.push('\n');
        }
        if let Some(text) = crate::assess::clients::model_tokenizers_text(report) {
            out.push_str(&text);
            out.push('\n');
        }
    }
    if let Some(p) = &report.pricing {
        let ok = report.servers.iter().filter_map(|s| s.cost.as_ref());
        let (per_1k, cached) = ok.fold((0.0, 0.0), |(a, b), c| {
            (a + c.usd_per_1k_turns, b + c.usd_per_1k_turns_cached)
        });
        out.push_str(&format!(
            "\nSchema tax on {}: {} per 1,000 turns, {} with prompt caching ({}).\n",
            p.model,
            usd(per_1k),
            usd(cached),
            p.tokenizer
        ));
    }
    let findings: Vec<(&str, &crate::facts::Finding)> = report
        .servers
        .iter()
        .flat_map(|s| s.findings.iter().map(move |f| (s.name.as_str(), f)))
        .collect();
    if !findings.is_empty() {
        out.push_str(&format!("\nFindings ({})\n", findings.len()));
        for (server, f) in findings {
            let tool = f.tool.as_deref().map_or(String::new(), |t| format!("/{t}"));
            // the definition rules' messages say what they save; the others get it added
            let saves = match super::page::saves(f).as_str() {
                "-" | "0" => String::new(),
                _ if f.message.contains("save") => String::new(),
                s => format!(" (saves {s})"),
            };
            out.push_str(&format!(
                "  {:<7} {}: {}{saves} [{}]\n",
                f.severity,
                one_line(&format!("{server}{tool}")),
                lines(&f.message),
                f.rule
            ));
        }
    }
    for s in &report.servers {
        if let Some(c) = &s.schema_score {
            out.push_str(&format!(
                "Schema score of {}: {} ({}); {} of {} schema tokens per turn recoverable\n",
                one_line(&s.name),
                c.score,
                c.grade,
                thousands(c.recoverable_tokens),
                thousands(c.schema_tokens)
            ));
        }
    }
    for e in &report.config_errors {
        out.push_str(&format!(
            "skipped config entry {}: `{}`: {}\n",
            one_line(&e.file),
            one_line(&e.key),
            lines(&e.message)
        ));
    }
    out
}

fn table(width: Option<u16>, header: &[&str]) -> Table {
    let mut t = grid(Fit::Wrap(width));
    t.set_header(header.iter().map(Cell::new));
    t
}

/// Characters of a text cell shown at most: a table's layout time grows faster than a cell's
/// length, and a terminal shows a preview (audit.json keeps the whole text).
const CELL_CHARS: usize = 200;

/// A cell of text that came from a server or a file: cut to a preview, control and format
/// characters escaped.
fn text(s: &str) -> Cell {
    Cell::new(one_line(&cell_preview(s, CELL_CHARS, "audit.json")))
}

fn num(n: usize) -> Cell {
    Cell::new(thousands(n)).set_alignment(CellAlignment::Right)
}

fn servers(report: &Report, width: Option<u16>) -> Table {
    let others = report.other_tokenizers();
    let mut header = vec!["server", "status", "tools", "schema tokens"];
    let extra: Vec<String> = others.iter().map(|n| format!("schema ({n})")).collect();
    header.extend(extra.iter().map(String::as_str));
    header.extend(["wire tokens", "instructions", "largest tool"]);
    let mut t = table(width, &header);
    let mut rows: Vec<_> = report.servers.iter().collect();
    rows.sort_by(|a, b| {
        b.tools_list
            .model_tokens
            .cmp(&a.tools_list.model_tokens)
            .then(a.name.cmp(&b.name))
    });
    for s in rows {
        let status = match (&s.status, &s.error) {
            (Status::Ok, _) => "ok".to_string(),
            (Status::Error, Some(e)) => format!("error: {}", first_line(e)),
            (Status::Error, None) => "error".to_string(),
        };
        let mut cells = vec![
            text(&s.name),
            Cell::new(one_line(&status)),
            num(s.tools_list.tool_count),
            num(s.tools_list.model_tokens),
        ];
        cells.extend(
            others
                .iter()
                .map(|n| num(s.by_tokenizer.get(n).map_or(0, |t| t.tools_model_tokens))),
        );
        let largest = s
            .largest_tool()
            .map(|t| format!("{} ({})", t.name, thousands(t.model_tokens)))
            .unwrap_or_default();
        cells.extend([
            num(s.tools_list.wire_tokens),
            num(s.instructions_tokens),
            text(&largest),
        ]);
        t.add_row(cells);
    }
    t
}

fn top_tools(report: &Report, width: Option<u16>) -> Table {
    let mut t = table(
        width,
        &[
            "server",
            "tool",
            "tokens",
            "description",
            "input schema",
            "other fields",
        ],
    );
    let mut all: Vec<_> = report
        .servers
        .iter()
        .flat_map(|s| s.tools.iter().map(move |tool| (s, tool)))
        .collect();
    all.sort_by(|a, b| {
        b.1.model_tokens
            .cmp(&a.1.model_tokens)
            .then(a.0.name.cmp(&b.0.name))
            .then(a.1.name.cmp(&b.1.name))
    });
    for (s, tool) in all.into_iter().take(TOP_TOOLS) {
        let other = tool.output_schema_tokens
            + tool.annotations_tokens
            + tool.title_tokens
            + tool.icons_tokens
            + tool.meta_tokens
            + tool.other_tokens;
        t.add_row(vec![
            text(&s.name),
            text(&tool.name),
            num(tool.model_tokens),
            num(tool.description_tokens),
            num(tool.input_schema_tokens),
            num(other),
        ]);
    }
    t
}

fn probes(report: &Report, width: Option<u16>) -> Table {
    let header = [
        "server",
        "tool",
        "status",
        "wire",
        "model",
        "structured",
        "blocks",
        "latency",
        "budgeted",
        "fill",
        "strategy",
        "engine",
    ];
    let mut t = table(width, &header);
    for s in &report.servers {
        for p in &s.probes {
            let raw = p.raw.clone().unwrap_or_default();
            let status = match p.status {
                ProbeStatus::Ok => "ok".to_string(),
                ProbeStatus::ToolError => match p.error.as_deref() {
                    Some(e) => format!("tool error: {}", first_line(e)),
                    None => "tool error".to_string(),
                },
                ProbeStatus::Error => {
                    format!("error: {}", first_line(p.error.as_deref().unwrap_or("")))
                }
            };
            let structured = match (raw.structured_tokens, raw.structured_duplicate) {
                (0, _) => String::new(),
                (n, true) => format!("{} dup", thousands(n)),
                (n, false) => thousands(n),
            };
            let b = p.budgeted.as_ref();
            t.add_row(vec![
                text(&s.name),
                text(&p.name()),
                Cell::new(one_line(&status)),
                num(raw.wire_tokens),
                num(raw.model_tokens),
                Cell::new(structured).set_alignment(CellAlignment::Right),
                Cell::new(raw.block_summary()),
                Cell::new(format!("{:.0} ms", p.latency_ms)).set_alignment(CellAlignment::Right),
                b.map_or(Cell::new(""), |b| num(b.tokens)),
                Cell::new(
                    b.and_then(|b| b.fill)
                        .map_or(String::new(), |f| format!("{:.0}%", f * 100.0)),
                )
                .set_alignment(CellAlignment::Right),
                text(b.map_or("", |b| b.strategy.as_str())),
                Cell::new(b.map_or(String::new(), |b| micros_as_ms(b.engine_us)))
                    .set_alignment(CellAlignment::Right),
            ]);
        }
    }
    t
}

fn clients(report: &Report, width: Option<u16>) -> Table {
    let priced = report.pricing.is_some();
    let mut header = vec!["client", "definitions", "tokens/turn"];
    if priced {
        header.push("$/1k turns");
    }
    header.extend(["results cut", "result tokens"]);
    let mut t = table(width, &header);
    for c in crate::assess::clients::client_totals(report) {
        let arrow = |raw: String, budgeted: Option<String>| match budgeted {
            Some(b) => format!("{raw} -> {b}"),
            None => raw,
        };
        let mut cells = vec![
            text(&crate::assess::clients::client_label(&c)),
            text(&crate::assess::clients::definitions_text(&c)),
            num(c.schema_tokens),
        ];
        if priced {
            let dollars = c.usd_per_1k_turns.map_or(String::new(), usd);
            cells.push(Cell::new(dollars).set_alignment(CellAlignment::Right));
        }
        cells.extend([
            Cell::new(arrow(
                crate::assess::clients::cut_text(c.raw_cut, c.results),
                c.budgeted_cut
                    .map(|b| crate::assess::clients::cut_text(b, c.results)),
            )),
            Cell::new(arrow(
                thousands(c.raw_tokens),
                c.budgeted_tokens.map(thousands),
            ))
            .set_alignment(CellAlignment::Right),
        ]);
        t.add_row(cells);
    }
    t
}

/// The first non-empty line of a message, and when more follows how much and where (the JSON,
/// CSV and Markdown outputs keep more; audit.json all of it).
fn first_line(message: &str) -> String {
    let message = message.trim();
    let first = message.lines().next().unwrap_or("").trim_end();
    let shown = match first.char_indices().nth(CELL_CHARS) {
        Some((at, _)) => &first[..at],
        None => first,
    };
    let rest = &message[shown.len()..];
    if rest.trim().is_empty() {
        return shown.to_string();
    }
    format!(
        "{shown} …({} more characters in audit.json)",
        thousands(char_count(rest))
    )
}
