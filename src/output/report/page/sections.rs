//! The sections of the report page, each a list of blocks built from the report's numbers:
//! schema tax per server, the most expensive tools, the probes, client limits, findings and
//! skipped config entries.

use super::summary::Summary;
use super::{Block, Table};
use crate::ground::units::{thousands, usd};
use crate::measure::facts::{LimitVerdict, ProbeResult, ProbeStatus, Report, ServerReport, Status};
use crate::output::report::charts::ChartKind;

/// Schema tax per server: the table (with prices and the other tokenizers when there are any)
/// and its chart.
pub(super) fn schema_tax(report: &Report, out: &mut Vec<Block>) {
    out.push(Block::Heading("Schema tax per server".into()));
    let priced = report.pricing.as_ref();
    let mut cols = vec![
        ("server", false, false),
        ("status", false, false),
        ("tools", true, false),
        ("schema tokens/turn", true, false),
        ("wire tokens", true, false),
    ];
    if let Some(p) = priced {
        out.push(super::para(format!(
            "Prices: {} at ${}/Mtok input and ${}/Mtok cached input, counted with {} (source: {}, {}).",
            p.model,
            p.input_usd_per_mtok,
            p.cached_input_usd_per_mtok,
            p.tokenizer,
            p.source,
            if p.as_of.is_empty() { "no date" } else { &p.as_of }
        )));
        cols.extend([
            ("$/turn", true, false),
            ("$/1k turns", true, false),
            ("$/1k turns cached", true, false),
        ]);
    }
    let others = report.other_tokenizers();
    let other_headers: Vec<String> = others
        .iter()
        .map(|o| {
            if o.starts_with("claude") {
                format!(
                    "{o} tokens/turn (estimate x{})",
                    crate::ground::tokens::DEFAULT_CLAUDE_FACTOR
                )
            } else {
                format!("{o} tokens/turn")
            }
        })
        .collect();
    for h in &other_headers {
        cols.push((h.as_str(), true, false));
    }
    let mut t = Table::new(&cols);
    t.rows = report
        .servers
        .iter()
        .map(|s| server_row(s, priced.is_some(), &others))
        .collect();
    out.push(Block::Table(t));
    out.push(Block::Chart(ChartKind::SchemaTax));
}

/// One server's row: name, status, tokens, prices when `priced`, then the other tokenizers.
fn server_row(s: &ServerReport, priced: bool, others: &[String]) -> Vec<String> {
    let mut cells = vec![
        s.name.clone(),
        match s.status {
            Status::Ok => "ok".into(),
            Status::Error => format!("error: {}", s.error.as_deref().unwrap_or("")),
        },
        s.tools_list.tool_count.to_string(),
        thousands(s.tools_list.model_tokens),
        thousands(s.tools_list.wire_tokens),
    ];
    if priced {
        match &s.cost {
            Some(c) => cells.extend([
                usd(c.usd_per_turn),
                usd(c.usd_per_1k_turns),
                usd(c.usd_per_1k_turns_cached),
            ]),
            None => cells.extend(["-".into(), "-".into(), "-".into()]),
        }
    }
    for o in others {
        cells.push(
            s.by_tokenizer
                .get(o)
                .map_or("-".into(), |t| thousands(t.tools_model_tokens)),
        );
    }
    cells
}

/// The fifteen most expensive tools and their chart.
pub(super) fn top_tools(report: &Report, out: &mut Vec<Block>) {
    out.push(Block::Heading("Most expensive tools".into()));
    let mut tools: Vec<(&str, &crate::measure::facts::ToolCost)> = report
        .servers
        .iter()
        .flat_map(|s| s.tools.iter().map(move |t| (s.name.as_str(), t)))
        .collect();
    tools.sort_by(|a, b| {
        b.1.model_tokens
            .cmp(&a.1.model_tokens)
            .then(a.1.name.cmp(&b.1.name))
    });
    let mut t = Table::new(&[
        ("server", false, false),
        ("tool", false, true),
        ("tokens", true, false),
        ("description", true, false),
        ("input schema", true, false),
        ("output schema", true, false),
        ("other", true, false),
    ]);
    for (server, tool) in tools.iter().take(15) {
        t.rows.push(vec![
            server.to_string(),
            tool.name.clone(),
            thousands(tool.model_tokens),
            thousands(tool.description_tokens),
            thousands(tool.input_schema_tokens),
            thousands(tool.output_schema_tokens),
            thousands(
                tool.annotations_tokens
                    + tool.title_tokens
                    + tool.icons_tokens
                    + tool.meta_tokens
                    + tool.other_tokens,
            ),
        ]);
    }
    out.push(Block::Table(t));
    out.push(Block::Chart(ChartKind::TopTools));
}

