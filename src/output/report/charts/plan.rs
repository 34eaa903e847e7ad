//! What each chart shows, worked out from the report before any drawing: its rows (largest
//! first), its series, its unit and scale, and the reference lines across the bars.

use std::collections::BTreeMap;

use plotters::style::RGBColor;

use super::font::{advance, font, legible, LABEL_PT};
use super::ChartKind;
use crate::ground::units::{millis, thousands};
use crate::judge::assess::limits::claude_code_token_limits;
use crate::measure::facts::{Report, Status};

const TOP_TOOLS: usize = 15;
/// Longest row label, in characters (escapes count in full).
pub(super) const LABEL_CHARS: usize = 48;

pub(super) const BLUE: RGBColor = RGBColor(0x4C, 0x78, 0xA8);
pub(super) const ORANGE: RGBColor = RGBColor(0xF5, 0x85, 0x18);
pub(super) const INK: RGBColor = RGBColor(0x33, 0x33, 0x33);
const DARK_GREY: RGBColor = RGBColor(0x55, 0x55, 0x55);
pub(super) const GREY: RGBColor = RGBColor(0x99, 0x99, 0x99);
const CAP_RED: RGBColor = RGBColor(0xD6, 0x27, 0x28);

/// One bar of each row, with its legend name and colour.
pub(super) struct Series {
    pub(super) name: &'static str,
    pub(super) color: RGBColor,
}

