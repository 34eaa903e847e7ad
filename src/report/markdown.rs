//! report.md: a blog-style write-up of an audit: a summary paragraph generated from the numbers,
//! the tables, the charts as images and the findings. Pure: the model in, text out.

use std::fmt::Write as _;

use super::charts::ChartKind;
use super::model::{LimitVerdict, ProbeResult, ProbeStatus, Report, ServerReport, Status};
use crate::units::{thousands, usd};

/// Facts the summary paragraph and the HTML page share.
pub(crate) struct Summary {
    pub servers_ok: usize,
    pub servers_failed: usize,
    pub tools: usize,
    pub schema_tokens: usize,
    pub probes: usize,
    pub over_cap_raw: usize,
    pub over_cap_budgeted: usize,
    pub findings: usize,
    pub text: String,
}

fn cap_exceeded(p: &ProbeResult, budgeted: bool) -> bool {
    p.limits.iter().any(|l| {
        l.client == "Claude Code"
            && l.effect == "cap"
            && if budgeted {
                l.budgeted_exceeded == Some(true)
            } else {
                l.exceeded
            }
    })
}

pub(crate) fn summarize(report: &Report) -> Summary {
    let ok: Vec<&ServerReport> = report
        .servers
        .iter()
        .filter(|s| s.status == Status::Ok)
        .collect();
    let probes: Vec<&ProbeResult> = report
        .servers
        .iter()
        .flat_map(|s| &s.probes)
        .filter(|p| p.raw.is_some())
        .collect();
    let mut s = Summary {
        servers_ok: ok.len(),
        servers_failed: report.servers.len() - ok.len(),
        tools: ok.iter().map(|s| s.tools_list.tool_count).sum(),
        schema_tokens: ok.iter().map(|s| s.tools_list.model_tokens).sum(),
        probes: probes.len(),
        over_cap_raw: probes.iter().filter(|p| cap_exceeded(p, false)).count(),
        over_cap_budgeted: probes.iter().filter(|p| cap_exceeded(p, true)).count(),
        findings: report.servers.iter().map(|s| s.findings.len()).sum(),
        text: String::new(),
    };
    let tokenizer = report
        .tokenizers
        .first()
        .map_or("cl100k_base", String::as_str);
    let mut t = format!(
        "{} server{} mount {} tools whose definitions cost **{} tokens on every turn** ({tokenizer})",
        s.servers_ok,
        if s.servers_ok == 1 { "" } else { "s" },
        s.tools,
        thousands(s.schema_tokens)
    );
    if let Some(p) = &report.pricing {
        let per_1k: f64 = ok
            .iter()
            .filter_map(|s| s.cost.as_ref())
            .map(|c| c.usd_per_1k_turns)
            .sum();
        let cached: f64 = ok
            .iter()
            .filter_map(|s| s.cost.as_ref())
            .map(|c| c.usd_per_1k_turns_cached)
            .sum();
        let _ = write!(
            t,
            ": {} per 1,000 turns on {}, {} with prompt caching",
            usd(per_1k),
            p.model,
            usd(cached)
        );
    }
    t.push('.');
    if let Some((server, tool)) = ok
        .iter()
        .flat_map(|s| s.tools.iter().map(move |t| (s, t)))
        .max_by_key(|(_, t)| t.model_tokens)
    {
        let _ = write!(
            t,
            " The most expensive tool is `{}/{}` at {} tokens.",
            cell(&server.name),
            cell(&tool.name),
            thousands(tool.model_tokens)
        );
    }
    if let Some(biggest) = probes
        .iter()
        .max_by_key(|p| p.raw.as_ref().map_or(0, |r| r.model_tokens))
    {
        let raw = biggest.raw.as_ref().map_or(0, |r| r.model_tokens);
        let _ = write!(
            t,
            " Of {} probe call{}, {} returned more than Claude Code's 25,000-token cap; the largest, `{}`, returned {} tokens",
            s.probes,
            if s.probes == 1 { "" } else { "s" },
            s.over_cap_raw,
            cell(&biggest.tool),
            thousands(raw)
        );
        match &biggest.budgeted {
            Some(b) if b.tokens < raw => {
                let _ = write!(
                    t,
                    ", which the budget engine cut to {} ({}) in {:.1} ms without losing data.",
                    thousands(b.tokens),
                    b.strategy,
                    b.engine_us as f64 / 1000.0
                );
            }
            _ => t.push('.'),
        }
        if s.over_cap_budgeted == 0 && s.over_cap_raw > 0 {
            t.push_str(" After the engine, no result is over the cap.");
        }
    }
    if s.servers_failed > 0 {
        let _ = write!(
            t,
            " {} server{} could not be audited.",
            s.servers_failed,
            if s.servers_failed == 1 { "" } else { "s" }
        );
    }
    if s.findings > 0 {
        let _ = write!(
            t,
            " The design checks raised {} finding{}.",
            s.findings,
            if s.findings == 1 { "" } else { "s" }
        );
    }
    s.text = t;
    s
}

/// Escape text for a Markdown table cell.
fn cell(text: &str) -> String {
    crate::text::markdown_cell(text)
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

/// One piece of the report page, rendered by the Markdown and the HTML writers alike.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Block {
    Title(String),
    Heading(String),
    /// Text with `code` and **bold** spans.
    Para(String),
    Table(Table),
    /// A chart by file stem, with its alt text.
    Chart(&'static str, &'static str),
}

/// A table of plain-text cells; `code` columns hold identifiers.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Table {
    pub headers: Vec<String>,
    pub right: Vec<bool>,
    pub code: Vec<bool>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    fn new(cols: &[(&str, bool, bool)]) -> Self {
        Table {
            headers: cols.iter().map(|c| c.0.to_string()).collect(),
            right: cols.iter().map(|c| c.1).collect(),
            code: cols.iter().map(|c| c.2).collect(),
            rows: Vec::new(),
        }
    }
}

