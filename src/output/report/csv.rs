//! servers.csv, tools.csv, probes.csv and clients.csv: one flat row per server, tool, probe,
//! and probe in each client, for spreadsheets and scripts. Token columns use the primary tokenizer; the other tokenizers follow
//! in columns named after them, then dollars and client limits.

use std::io::Write;

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::measure::facts::{ProbeStatus, Report, Status};

/// The CSV tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CsvKind {
    Servers,
    Tools,
    Probes,
    /// One row per probe and client: what reaches that client's model, as sent and budgeted.
    Clients,
}

impl CsvKind {
    pub const ALL: [CsvKind; 4] = [
        CsvKind::Servers,
        CsvKind::Tools,
        CsvKind::Probes,
        CsvKind::Clients,
    ];

    pub fn file_name(&self) -> &'static str {
        match self {
            CsvKind::Servers => "servers.csv",
            CsvKind::Tools => "tools.csv",
            CsvKind::Probes => "probes.csv",
            CsvKind::Clients => "clients.csv",
        }
    }
}

#[derive(Serialize)]
struct ServerRow<'a> {
    server: &'a str,
    transport: &'a str,
    status: &'a str,
    tool_count: usize,
    tools_model_tokens: usize,
    tools_wire_tokens: usize,
    tools_wire_bytes: usize,
    instructions_tokens: usize,
    pages: usize,
    prompts: usize,
    resources: usize,
    largest_tool: &'a str,
    largest_tool_tokens: usize,
    error: &'a str,
}

#[derive(Serialize)]
struct ToolRow<'a> {
    server: &'a str,
    tool: &'a str,
    model_tokens: usize,
    description_tokens: usize,
    input_schema_tokens: usize,
    output_schema_tokens: usize,
    annotations_tokens: usize,
    title_tokens: usize,
    icons_tokens: usize,
    meta_tokens: usize,
    other_tokens: usize,
    wire_bytes: usize,
    wire_tokens: usize,
}

#[derive(Serialize)]
struct ProbeRow<'a> {
    server: &'a str,
    tool: &'a str,
    /// The probe file's label ("" when none).
    label: &'a str,
    status: &'a str,
    latency_ms: String,
    wire_bytes: usize,
    wire_tokens: usize,
    model_tokens: usize,
    content_tokens: usize,
    text_tokens: usize,
    structured_tokens: usize,
    structured_duplicate: bool,
    image_tokens: usize,
    blocks: String,
    budget: Option<usize>,
    budgeted_tokens: Option<usize>,
    /// Of a result over the budget: the share of the budget sent (three decimals).
    fill: Option<f64>,
    /// The largest list the engine cut: items kept whole, items in all.
    items_kept: Option<usize>,
    items_total: Option<usize>,
    strategy: &'a str,
    engine_us: Option<u64>,
    spill_path: &'a str,
    error: &'a str,
}

/// Write one table. Columns: the row's fixed fields, then one per other tokenizer, then the
/// dollar cost and the limit verdicts. A table with no rows (no probe ran) still has its header.
pub(crate) fn write_csv(report: &Report, kind: CsvKind, out: &mut dyn Write) -> csv::Result<()> {
    let rows = rows(report, kind);
    let header: Vec<String> = match rows.first() {
        Some(first) => first.keys().cloned().collect(),
        None => empty_row(report, kind).keys().cloned().collect(),
    };
    let mut w = csv::Writer::from_writer(out);
    w.write_record(&header)?;
    for row in &rows {
        w.write_record(row.values().map(|v| match v {
            Value::Null => String::new(),
            Value::String(s) => cell(s),
            other => other.to_string(),
        }))?;
    }
    w.flush()?;
    Ok(())
}

/// Every row of one table, in report order.
fn rows(report: &Report, kind: CsvKind) -> Vec<Map<String, Value>> {
    let others = report.other_tokenizers();
    let mut rows = Vec::new();
    for s in &report.servers {
        match kind {
            CsvKind::Servers => rows.push(server_csv_row(report, s, &others)),
            CsvKind::Tools => {
                rows.extend(s.tools.iter().map(|t| tool_csv_row(&s.name, t, &others)))
            }
            CsvKind::Probes => {
                rows.extend(s.probes.iter().map(|p| probe_csv_row(&s.name, p, &others)))
            }
            CsvKind::Clients => {
                for p in &s.probes {
                    rows.extend(p.clients.iter().map(|c| client_row(&s.name, p, Some(c))));
                }
            }
        }
    }
    rows
}