const ONE_SERIES: &[Series] = &[Series {
    name: "tokens",
    color: BLUE,
}];
const TOKEN_SERIES: &[Series] = &[
    Series {
        name: "raw result",
        color: BLUE,
    },
    Series {
        name: "after the budget engine",
        color: ORANGE,
    },
];
const LATENCY_SERIES: &[Series] = &[
    Series {
        name: "upstream call",
        color: BLUE,
    },
    Series {
        name: "budget engine",
        color: ORANGE,
    },
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unit {
    Tokens,
    Millis,
}

impl Unit {
    pub(super) fn format(self, v: f64) -> String {
        match self {
            Unit::Tokens => thousands(v.max(0.0).round() as usize),
            Unit::Millis => millis(v),
        }
    }
}

/// One bar group: a label and one value per series (None: no bar).
pub(super) struct Row {
    pub(super) label: String,
    pub(super) values: Vec<Option<f64>>,
}

/// A labelled vertical line across the bars.
pub(super) struct RefLine {
    pub(super) at: f64,
    pub(super) label: String,
    pub(super) color: RGBColor,
    pub(super) dashed: bool,
}

/// What one chart draws, worked out from the report before any drawing.
pub(super) struct Plan {
    pub(super) x_desc: &'static str,
    pub(super) unit: Unit,
    pub(super) log: bool,
    pub(super) series: &'static [Series],
    /// Top to bottom.
    pub(super) rows: Vec<Row>,
    pub(super) refs: Vec<RefLine>,
}

pub(super) fn plan(report: &Report, kind: ChartKind) -> Option<Plan> {
    let plan = match kind {
        ChartKind::SchemaTax => schema_tax(report),
        ChartKind::TopTools => top_tools(report),
        ChartKind::ProbeTokens => probe_tokens(report),
        ChartKind::ProbeLatency => probe_latency(report),
        ChartKind::ClientTokens => client_tokens(report),
    };
    let mut plan = (!plan.rows.is_empty()).then_some(plan)?;
    for row in &mut plan.rows {
        row.label = fit_width(&row.label, (MAX_LABEL_AREA - LABEL_GAP) as f32);
    }
    Some(plan)
}

/// The widest a row label may be, in pixels, and the gap between a row label and the axis.
pub(super) const MAX_LABEL_AREA: u32 = 420;
pub(super) const LABEL_GAP: u32 = 20;

/// `label` cut, ending in `…`, until it is at most `max_px` wide as a row label.
pub(super) fn fit_width(label: &str, max_px: f32) -> String {
    let size = LABEL_PT as f32;
    let Some(font) = font().filter(|f| advance(f, size, label) > max_px) else {
        return label.to_string();
    };
    let mut chars: Vec<char> = label.trim_end_matches('…').chars().collect();
    while chars.pop().is_some() {
        let cut: String = chars.iter().chain(['…'].iter()).collect();
        if advance(font, size, &cut) <= max_px {
            return cut;
        }
    }
    "…".to_string()
}

fn single(x_desc: &'static str, rows: Vec<(usize, String)>) -> Plan {
    Plan {
        x_desc,
        unit: Unit::Tokens,
        log: false,
        series: ONE_SERIES,
        rows: rows
            .into_iter()
            .map(|(tokens, label)| Row {
                label,
                values: vec![Some(tokens as f64)],
            })
            .collect(),
        refs: Vec::new(),
    }
}

/// Largest first, then by label: the same order on every run.
fn largest_first(rows: &mut [(usize, String)]) {
    rows.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
}

fn schema_tax(report: &Report) -> Plan {
    let mut rows: Vec<(usize, String)> = report
        .servers
        .iter()
        .filter(|s| s.status == Status::Ok)
        .map(|s| {
            let n = s.tools_list.tool_count;
            let tools = if n == 1 { "tool" } else { "tools" };
            let name = legible(&s.name, LABEL_CHARS - 14);
            (
                s.tools_list.model_tokens,
                format!("{name} ({} {tools})", thousands(n)),
            )
        })
        .collect();
    largest_first(&mut rows);
    single("tokens sent to the model every turn (tools/list)", rows)
}

fn top_tools(report: &Report) -> Plan {
    let mut rows: Vec<(usize, String)> = report
        .servers
        .iter()
        .flat_map(|s| {
            s.tools
                .iter()
                .map(|t| (t.model_tokens, probe_label(&s.name, &t.name)))
        })
        .collect();
    largest_first(&mut rows);
    rows.truncate(TOP_TOOLS);
    single("tokens per turn for the tool's definition", rows)
}

fn probe_label(server: &str, tool: &str) -> String {
    legible(&format!("{server}/{tool}"), LABEL_CHARS)
}

fn probe_tokens(report: &Report) -> Plan {
    let mut rows: Vec<(f64, Row)> = Vec::new();
    let mut budgets: BTreeMap<usize, usize> = BTreeMap::new();
    for s in &report.servers {
        for p in &s.probes {
            let Some(raw) = &p.raw else { continue };
            if let Some(b) = &p.budgeted {
                *budgets.entry(b.budget).or_default() += 1;
            }
            let raw_tokens = raw.model_tokens as f64;
            let values = vec![
                Some(raw_tokens),
                p.budgeted.as_ref().map(|b| b.tokens as f64),
            ];
            let label = probe_label(&s.name, &p.name());
            rows.push((raw_tokens, Row { label, values }));
        }
    }
    let mut refs = Vec::new();
    // The most common budget; among equally common ones, the smallest.
    if let Some((&budget, _)) = budgets
        .iter()
        .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
    {
        refs.push(RefLine {
            at: budget as f64,
            label: format!("budget {}", thousands(budget)),
            color: DARK_GREY,
            dashed: true,
        });
    }
    refs.extend(claude_code_refs());
    Plan {
        x_desc: "tokens per result (log scale)",
        unit: Unit::Tokens,
        log: true,
        series: TOKEN_SERIES,
        rows: sorted_rows(rows),
        refs,
    }
}

const CLIENT_SERIES: &[Series] = &[
    Series {
        name: "as the server sent them",
        color: BLUE,
    },
    Series {
        name: "after the engine with the client's limits",
        color: ORANGE,
    },
];

/// Per client, the tokens of all probe results its model is sent, in the profiles' order
/// (`*`: a rule behind it is unconfirmed).
fn client_tokens(report: &Report) -> Plan {
    let rows = crate::judge::assess::clients::client_totals(report)
        .into_iter()
        .filter(|c| c.results > 0)
        .map(|c| Row {
            label: crate::judge::assess::clients::client_label(&c),
            values: vec![
                Some(c.raw_tokens as f64),
                c.budgeted_tokens.map(|b| b as f64),
            ],
        })
        .collect();
    Plan {
        x_desc: "tokens of all probe results (log scale)",
        unit: Unit::Tokens,
        log: true,
        series: CLIENT_SERIES,
        rows,
        refs: Vec::new(),
    }
}

/// Claude Code's warning and cap as reference lines (the client limits table is the one place
/// these numbers live).
pub(super) fn claude_code_refs() -> Vec<RefLine> {
    let (warn, cap) = claude_code_token_limits();
    vec![
        RefLine {
            at: warn as f64,
            label: format!("Claude Code warns {}k", warn / 1000),
            color: GREY,
            dashed: true,
        },
        RefLine {
            at: cap as f64,
            label: format!("Claude Code cap {}k", cap / 1000),
            color: CAP_RED,
            dashed: false,
        },
    ]
}

fn probe_latency(report: &Report) -> Plan {
    let rows = report
        .servers
        .iter()
        .flat_map(|s| s.probes.iter().map(move |p| (s, p)))
        .map(|(s, p)| {
            let engine_ms = p.budgeted.as_ref().map(|b| b.engine_us as f64 / 1000.0);
            let label = probe_label(&s.name, &p.name());
            let values = vec![Some(p.latency_ms), engine_ms];
            (p.latency_ms, Row { label, values })
        })
        .collect();
    Plan {
        x_desc: "milliseconds (log scale)",
        unit: Unit::Millis,
        log: true,
        series: LATENCY_SERIES,
        rows: sorted_rows(rows),
        refs: Vec::new(),
    }
}

pub(super) fn sorted_rows(mut rows: Vec<(f64, Row)>) -> Vec<Row> {
    rows.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.label.cmp(&b.1.label)));
    rows.into_iter().map(|(_, row)| row).collect()
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{fixture, probe, report, server, tool};
    use super::*;

    #[test]
    fn wide_labels_are_cut_to_the_label_area() {
        let wide = "W".repeat(LABEL_CHARS);
        let max_px = (MAX_LABEL_AREA - LABEL_GAP) as f32;
        let font = font().unwrap();
        assert!(advance(font, LABEL_PT as f32, &wide) > max_px);
        let cut = fit_width(&wide, max_px);
        assert!(cut.ends_with('…') && cut.len() < wide.len(), "{cut}");
        assert!(advance(font, LABEL_PT as f32, &cut) <= max_px);
        assert_eq!(fit_width("demo/read_file", max_px), "demo/read_file");
    }

    #[test]
    fn rows_are_largest_first_and_skip_failed_servers() {
        let r = fixture();
        let tax = plan(&r, ChartKind::SchemaTax).unwrap();
        let labels: Vec<&str> = tax.rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(
            labels,
            ["github (2 tools)", "[U+4E2D][U+6587]-server (2 tools)"]
        );
        let top = plan(&r, ChartKind::TopTools).unwrap();
        assert_eq!(top.rows[0].label, "broken/ghost");
        assert_eq!(top.rows[1].label, "github/list_pull_requests");
        assert_eq!(top.rows.len(), 5);
        let tokens = plan(&r, ChartKind::ProbeTokens).unwrap();
        assert_eq!(tokens.rows[0].values, [Some(61_234.0), Some(7_950.0)]);
        assert_eq!(tokens.rows[1].values, [Some(9_000.0), None]);
        let latency = plan(&r, ChartKind::ProbeLatency).unwrap();
        assert_eq!(latency.rows[0].values, [Some(1_250.0), None]);
        assert_eq!(latency.rows[1].values, [Some(412.0), Some(0.85)]);
    }

    #[test]
    fn top_tools_keeps_fifteen() {
        let tools = (0..20)
            .map(|i| tool(&format!("t{i:02}"), 100 + i))
            .collect();
        let r = report(vec![server("many", tools, Vec::new())]);
        let top = plan(&r, ChartKind::TopTools).unwrap();
        assert_eq!(top.rows.len(), TOP_TOOLS);
        assert_eq!(top.rows[0].label, "many/t19");
    }

    #[test]
    fn the_most_common_budget_is_drawn() {
        let mut r = fixture();
        let mut odd = probe("search_code", 1.0, 500, Some(500));
        odd.budgeted.as_mut().unwrap().budget = 2_000;
        r.servers[1].probes.push(odd);
        let refs = plan(&r, ChartKind::ProbeTokens).unwrap().refs;
        assert_eq!(refs[0].label, "budget 8,000");
    }
}
