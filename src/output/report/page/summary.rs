//! The summary paragraph at the top of the report page, written from the measured totals.

use std::fmt::Write as _;

use super::Spans;
use crate::ground::units::{thousands, usd};
use crate::measure::facts::{ProbeResult, Report, ServerReport, Status};

/// The totals the summary paragraph states (the client-limits section repeats two of them).
pub(super) struct Summary {
    pub servers_ok: usize,
    pub servers_failed: usize,
    pub tools: usize,
    pub schema_tokens: usize,
    pub probes: usize,
    pub over_cap_raw: usize,
    pub over_cap_budgeted: usize,
    pub findings: usize,
    pub text: Vec<super::Span>,
}

/// Whether a result is over Claude Code's cap, as sent or after the engine.
fn cap_exceeded(p: &ProbeResult, budgeted: bool) -> bool {
    p.limits.iter().any(|l| {
        l.client == "Claude Code"
            && (l.effect == "cap" || (l.effect == "refuse" && l.limit.contains("tokens")))
            && if budgeted {
                l.budgeted_exceeded == Some(true)
            } else {
                l.exceeded
            }
    })
}

/// What the client table's "budgeted" column counts, said in words: every result a client
/// still does not receive whole after the engine, and which clients.
fn still_cut_text(report: &Report, t: &mut String, spans: &mut Spans) {
    let cut = crate::judge::assess::clients::still_cut(report);
    if cut.is_empty() {
        t.push_str(" With each client's own limits, every result reaches every client whole.");
        return;
    }
    let _ = write!(
        t,
        " With each client's own limits, {} result{} still reach{} a client cut or not at all: ",
        cut.len(),
        if cut.len() == 1 { "" } else { "s" },
        if cut.len() == 1 { "es" } else { "" },
    );
    for (i, c) in cut.iter().enumerate() {
        if i > 0 {
            t.push_str("; ");
        }
        spans.own(&std::mem::take(t)).code(&c.call);
        let _ = write!(t, " ({})", c.how());
    }
    t.push('.');
}

/// The totals of a report and the paragraph that states them.
pub(super) fn summarize(report: &Report) -> Summary {
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
        text: Vec::new(),
    };
    let tokenizer = report
        .tokenizers
        .first()
        .map_or("cl100k_base", String::as_str);
    let mut spans = Spans::default();
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
        t.push_str(" The most expensive tool is ");
        spans
            .own(&std::mem::take(&mut t))
            .code(&format!("{}/{}", server.name, tool.name));
        let _ = write!(t, " at {} tokens.", thousands(tool.model_tokens));
    }
    if let Some(biggest) = probes
        .iter()
        .max_by_key(|p| p.raw.as_ref().map_or(0, |r| r.model_tokens))
    {
        let raw = biggest.raw.as_ref().map_or(0, |r| r.model_tokens);
        let _ = write!(
            t,
            " Of {} probe call{}, {} returned more than Claude Code's 25,000-token cap; the largest, ",
            s.probes,
            if s.probes == 1 { "" } else { "s" },
            s.over_cap_raw,
        );
        spans.own(&std::mem::take(&mut t)).code(&biggest.name());
        let _ = write!(t, ", returned {} tokens", thousands(raw));
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
        if !report.clients.is_empty() && probes.iter().any(|p| p.budgeted.is_some()) {
            still_cut_text(report, &mut t, &mut spans);
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
    spans.own(&t);
    s.text = spans.0;
    s
}