/// A row of empty values, for the header of a table with no rows: the same function makes it
/// as every row, so the columns cannot differ.
fn empty_row(report: &Report, kind: CsvKind) -> Map<String, Value> {
    let others = report.other_tokenizers();
    let probe = crate::measure::facts::ProbeResult::new("");
    match kind {
        CsvKind::Servers => server_csv_row(
            report,
            &crate::measure::facts::ServerReport::new("", "", "", ""),
            &others,
        ),
        CsvKind::Tools => tool_csv_row("", &crate::measure::facts::ToolCost::default(), &others),
        CsvKind::Probes => probe_csv_row("", &probe, &others),
        CsvKind::Clients => client_row("", &probe, None),
    }
}

fn usd(x: Option<f64>) -> Value {
    x.map_or(Value::Null, |x| Value::String(format!("{x:.6}")))
}

fn server_csv_row(
    report: &Report,
    s: &crate::measure::facts::ServerReport,
    others: &[String],
) -> Map<String, Value> {
    let mut row = fields(&server_row(s));
    for o in others {
        let n = s.by_tokenizer.get(o).map(|t| t.tools_model_tokens);
        row.insert(format!("tools_model_tokens_{o}"), json!(n));
    }
    let c = s.cost.as_ref();
    row.insert("model".into(), json!(c.map(|c| c.model.as_str())));
    row.insert("usd_per_turn".into(), usd(c.map(|c| c.usd_per_turn)));
    row.insert(
        "usd_per_1k_turns".into(),
        usd(c.map(|c| c.usd_per_1k_turns)),
    );
    row.insert(
        "usd_per_1k_turns_cached".into(),
        usd(c.map(|c| c.usd_per_1k_turns_cached)),
    );
    let rules: Vec<&str> = s.findings.iter().map(|f| f.rule.as_str()).collect();
    row.insert("findings".into(), json!(rules.join(" ")));
    for profile in &report.clients {
        let c = s.clients.iter().find(|c| c.client == profile.id);
        row.insert(
            format!("schema_tokens_per_turn_{}", profile.id),
            json!(c.map(|c| c.schema_tokens_per_turn)),
        );
    }
    row
}

fn tool_csv_row(
    server: &str,
    t: &crate::measure::facts::ToolCost,
    others: &[String],
) -> Map<String, Value> {
    let mut row = fields(&ToolRow {
        server,
        tool: &t.name,
        model_tokens: t.model_tokens,
        description_tokens: t.description_tokens,
        input_schema_tokens: t.input_schema_tokens,
        output_schema_tokens: t.output_schema_tokens,
        annotations_tokens: t.annotations_tokens,
        title_tokens: t.title_tokens,
        icons_tokens: t.icons_tokens,
        meta_tokens: t.meta_tokens,
        other_tokens: t.other_tokens,
        wire_bytes: t.wire_bytes,
        wire_tokens: t.wire_tokens,
    });
    for o in others {
        row.insert(format!("model_tokens_{o}"), json!(t.by_tokenizer.get(o)));
    }
    row
}

fn probe_csv_row(
    server: &str,
    p: &crate::measure::facts::ProbeResult,
    others: &[String],
) -> Map<String, Value> {
    let mut row = fields(&probe_row(server, p));
    for o in others {
        let n = p
            .raw
            .as_ref()
            .and_then(|r| r.by_tokenizer.get(o))
            .map(|t| t.model_tokens);
        row.insert(format!("model_tokens_{o}"), json!(n));
    }
    let c = p.cost.as_ref();
    row.insert("raw_usd".into(), usd(c.map(|c| c.raw_usd)));
    row.insert("budgeted_usd".into(), usd(c.and_then(|c| c.budgeted_usd)));
    let over = |budgeted: bool| {
        let mut v: Vec<String> = p
            .limits
            .iter()
            .filter(|l| {
                if budgeted {
                    l.budgeted_exceeded == Some(true)
                } else {
                    l.exceeded
                }
            })
            .map(|l| format!("{}: {}", l.client, l.limit))
            .collect();
        v.dedup();
        v.join("; ")
    };
    row.insert("limits_exceeded".into(), json!(over(false)));
    row.insert("limits_exceeded_budgeted".into(), json!(over(true)));
    row
}

/// Characters of a text cell kept at most: more than a terminal or Markdown shows, bounded all
/// the same (a spreadsheet cell holds 32,767; audit.json keeps the whole text).
const CELL_CHARS: usize = 32_000;

/// A text cell: bounded, and safe to open in a spreadsheet (`text::csv_cell`: no formula, no
/// control character; numbers stay numbers).
fn cell(s: &str) -> String {
    crate::ground::text::csv_cell(&crate::ground::text::cell_preview(
        s,
        CELL_CHARS,
        "audit.json",
    ))
    .into_owned()
}