/// Every probe with the server it ran on, in report order.
fn all_probes(report: &Report) -> Vec<(&str, &ProbeResult)> {
    report
        .servers
        .iter()
        .flat_map(|s| s.probes.iter().map(move |p| (s.name.as_str(), p)))
        .collect()
}

/// Raw and budgeted results of every probe, and their charts; nothing without probes.
pub(super) fn probes(report: &Report, out: &mut Vec<Block>) {
    let priced = report.pricing.as_ref();
    let probes = all_probes(report);
    if !probes.is_empty() {
        out.push(Block::Heading("Probe results: raw and budgeted".into()));
        out.push(super::para(
            "Raw and budgeted count the same thing: the content and `structuredContent` as a client that shows both pays (images at their pixel cost). Wire sizes are the JSON-RPC `result` member as the server sent it. Fill is the share of the budget a result over it is sent; items kept, the whole items of the largest list the engine cut.",
        ));
        let mut cols = vec![
            ("server", false, false),
            ("tool", false, true),
            ("status", false, false),
            ("raw tokens", true, false),
            ("budgeted", true, false),
            ("fill", true, false),
            ("items kept", true, false),
            ("strategy", false, false),
            ("clients over a limit (raw)", false, false),
            ("clients over a limit (budgeted)", false, false),
            ("upstream ms", true, false),
            ("engine ms", true, false),
        ];
        if priced.is_some() {
            cols.extend([("$ raw", true, false), ("$ budgeted", true, false)]);
        }
        let mut t = Table::new(&cols);
        for (server, p) in &probes {
            let status = match (&p.error, p.status) {
                (Some(e), ProbeStatus::ToolError) => format!("tool error: {e}"),
                (Some(e), _) => format!("error: {e}"),
                (None, s) => format!("{s:?}").to_lowercase(),
            };
            let b = p.budgeted.as_ref();
            let mut cells = vec![
                server.to_string(),
                p.name(),
                status,
                p.raw
                    .as_ref()
                    .map_or("-".into(), |r| thousands(r.model_tokens)),
                b.map_or("-".into(), |b| thousands(b.tokens)),
                b.and_then(|b| b.fill)
                    .map_or("-".into(), |f| format!("{:.0}%", f * 100.0)),
                b.and_then(|b| b.items.as_ref()).map_or("-".into(), |i| {
                    format!("{} of {}", thousands(i.whole), thousands(i.total))
                }),
                b.map_or("-".into(), |b| b.strategy.clone()),
                verdicts(&p.limits, false),
                verdicts(&p.limits, true),
                format!("{:.1}", p.latency_ms),
                b.map_or("-".into(), |b| {
                    format!("{:.2}", b.engine_us as f64 / 1000.0)
                }),
            ];
            if priced.is_some() {
                match &p.cost {
                    Some(c) => {
                        cells.extend([usd(c.raw_usd), c.budgeted_usd.map_or("-".into(), usd)])
                    }
                    None => cells.extend(["-".into(), "-".into()]),
                }
            }
            t.rows.push(cells);
        }
        out.push(Block::Table(t));
        out.extend(super::engine_time_note(report).map(super::para));
        out.push(Block::Chart(ChartKind::ProbeTokens));
        out.push(Block::Chart(ChartKind::ProbeLatency));
    }
}

/// The clients whose limits a result breaks (the "Results over a client limit" table says which).
fn verdicts(limits: &[LimitVerdict], budgeted: bool) -> String {
    let mut clients: Vec<&str> = Vec::new();
    for l in limits {
        let over = if budgeted {
            l.budgeted_exceeded == Some(true)
        } else {
            l.exceeded
        };
        if over && !clients.contains(&l.client.as_str()) {
            clients.push(&l.client);
        }
    }
    if clients.is_empty() {
        "none".into()
    } else {
        clients.join(", ")
    }
}

