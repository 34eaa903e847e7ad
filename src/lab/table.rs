//! The lab's table: per client its version and status, per server the definitions it sent
//! per turn, and per probe what reached the model.

use std::fmt::Write;

use super::probe::Delivery;
use super::report::{ClientStatus, LabReport};
use crate::ground::units::thousands;
use crate::output::report::Listing;

/// `lab`'s output: the table, or the report as JSON (the `lab` contract).
pub fn render(
    report: &LabReport,
    format: Listing,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    match format {
        Listing::Table { .. } => out.write_all(table(report).as_bytes()),
        Listing::Json => {
            serde_json::to_writer_pretty(&mut *out, report)?;
            out.write_all(b"\n")
        }
        Listing::Csv => Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "the lab's report has no CSV output",
        )),
    }
}

/// The report as text for a terminal.
fn table(report: &LabReport) -> String {
    let mut out = String::new();
    for c in &report.clients {
        let version = c.version.as_deref().unwrap_or("version unknown");
        let _ = writeln!(
            out,
            "{} {} ({}): {}",
            c.name,
            version,
            c.model,
            status(c.status)
        );
        if c.status == ClientStatus::NotInstalled {
            let _ = writeln!(out, "  not found in: {}", c.looked_in.join(", "));
            continue;
        }
        for r in &c.rules {
            let _ = writeln!(out, "  {}", rule_line(r));
        }
        for e in &c.derive_errors {
            let _ = writeln!(out, "  derive error: {e}");
        }
        for k in &c.derive_kept {
            let _ = writeln!(out, "  kept: {k}");
        }
        if let Some(era) = &c.era {
            let _ = writeln!(
                out,
                "  era, on a server from before 2026: {}",
                era.describe()
            );
        }
        if !c.profile.is_empty() {
            let _ = writeln!(out, "  as a profile entry (src/profiles/clients.toml):");
            for line in c.profile.lines() {
                let _ = writeln!(out, "    {line}");
            }
        }
        for s in &c.servers {
            if let Some(era) = &s.era {
                let _ = writeln!(
                    out,
                    "  {}: spoke {}",
                    crate::ground::text::one_line(&s.server),
                    era.describe()
                );
            }
            if let Some(d) = &s.definitions {
                let _ = writeln!(
                    out,
                    "  {}: definitions {:?}, {} of {} tools defined, {} by name only: {} tokens per turn ({} as the server lists them){}",
                    crate::ground::text::one_line(&s.server),
                    d.form,
                    d.defined,
                    d.server_tools,
                    d.named,
                    thousands(d.tokens),
                    thousands(d.server_tokens),
                    if s.stopped_before_last_page { "; stopped before the last tools/list page" } else { "" }
                );
            }
            for p in &s.probes {
                let delivered = p.delivered.map_or("-".into(), |d| thousands(d.tokens));
                let file = p.file.as_ref().map_or(String::new(), |f| {
                    format!(", saved to a file{}", if f.whole { " (whole)" } else { "" })
                });
                let _ = writeln!(
                    out,
                    "    {}: {} tokens -> {} tokens, {}{} (head {} + tail {} chars kept), sent {:?}{file}",
                    crate::ground::text::one_line(&p.tool),
                    thousands(p.raw.tokens),
                    delivered,
                    delivery(p.delivery),
                    if p.is_error { ", marked an error" } else { "" },
                    thousands(p.head_chars),
                    thousands(p.tail_chars),
                    p.sent,
                );
                if let Some(m) = &p.modelled {
                    let verdict = if m.agrees { "agrees" } else { "DIFFERS" };
                    let _ = writeln!(
                        out,
                        "      profile `{}` predicts {} tokens, {}: {verdict}",
                        m.profile,
                        thousands(m.tokens),
                        m.outcome.name()
                    );
                }
            }
            for e in &s.probe_errors {
                let _ = writeln!(out, "    error: {e}");
            }
            if let Some(e) = &s.error {
                let _ = writeln!(
                    out,
                    "  {}: error: {}",
                    crate::ground::text::one_line(&s.server),
                    e
                );
            }
            for k in &s.kept {
                let _ = writeln!(out, "  kept: {k}");
            }
        }
    }
    out
}

fn status(s: ClientStatus) -> &'static str {
    match s {
        ClientStatus::Measured => "measured",
        ClientStatus::Partial => "partly measured",
        ClientStatus::Failed => "failed",
        ClientStatus::NotInstalled => "not installed",
    }
}

fn delivery(d: Delivery) -> &'static str {
    match d {
        Delivery::Whole => "whole",
        Delivery::Cut => "cut",
        Delivery::Error => "turned into an error",
        Delivery::MarkerOnly => "nothing but a marker",
        Delivery::NotDelivered => "not delivered",
    }
}

/// One derived rule in a line: where the client starts to cut, and what it does then.
fn rule_line(r: &super::derive::ShapeRule) -> String {
    let Some(cut) = r.cut_from else {
        let up_to = r.whole_up_to.map_or("-".into(), |s| thousands(s.chars));
        return format!(
            "{}: whole up to {up_to} chars, never cut ({} runs)",
            r.shape.name(),
            r.runs
        );
    };
    let at = match (r.unit.as_deref(), r.threshold) {
        (Some(u), Some(t)) if r.unit_also.is_empty() => format!("over {} {u}", thousands(t)),
        (Some(u), Some(t)) => format!(
            "over {} {u} (or {}: not told apart)",
            thousands(t),
            r.unit_also.join(", ")
        ),
        _ => format!("from {} chars", thousands(cut.chars)),
    };
    let what = r.delivery.map_or("?", delivery);
    let file = if r.file {
        ", whole saved to a file"
    } else {
        ""
    };
    format!(
        "{}: {at}: {what} (head {} + tail {} chars kept{file}), marker {:?} ({} runs)",
        r.shape.name(),
        thousands(r.head),
        thousands(r.tail),
        crate::ground::text::one_line(&r.marker),
        r.runs
    )
}