/// One probe in one client: the raw and budgeted view side by side (`None`: the empty row of
/// a header).
fn client_row(
    server: &str,
    p: &crate::measure::facts::ProbeResult,
    c: Option<&crate::measure::facts::ClientResult>,
) -> Map<String, Value> {
    let mut row = Map::new();
    row.insert("server".into(), json!(server));
    row.insert("tool".into(), json!(p.tool));
    row.insert("label".into(), json!(p.label.as_deref().unwrap_or("")));
    row.insert("client".into(), json!(c.map(|c| c.client.as_str())));
    row.insert("confirmed".into(), json!(c.map(|c| c.confirmed)));
    let views = [
        ("raw", c.map(|c| &c.raw)),
        ("budgeted", c.and_then(|c| c.budgeted.as_ref())),
    ];
    for (prefix, seen) in views {
        row.insert(
            format!("{prefix}_outcome"),
            json!(seen.map(|s| s.outcome.name())),
        );
        row.insert(
            format!("{prefix}_tokens_to_model"),
            json!(seen.map(|s| s.tokens_to_model)),
        );
        row.insert(
            format!("{prefix}_bytes_to_model"),
            json!(seen.map(|s| s.bytes_to_model)),
        );
        row.insert(
            format!("{prefix}_kept_fraction"),
            seen.map_or(Value::Null, |s| json!(format!("{:.4}", s.kept_fraction))),
        );
        row.insert(
            format!("{prefix}_sent"),
            json!(seen.map_or(String::new(), |s| s.sent.join(" "))),
        );
    }
    row
}

/// A row struct's fields in declaration order.
fn fields(row: &impl Serialize) -> Map<String, Value> {
    match serde_json::to_value(row) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

fn server_row(s: &crate::measure::facts::ServerReport) -> ServerRow<'_> {
    let largest = s.largest_tool();
    ServerRow {
        server: &s.name,
        transport: &s.transport,
        status: if s.status == Status::Ok {
            "ok"
        } else {
            "error"
        },
        tool_count: s.tools_list.tool_count,
        tools_model_tokens: s.tools_list.model_tokens,
        tools_wire_tokens: s.tools_list.wire_tokens,
        tools_wire_bytes: s.tools_list.wire_bytes,
        instructions_tokens: s.instructions_tokens,
        pages: s.tools_list.pages,
        prompts: s.prompts.as_ref().map_or(0, |p| p.count),
        resources: s.resources.as_ref().map_or(0, |r| r.count),
        largest_tool: largest.map_or("", |t| t.name.as_str()),
        largest_tool_tokens: largest.map_or(0, |t| t.model_tokens),
        error: s.error.as_deref().unwrap_or(""),
    }
}

fn probe_row<'a>(server: &'a str, p: &'a crate::measure::facts::ProbeResult) -> ProbeRow<'a> {
    let raw = p.raw.clone().unwrap_or_default();
    ProbeRow {
        server,
        tool: &p.tool,
        label: p.label.as_deref().unwrap_or(""),
        status: match p.status {
            ProbeStatus::Ok => "ok",
            ProbeStatus::ToolError => "tool_error",
            ProbeStatus::Error => "error",
        },
        latency_ms: format!("{:.1}", p.latency_ms),
        wire_bytes: raw.wire_bytes,
        wire_tokens: raw.wire_tokens,
        model_tokens: raw.model_tokens,
        content_tokens: raw.content_tokens,
        text_tokens: raw.text_tokens,
        structured_tokens: raw.structured_tokens,
        structured_duplicate: raw.structured_duplicate,
        image_tokens: raw.image_tokens,
        blocks: raw.block_summary(),
        budget: p.budgeted.as_ref().map(|b| b.budget),
        budgeted_tokens: p.budgeted.as_ref().map(|b| b.tokens),
        fill: p
            .budgeted
            .as_ref()
            .and_then(|b| b.fill)
            .map(|f| (f * 1000.0).round() / 1000.0),
        items_kept: p
            .budgeted
            .as_ref()
            .and_then(|b| b.items.as_ref())
            .map(|i| i.whole),
        items_total: p
            .budgeted
            .as_ref()
            .and_then(|b| b.items.as_ref())
            .map(|i| i.total),
        strategy: p.budgeted.as_ref().map_or("", |b| b.strategy.as_str()),
        engine_us: p.budgeted.as_ref().map(|b| b.engine_us),
        spill_path: p
            .budgeted
            .as_ref()
            .and_then(|b| b.spill_path.as_deref())
            .unwrap_or(""),
        error: p.error.as_deref().unwrap_or(""),
    }
}
