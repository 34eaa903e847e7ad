//! `audit --client measured`: a lab run's measurements put into the audit's report. Each
//! client the lab ran gets a `measured_clients` entry; its rows in "what each client sees" get
//! what the lab measured beside what the profile predicts: the definitions per turn of every
//! server it mounted, and what reached its model of every probe result.

use serde::Serialize;

use super::compare::outcome_of;
use super::probe::{Delivery, ProbeOutcome, Sent};
use super::report::{ClientReport, ClientStatus, LabReport, LabServerReport};
use crate::config::profiles::{
    engine_limits, misstated_by, profile, stated_cut, Break, ClientSeen, Outcome,
};
use crate::ground::units::thousands;
use crate::measure::facts::{MeasuredClient, MeasuredDefinitions};
use crate::measure::facts::{RawCost, Report, ServerReport};

/// Put `lab`'s measurements into `report`: servers by name, probes by tool in order.
pub fn merge(report: &mut Report, lab: &LabReport) {
    let drift = lab.drift();
    for c in &lab.clients {
        let mut errors: Vec<String> = Vec::new();
        for s in &c.servers {
            errors.extend(s.error.iter().map(|e| format!("{}: {e}", s.server)));
            errors.extend(s.probe_errors.iter().map(|e| format!("{}: {e}", s.server)));
        }
        if let (Some(version), false) = (&c.version, c.status == ClientStatus::NotInstalled) {
            for s in &c.servers {
                if let Some(server) = report.servers.iter_mut().find(|r| r.name == s.server) {
                    merge_server(server, s, c, version, &mut errors);
                }
            }
        }
        report.measured_clients.push(MeasuredClient {
            client: c.id.clone(),
            name: c.name.clone(),
            version: c.version.clone(),
            model: c.model.clone(),
            status: name(&c.status),
            measured_at: lab.generated_at.clone(),
            errors,
            drift: drift
                .iter()
                .filter_map(|l| l.strip_prefix(&format!("{}: ", c.id)).map(String::from))
                .collect(),
        });
    }
}

/// One server's definitions and probes as client `c` (`version`) was measured with them; a
/// probe that could not be taken as this row's measurement is said in `errors`.
fn merge_server(
    server: &mut ServerReport,
    s: &LabServerReport,
    c: &ClientReport,
    version: &str,
    errors: &mut Vec<String>,
) {
    if let (Some(d), Some(row)) = (
        &s.definitions,
        server.clients.iter_mut().find(|r| r.client == c.id),
    ) {
        row.measured = Some(MeasuredDefinitions {
            tokens_per_turn: d.tokens,
            bytes_per_turn: d.bytes,
            form: name(&d.form),
            version: version.to_string(),
        });
    }
    let mut taken = vec![false; server.probes.len()];
    for o in &s.probes {
        let Some(i) = (0..taken.len()).find(|&i| !taken[i] && server.probes[i].tool == o.tool)
        else {
            continue;
        };
        taken[i] = true;
        let probe = &mut server.probes[i];
        if o.delivery == Delivery::NotDelivered {
            continue;
        }
        // the lab's client started the server afresh: a result other than the audit's (an
        // error, a state it lacked) is no measurement of this row
        if let Some(why) = differs(o, probe.raw.as_ref()) {
            errors.push(format!("{}: {}: not measured: {why}", s.server, o.tool));
            continue;
        }
        if let Some(row) = probe.clients.iter_mut().find(|r| r.client == c.id) {
            row.measured = Some(seen(o, &c.id, &c.name, version));
            row.measured_version = Some(version.to_string());
        }
    }
}

/// Why the lab's call got another result than the audit's: the text's size in tokens off by
/// more than a tenth (and 50 tokens), as when the lab's run of the server failed.
fn differs(o: &ProbeOutcome, audit: Option<&RawCost>) -> Option<String> {
    let audit = audit?;
    // the lab counts a blob's base64 as the text a client may send; the audit does not
    if o.blobs > 0 {
        return None;
    }
    let text = audit.content_tokens.saturating_sub(audit.image_tokens);
    let off = o.raw.tokens.abs_diff(text);
    (off > 50 && off * 10 > text).then(|| {
        format!(
            "the lab's call returned {} tokens of text, the audit's {}",
            thousands(o.raw.tokens),
            thousands(text)
        )
    })
}

/// A measured delivery in the audit's terms.
pub fn seen(o: &ProbeOutcome, client: &str, name: &str, version: &str) -> ClientSeen {
    let outcome = outcome_of(o);
    let delivered = o.delivered.unwrap_or_default();
    let kept = match o.delivery {
        Delivery::Whole => 1.0,
        _ if o.raw.chars == 0 => 0.0,
        _ => ((o.head_chars + o.tail_chars) as f64 / o.raw.chars as f64).min(1.0),
    };
    let sent = match o.sent {
        Sent::Content => vec!["content".to_string()],
        Sent::StructuredContent => vec!["structuredContent".to_string()],
        Sent::Both => vec!["content".to_string(), "structuredContent".to_string()],
        Sent::Neither => Vec::new(),
    };
    ClientSeen {
        // the text measured, and the images that reached the model at their pixel cost
        tokens_to_model: delivered.tokens + o.image_tokens,
        model_tokens: None,
        bytes_to_model: delivered.bytes,
        outcome,
        kept_fraction: kept,
        sent,
        rules: vec![format!("measured: {name} {version}")],
        breaks: breaks(o, outcome, kept, client),
        // a measured run keeps its numbers, not the text (that is in the run's folder)
        text: String::new(),
    }
}

/// How the client broke the result, as measured: an error (for a JSON array, or over its cap
/// in tokens by its profile), nothing but its marker, or a marker that misstates the cut.
fn breaks(o: &ProbeOutcome, outcome: Outcome, kept: f64, client: &str) -> Option<Break> {
    if o.images > 0 && o.images_delivered == 0 && !o.image_as_text {
        return Some(Break::ImagesDropped { images: o.images });
    }
    match o.delivery {
        Delivery::Error => Some(error_break(o, client)),
        Delivery::MarkerOnly => Some(Break::MarkerOnly),
        Delivery::Cut if outcome == Outcome::Truncated => {
            let (stated, unit) = stated_cut(&o.added)?;
            let cut = (o.raw.in_unit(unit) as f64 * (1.0 - kept)).round() as usize;
            misstated_by(stated, cut, unit)
        }
        _ => None,
    }
}

/// Why a client sent an error in place of a result: over its cap in tokens (its profile's)
/// before any other reason, then a JSON array, else unknown.
fn error_break(o: &ProbeOutcome, client: &str) -> Break {
    let cap = profile(client)
        .and_then(|p| engine_limits(p).tokens)
        .filter(|&cap| o.raw.tokens > cap);
    match cap {
        Some(cap) => Break::CapNoPreview {
            cap,
            unit: "tokens".into(),
        },
        None if o.json_array => Break::JsonArrayError,
        None => Break::ErrorInstead,
    }
}

/// An enum's name as its JSON spells it.
fn name<T: Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