/// The client limits of all servers together, and each result over a client's limit.
pub(super) fn client_limits(report: &Report, summary: &Summary, out: &mut Vec<Block>) {
    let probes = all_probes(report);
    out.push(Block::Heading("Client limits".into()));
    out.push(super::para(format!(
        "All audited servers together mount {} tools ({} schema tokens per turn).",
        summary.tools,
        thousands(summary.schema_tokens)
    )));
    let mut t = Table::new(&[
        ("client", false, false),
        ("limit", false, false),
        ("all servers", true, false),
        ("verdict", false, false),
    ]);
    for l in &report.limits {
        t.rows.push(vec![
            l.client.clone(),
            l.limit.clone(),
            thousands(l.value as usize),
            if l.exceeded { "exceeded" } else { "ok" }.into(),
        ]);
    }
    out.push(Block::Table(t));
    let mut per_probe: Vec<(&str, String, &LimitVerdict)> = probes
        .iter()
        .flat_map(|(s, p)| p.limits.iter().map(move |l| (*s, p.name(), l)))
        .filter(|(_, _, l)| l.exceeded)
        .collect();
    per_probe.sort_by_key(|(_, _, l)| std::cmp::Reverse(l.value));
    if !per_probe.is_empty() {
        out.push(super::para(
            "Results over a client limit, as sent and after the budget engine:",
        ));
        let mut t = Table::new(&[
            ("server", false, false),
            ("tool", false, true),
            ("client", false, false),
            ("limit", false, false),
            ("raw", true, false),
            ("budgeted", true, false),
        ]);
        for (s, tool, l) in per_probe {
            t.rows.push(vec![
                s.to_string(),
                tool.to_string(),
                l.client.clone(),
                l.limit.clone(),
                thousands(l.value as usize),
                match (l.budgeted_value, l.budgeted_exceeded) {
                    (Some(v), Some(true)) => format!("{} (still over)", thousands(v as usize)),
                    (Some(v), _) => format!("{} (fits)", thousands(v as usize)),
                    _ => "-".into(),
                },
            ]);
        }
        out.push(Block::Table(t));
    }
}

/// The design checks' findings, errors first.
pub(super) fn findings(report: &Report, out: &mut Vec<Block>) {
    out.push(Block::Heading("Findings".into()));
    let mut findings: Vec<(&str, &crate::measure::facts::Finding)> = report
        .servers
        .iter()
        .flat_map(|s| s.findings.iter().map(move |f| (s.name.as_str(), f)))
        .collect();
    if findings.is_empty() {
        out.push(super::para("No design check failed."));
    } else {
        let rank = |s: &str| match s {
            "error" => 0,
            "warning" => 1,
            _ => 2,
        };
        findings.sort_by_key(|(_, f)| rank(&f.severity));
        let mut t = Table::new(&[
            ("severity", false, false),
            ("rule", false, true),
            ("server", false, false),
            ("tool", false, true),
            ("finding", false, false),
            ("saves per turn", true, false),
            ("fix", false, false),
        ]);
        for (s, f) in findings {
            t.rows.push(vec![
                f.severity.clone(),
                f.rule.clone(),
                s.to_string(),
                f.tool.clone().unwrap_or_else(|| "-".into()),
                f.message.clone(),
                saves(f),
                f.fix.clone(),
            ]);
        }
        out.push(Block::Table(t));
        out.push(super::para(
            "`mcp-budget audit --explain RULE` says what a rule checks and why.",
        ));
    }
    let scored: Vec<_> = report
        .servers
        .iter()
        .filter_map(|s| s.schema_score.as_ref().map(|c| (s, c)))
        .collect();
    if !scored.is_empty() {
        let mut p = super::Spans::default();
        p.own("Schema score (0-100, defined in the README): ");
        for (i, (s, c)) in scored.into_iter().enumerate() {
            if i > 0 {
                p.own("; ");
            }
            p.text(&s.name).own(&format!(
                " {} ({}), {} of {} schema tokens per turn recoverable",
                c.score,
                c.grade,
                thousands(c.recoverable_tokens),
                thousands(c.schema_tokens)
            ));
        }
        p.own(".");
        out.push(Block::Para(p.0));
    }
}

/// What a finding's fix saves: tokens per turn, or on the wire only, or `-`.
pub(crate) fn saves(f: &crate::measure::facts::Finding) -> String {
    match (f.saves_tokens, f.saves_wire_tokens) {
        (Some(t), _) if t > 0 => thousands(t),
        (_, Some(w)) => format!("{} (wire)", thousands(w)),
        (Some(0), None) => "0".into(),
        _ => "-".into(),
    }
}

/// Config entries that were skipped, when there are any.
pub(super) fn config_errors(report: &Report, out: &mut Vec<Block>) {
    if !report.config_errors.is_empty() {
        out.push(Block::Heading("Config entries skipped".into()));
        let mut t = Table::new(&[
            ("file", false, false),
            ("key", false, true),
            ("error", false, false),
        ]);
        for e in &report.config_errors {
            t.rows
                .push(vec![e.file.clone(), e.key.clone(), e.message.clone()]);
        }
        out.push(Block::Table(t));
    }
}