/// Render report.md. `charts` lists the chart file stems written beside it (under charts/).
pub fn render_markdown(report: &Report, charts: &[&str]) -> String {
    let mut out = String::new();
    for b in blocks(report) {
        match b {
            Block::Title(t) => {
                let _ = writeln!(out, "# {}\n", crate::text::one_line(&t));
            }
            Block::Heading(t) => {
                let _ = writeln!(out, "## {}\n", crate::text::one_line(&t));
            }
            Block::Para(t) => {
                let _ = writeln!(out, "{}\n", crate::text::lines(&t));
            }
            Block::Chart(stem, alt) => {
                if charts.contains(&stem) {
                    let _ = writeln!(out, "![{alt}](charts/{stem}.svg)\n");
                }
            }
            Block::Table(t) => {
                header(
                    &mut out,
                    &t.headers.iter().map(String::as_str).collect::<Vec<_>>(),
                    &t.right,
                );
                for r in &t.rows {
                    let cells: Vec<String> = r
                        .iter()
                        .zip(&t.code)
                        .map(|(c, code)| {
                            if *code && c != "-" {
                                format!("`{}`", cell(c))
                            } else {
                                cell(c)
                            }
                        })
                        .collect();
                    row(&mut out, &cells);
                }
                out.push('\n');
            }
        }
    }
    out
}

/// The report as blocks.
pub(crate) fn blocks(report: &Report) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    let summary = summarize(report);
    out.push(Block::Title("MCP token audit".into()));
    out.push(Block::Para(summary.text.clone()));
    out.push(Block::Para(format!(
        "_Generated by mcp-budget {} on {}. Tokenizers: {}._",
        report.tool_version,
        report.generated_at,
        report.tokenizers.join(", ")
    )));
    let chart = |out: &mut Vec<Block>, kind: ChartKind| {
        out.push(Block::Chart(kind.file_stem(), kind.title()));
    };

    // servers
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
        out.push(Block::Para(format!(
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
                    crate::tokens::DEFAULT_CLAUDE_FACTOR
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
    for s in &report.servers {
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
        if priced.is_some() {
            match &s.cost {
                Some(c) => cells.extend([
                    usd(c.usd_per_turn),
                    usd(c.usd_per_1k_turns),
                    usd(c.usd_per_1k_turns_cached),
                ]),
                None => cells.extend(["-".into(), "-".into(), "-".into()]),
            }
        }
        for o in &others {
            cells.push(
                s.by_tokenizer
                    .get(o)
                    .map_or("-".into(), |t| thousands(t.tools_model_tokens)),
            );
        }
        t.rows.push(cells);
    }
    out.push(Block::Table(t));
    chart(&mut out, ChartKind::SchemaTax);

    // tools
    out.push(Block::Heading("Most expensive tools".into()));
    let mut tools: Vec<(&str, &super::model::ToolCost)> = report
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
    chart(&mut out, ChartKind::TopTools);

    // probes
    let probes: Vec<(&str, &ProbeResult)> = report
        .servers
        .iter()
        .flat_map(|s| s.probes.iter().map(move |p| (s.name.as_str(), p)))
        .collect();
    if !probes.is_empty() {
        out.push(Block::Heading("Probe results: raw and budgeted".into()));
        out.push(Block::Para(
            "Raw and budgeted count the same thing: the content and `structuredContent` as a client that shows both pays (images at their pixel cost). Wire sizes are the JSON-RPC `result` member as the server sent it.".into(),
        ));
        let mut cols = vec![
            ("server", false, false),
            ("tool", false, true),
            ("status", false, false),
            ("raw tokens", true, false),
            ("budgeted", true, false),
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
                p.tool.clone(),
                status,
                p.raw
                    .as_ref()
                    .map_or("-".into(), |r| thousands(r.model_tokens)),
                b.map_or("-".into(), |b| thousands(b.tokens)),
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
        chart(&mut out, ChartKind::ProbeTokens);
        chart(&mut out, ChartKind::ProbeLatency);
    }

    // client limits
    out.push(Block::Heading("Client limits".into()));
    out.push(Block::Para(format!(
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
    let mut per_probe: Vec<(&str, &str, &LimitVerdict)> = probes
        .iter()
        .flat_map(|(s, p)| p.limits.iter().map(move |l| (*s, p.tool.as_str(), l)))
        .filter(|(_, _, l)| l.exceeded)
        .collect();
    per_probe.sort_by_key(|(_, _, l)| std::cmp::Reverse(l.value));
    if !per_probe.is_empty() {
        out.push(Block::Para(
            "Results over a client limit, as sent and after the budget engine:".into(),
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

    // findings
    out.push(Block::Heading("Findings".into()));
    let mut findings: Vec<(&str, &super::model::Finding)> = report
        .servers
        .iter()
        .flat_map(|s| s.findings.iter().map(move |f| (s.name.as_str(), f)))
        .collect();
    if findings.is_empty() {
        out.push(Block::Para("No design check failed.".into()));
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
            ("fix", false, false),
        ]);
        for (s, f) in findings {
            t.rows.push(vec![
                f.severity.clone(),
                f.rule.clone(),
                s.to_string(),
                f.tool.clone().unwrap_or_else(|| "-".into()),
                f.message.clone(),
                f.fix.clone(),
            ]);
        }
        out.push(Block::Table(t));
        out.push(Block::Para(
            "`mcp-budget audit --explain RULE` says what a rule checks and why.".into(),
        ));
    }
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
    out
}
