//! The terminal summary: servers, the most expensive tools, and the probes.

use super::fit::{wrap_prose, Column, Fitted};
use crate::ground::text::{cell_preview, char_count, lines, one_line};
use crate::ground::units::{micros_as_ms, thousands, usd};
use crate::measure::facts::{ProbeStatus, Report, Status};

/// Tools shown in the "most expensive tools" table.
const TOP_TOOLS: usize = 10;

/// Write the summary. `width` fixes the table width (deterministic output when not a terminal).
pub(crate) fn write_table(
    report: &Report,
    width: Option<u16>,
    wrap: bool,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    out.write_all(summary(report, width, wrap).as_bytes())
}

fn summary(report: &Report, width: Option<u16>, wrap: bool) -> String {
    // the width prose wraps to: the table's (given, else the terminal's), where asked
    let wrap_at = wrap
        .then(|| width.or_else(super::fit::terminal_width))
        .flatten();
    let say = |out: &mut String, text: &str, hang: usize| {
        out.push_str(&wrap_prose(text, wrap_at, hang));
        out.push('\n');
    };
    let mut out = String::new();
    out.push_str(&format!(
        "Schema tax per server ({})\n",
        report.tokenizers.join(", ")
    ));
    out.push_str(&servers(report).shown(width, wrap_at, "servers.csv and audit.json"));
    let tools = top_tools(report);
    if !tools.is_empty() {
        out.push_str(&format!(
            "\nMost expensive tools (top {TOP_TOOLS}, tokens per turn)\n"
        ));
        out.push_str(&tools.shown(width, wrap_at, "tools.csv and audit.json"));
    }
    let probes = probes(report);
    if !probes.is_empty() {
        out.push_str("\nProbe results (tokens of one call)\n");
        out.push_str(&probes.shown(width, wrap_at, "probes.csv and audit.json"));
        if let Some(note) = super::page::engine_time_note(report) {
            say(&mut out, &note, 0);
        }
    }
    let clients = clients(report);
    if !clients.is_empty() {
        out.push('\n');
        say(&mut out, "What each client sees (tool definitions per turn; probe results, as sent -> after the engine with the client's limits)", 0);
        out.push_str(&clients.shown(width, wrap_at, "clients.csv and audit.json"));
        say(
            &mut out,
            "* unconfirmed: a rule behind the row has no primary source (see audit.json `clients`).",
            2,
        );
        let still = crate::judge::assess::clients::still_cut(report);
        if !still.is_empty() {
            let each: Vec<String> = still
                .iter()
                .map(|c| format!("{} ({})", one_line(&c.call), c.how()))
                .collect();
            say(
                &mut out,
                &format!("Still cut after the engine: {}.", each.join("; ")),
                0,
            );
        }
        if let Some(text) = crate::judge::assess::clients::measured_profiles_text(report) {
            say(&mut out, &text, 0);
        }
        if let Some(text) = crate::judge::assess::clients::model_tokenizers_text(report) {
            say(&mut out, &text, 0);
        }
    }
    if let Some(p) = &report.pricing {
        let ok = report.servers.iter().filter_map(|s| s.cost.as_ref());
        let (per_1k, cached) = ok.fold((0.0, 0.0), |(a, b), c| {
            (a + c.usd_per_1k_turns, b + c.usd_per_1k_turns_cached)
        });
        out.push('\n');
        let line = format!(
            "Schema tax on {}: {} per 1,000 turns, {} with prompt caching ({}).",
            p.model,
            usd(per_1k),
            usd(cached),
            p.tokenizer
        );
        say(&mut out, &line, 0);
    }
    let findings: Vec<(&str, &crate::measure::facts::Finding)> = report
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
            let line = format!(
                "  {:<7} {}: {}{saves} [{}]",
                f.severity,
                one_line(&format!("{server}{tool}")),
                lines(&f.message),
                f.rule
            );
            say(&mut out, &line, 10);
        }
    }
    for s in &report.servers {
        if let Some(c) = &s.schema_score {
            let line = format!(
                "Schema score of {}: {} ({}); {} of {} schema tokens per turn recoverable",
                one_line(&s.name),
                c.score,
                c.grade,
                thousands(c.recoverable_tokens),
                thousands(c.schema_tokens)
            );
            say(&mut out, &line, 2);
        }
    }
    for e in &report.config_errors {
        let line = format!(
            "skipped config entry {}: `{}`: {}",
            one_line(&e.file),
            one_line(&e.key),
            lines(&e.message)
        );
        say(&mut out, &line, 2);
    }
    out
}

