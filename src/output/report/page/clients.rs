//! The "What each client sees" section: per client, the tool definitions it sends per turn and
//! what reaches its model of every probe result, as sent and after the engine with its limits.

use super::{Block, Table};
use crate::ground::units::{thousands, usd};
use crate::judge::assess::clients::{
    client_label, client_totals, cut_text, definitions_text, measured_profiles_text,
    model_tokenizers_text, seen_text,
};
use crate::measure::facts::Report;
use crate::output::report::charts::ChartKind;

pub(super) fn clients(report: &Report, out: &mut Vec<Block>) {
    let totals = client_totals(report);
    if totals.is_empty() {
        return;
    }
    out.push(Block::Heading("What each client sees".into()));
    out.push(super::para(
        "Each client sends the model a different share of the same servers. Tool definitions: every definition on every turn, or only the names while definitions are deferred until the model searches for a tool. Results: the parts the client sends (`content`, `structuredContent` or both), then its own limit: kept whole, cut to a head and tail (`truncated`), written to a file with a short preview (`spilled_to_file`) or refused. **Budgeted** is the same result after the engine with the client's limits, as `mcp-budget proxy --client ID` sends it; a budgeted result still cut is one the engine cannot make fit that client (the summary names each). A client marked with an asterisk rests on a rule without a primary source; every rule's source and date is in `audit.json` (`clients`).",
    ));
    let priced = report.pricing.is_some();
    let mut cols = vec![
        ("client", false, true),
        ("definitions", false, false),
        ("schema tokens/turn", true, false),
    ];
    if priced {
        cols.push(("$/1k turns", true, false));
    }
    cols.extend([
        ("results cut: raw", false, false),
        ("budgeted", false, false),
        ("result tokens: raw", true, false),
        ("budgeted", true, false),
    ]);
    let mut t = Table::new(&cols);
    for c in &totals {
        let mut row = vec![
            client_label(c),
            definitions_text(c),
            thousands(c.schema_tokens),
        ];
        if priced {
            row.push(c.usd_per_1k_turns.map_or("-".into(), usd));
        }
        row.extend([
            cut_text(c.raw_cut, c.results),
            c.budgeted_cut
                .map_or("-".into(), |b| cut_text(b, c.results)),
            thousands(c.raw_tokens),
            c.budgeted_tokens.map_or("-".into(), thousands),
        ]);
        t.rows.push(row);
    }
    out.push(Block::Table(t));
    if let Some(text) = measured_profiles_text(report) {
        out.push(super::para(&text));
    }
    if let Some(text) = model_tokenizers_text(report) {
        out.push(super::para(&text));
    }
    out.push(Block::Chart(ChartKind::ClientTokens));
    // every probe in every client: raw -> budgeted
    let probes: Vec<(&str, &crate::measure::facts::ProbeResult)> = report
        .servers
        .iter()
        .flat_map(|s| s.probes.iter().map(move |p| (s.name.as_str(), p)))
        .filter(|(_, p)| !p.clients.is_empty())
        .collect();
    if probes.is_empty() {
        return;
    }
    out.push(super::para(
        "Every probe result in every client (tokens that reach the model; raw → budgeted):",
    ));
    let ids: Vec<&str> = totals.iter().map(|c| c.client.as_str()).collect();
    let mut cols = vec![("server", false, false), ("tool", false, true)];
    cols.extend(ids.iter().map(|id| (*id, false, false)));
    let mut t = Table::new(&cols);
    for (server, p) in probes {
        let mut row = vec![server.to_string(), p.name()];
        for id in &ids {
            row.push(match p.clients.iter().find(|c| c.client == *id) {
                Some(c) => {
                    let raw = seen_text(c.measured.as_ref().unwrap_or(&c.raw));
                    match &c.budgeted {
                        Some(b) => format!("{raw} → {}", seen_text(b)),
                        None => raw,
                    }
                }
                None => "-".into(),
            });
        }
        t.rows.push(row);
    }
    out.push(Block::Table(t));
}