/// Characters of a text cell shown at most: a table's layout time grows faster than a cell's
/// length, and a terminal shows a preview (audit.json keeps the whole text).
const CELL_CHARS: usize = 200;

/// A cell of text that came from a server or a file: cut to a preview, control and format
/// characters escaped.
fn text(s: &str) -> String {
    one_line(&cell_preview(s, CELL_CHARS, "audit.json")).into_owned()
}

fn num(n: usize) -> String {
    thousands(n)
}

/// The rank of a server column: one server says nothing a row needs.
fn server_rank(report: &Report) -> u8 {
    if report.servers.len() > 1 {
        1
    } else {
        3
    }
}

fn servers(report: &Report) -> Fitted {
    let others = report.other_tokenizers();
    let mut columns = vec![
        Column::text("server", 8, 0),
        Column::text("status", 6, 0),
        Column::num("tools", 1),
        Column::num("schema tokens", 0),
    ];
    columns.extend(
        others
            .iter()
            .map(|n| Column::num(&format!("schema ({n})"), 3)),
    );
    columns.extend([
        Column::num("wire tokens", 2),
        Column::num("instructions", 3),
        Column::text("largest tool", 12, 2),
    ]);
    let mut t = Fitted::new(columns);
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
            one_line(&status).into_owned(),
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
        t.row(cells);
    }
    t
}

fn top_tools(report: &Report) -> Fitted {
    let mut t = Fitted::new(vec![
        Column::text("server", 6, server_rank(report) + 1),
        Column::text("tool", 12, 0),
        Column::num("tokens", 0),
        Column::num("description", 1),
        Column::num("input schema", 1),
        Column::num("other fields", 2),
    ]);
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
        t.row(vec![
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

fn probes(report: &Report) -> Fitted {
    let mut t = Fitted::new(vec![
        Column::text("server", 6, server_rank(report)),
        Column::text("tool", 12, 0),
        Column::text("status", 6, 0),
        Column::num("wire", 1),
        Column::num("model", 0),
        Column::num("structured", 3),
        Column::text("blocks", 6, 3),
        Column::num("latency", 4),
        Column::num("budgeted", 0),
        Column::num("fill", 1),
        Column::text("strategy", 8, 2),
        Column::num("engine", 4),
    ]);
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
            t.row(vec![
                text(&s.name),
                text(&p.name()),
                one_line(&status).into_owned(),
                num(raw.wire_tokens),
                num(raw.model_tokens),
                structured,
                raw.block_summary(),
                format!("{:.0} ms", p.latency_ms),
                b.map_or(String::new(), |b| num(b.tokens)),
                b.and_then(|b| b.fill)
                    .map_or(String::new(), |f| format!("{:.0}%", f * 100.0)),
                text(b.map_or("", |b| b.strategy.as_str())),
                b.map_or(String::new(), |b| micros_as_ms(b.engine_us)),
            ]);
        }
    }
    t
}

fn clients(report: &Report) -> Fitted {
    let priced = report.pricing.is_some();
    let mut columns = vec![
        Column::text("client", 10, 0),
        Column::text("definitions", 10, 2),
        Column::num("tokens/turn", 0),
    ];
    if priced {
        columns.push(Column::num("$/1k turns", 1));
    }
    let totals = crate::judge::assess::clients::client_totals(report);
    // "6/10 -> 1/10": counts the width never cuts (a column with less room goes first)
    let ratio = |n: usize, of: usize| format!("{n}/{of}");
    let cut_cells: Vec<String> = totals
        .iter()
        .map(|c| match c.budgeted_cut {
            Some(b) => format!("{} -> {}", ratio(c.raw_cut, c.results), ratio(b, c.results)),
            None => ratio(c.raw_cut, c.results),
        })
        .collect();
    let widest = cut_cells.iter().map(|c| c.len()).max().unwrap_or(0);
    columns.extend([
        Column::text("results cut", widest, 1),
        Column::num("result tokens", 0),
    ]);
    let mut t = Fitted::new(columns);
    for (c, cut) in totals.into_iter().zip(cut_cells) {
        let arrow = |raw: String, budgeted: Option<String>| match budgeted {
            Some(b) => format!("{raw} -> {b}"),
            None => raw,
        };
        let mut cells = vec![
            text(&crate::judge::assess::clients::client_label(&c)),
            text(&crate::judge::assess::clients::definitions_text(&c)),
            num(c.schema_tokens),
        ];
        if priced {
            cells.push(c.usd_per_1k_turns.map_or(String::new(), usd));
        }
        cells.extend([
            cut,
            arrow(thousands(c.raw_tokens), c.budgeted_tokens.map(thousands)),
        ]);
        t.row(cells);
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
