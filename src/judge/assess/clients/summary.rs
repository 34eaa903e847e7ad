//! One line per client over a whole report: what its model is sent of every tool list per turn
//! and of every probe result, as sent and after the engine. The terminal, Markdown and HTML
//! outputs all show these rows.

use crate::config::profiles::{ClientSeen, Outcome};
use crate::ground::units::thousands;
use crate::measure::facts::{Report, Status};

/// A client's totals over the report.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientTotals {
    pub client: String,
    pub name: String,
    /// Schema tokens per turn over every server that answered.
    pub schema_tokens: usize,
    /// Their dollars per 1,000 turns at the report's price (`None`: no price).
    pub usd_per_1k_turns: Option<f64>,
    /// Servers whose definitions this client defers.
    pub deferred_servers: usize,
    /// Servers over one of its tool limits.
    pub over_tool_limit: usize,
    /// Tools it never offers its model (past the first tools/list page, which is all it
    /// reads); their probe results are not counted in `results`.
    pub unlisted_tools: usize,
    pub servers: usize,
    /// Tokens of every probe result the model is sent, as sent and after the engine.
    pub raw_tokens: usize,
    pub budgeted_tokens: Option<usize>,
    /// Results the client cuts, spills or refuses, as sent and after the engine.
    pub raw_cut: usize,
    pub budgeted_cut: Option<usize>,
    pub results: usize,
    /// Every fact behind the row has a primary source.
    pub confirmed: bool,
    /// The client's version when the lab measured the row (`audit --client measured`): its
    /// numbers are then what the client was measured sending, where it was measured.
    pub measured: Option<String>,
}

/// A client's rows, in the order of the report's profiles.
pub fn client_totals(report: &Report) -> Vec<ClientTotals> {
    report
        .clients
        .iter()
        .map(|profile| {
            let mut t = ClientTotals {
                client: profile.id.clone(),
                name: profile.name.clone(),
                schema_tokens: 0,
                usd_per_1k_turns: None,
                deferred_servers: 0,
                over_tool_limit: 0,
                unlisted_tools: 0,
                servers: 0,
                raw_tokens: 0,
                budgeted_tokens: None,
                raw_cut: 0,
                budgeted_cut: None,
                results: 0,
                confirmed: profile.confirmed(),
                measured: report
                    .measured_clients
                    .iter()
                    .find(|m| m.client == profile.id && m.status != "not_installed")
                    .and_then(|m| m.version.clone()),
            };
            for s in report.servers.iter().filter(|s| s.status == Status::Ok) {
                if let Some(c) = s.clients.iter().find(|c| c.client == profile.id) {
                    t.servers += 1;
                    // the lab counts the definitions a client sends, not the names it lists
                    // of deferred ones: those stay as modelled
                    t.schema_tokens += match &c.measured {
                        Some(m) if !matches!(m.form.as_str(), "deferred" | "hidden") => {
                            m.tokens_per_turn
                        }
                        _ => c.schema_tokens_per_turn,
                    };
                    if let Some(usd) = c.usd_per_1k_turns {
                        *t.usd_per_1k_turns.get_or_insert(0.0) += usd;
                    }
                    t.deferred_servers += usize::from(c.deferred);
                    t.over_tool_limit += usize::from(c.tool_limit_exceeded);
                    if let Some(n) = c.tools_offered {
                        t.unlisted_tools += s.tools_list.tool_count.saturating_sub(n);
                    }
                }
                for c in s
                    .probes
                    .iter()
                    .flat_map(|p| p.clients.iter())
                    .filter(|c| c.client == profile.id && !c.unlisted)
                {
                    let raw = c.measured.as_ref().unwrap_or(&c.raw);
                    t.results += 1;
                    t.raw_tokens += raw.tokens_to_model;
                    t.raw_cut += usize::from(raw.outcome != Outcome::Full);
                    if let Some(b) = &c.budgeted {
                        *t.budgeted_tokens.get_or_insert(0) += b.tokens_to_model;
                        *t.budgeted_cut.get_or_insert(0) += usize::from(b.outcome != Outcome::Full);
                    }
                }
            }
            t
        })
        .collect()
}

/// A result that some client still does not receive whole after the engine: the call's name
/// and each such client's name with what it does (`truncated`, `spilled_to_file`, `refused`).
/// The same results the client rows count in `budgeted_cut`.
#[derive(Debug, Clone, PartialEq)]
pub struct StillCut {
    pub call: String,
    pub clients: Vec<(String, Outcome)>,
}

impl StillCut {
    /// What the clients do with it, grouped: "cut by Codex; refused by Claude Code, opencode".
    pub fn how(&self) -> String {
        let mut by: Vec<(&str, Vec<&str>)> = Vec::new();
        for (client, outcome) in &self.clients {
            let how = match outcome {
                Outcome::SpilledToFile => "written to a file by",
                Outcome::Truncated => "cut by",
                _ => "refused by",
            };
            match by.iter_mut().find(|(h, _)| *h == how) {
                Some((_, names)) => names.push(client),
                None => by.push((how, vec![client])),
            }
        }
        let said: Vec<String> = by
            .iter()
            .map(|(how, names)| format!("{how} {}", names.join(", ")))
            .collect();
        said.join("; ")
    }
}

/// Every result some client still cuts, spills or refuses after the engine, in report order.
pub fn still_cut(report: &Report) -> Vec<StillCut> {
    let name = |id: &str| {
        report
            .clients
            .iter()
            .find(|p| p.id == id)
            .map_or(id.to_string(), |p| p.name.clone())
    };
    report
        .servers
        .iter()
        .filter(|s| s.status == Status::Ok)
        .flat_map(|s| s.probes.iter())
        .filter_map(|p| {
            let clients: Vec<(String, Outcome)> = p
                .clients
                .iter()
                .filter(|c| !c.unlisted)
                .filter_map(|c| c.budgeted.as_ref().map(|b| (c, b.outcome)))
                .filter(|(_, o)| *o != Outcome::Full)
                .map(|(c, o)| (name(&c.client), o))
                .collect();
            (!clients.is_empty()).then(|| StillCut {
                call: p.name(),
                clients,
            })
        })
        .collect()
}

/// What a client sends of the definitions: "every definition", "names only", "names only for 2
/// of 3", or "page 1 only; 8 tools unseen" when it reads only the first tools/list page of a
/// server with more, then "; 1 server over its tool limit" when one is.
pub fn definitions_text(t: &ClientTotals) -> String {
    let mut out = match t.deferred_servers {
        0 => "every definition".to_string(),
        n if n == t.servers => "names only".to_string(),
        n => format!("names only for {n} of {}", t.servers),
    };
    if t.unlisted_tools > 0 {
        if t.deferred_servers == 0 {
            out = "page 1 only".into();
        }
        out.push_str(&format!(
            "; {} tool{} unseen",
            thousands(t.unlisted_tools),
            if t.unlisted_tools == 1 { "" } else { "s" }
        ));
    }
    if t.over_tool_limit > 0 {
        out.push_str(&format!(
            "; {} server{} over its tool limit",
            t.over_tool_limit,
            if t.over_tool_limit == 1 { "" } else { "s" }
        ));
    }
    out
}

/// The client's id as tables show it: ` (measured 2.1.332)` after it when the lab measured
/// the row, else ` *` when a rule behind the row is unconfirmed.
pub fn client_label(t: &ClientTotals) -> String {
    match &t.measured {
        Some(v) => format!("{} (measured {v})", t.client),
        None => format!("{}{}", t.client, if t.confirmed { "" } else { " *" }),
    }
}

/// Which profiles rest on lab measurements, as a sentence: "Profiles measured in the lab: codex
/// 0.171.0 with model lab-model-x (2026-12-01), ...; the others are modelled from their
/// sources." and whether this report's rows apply them or were measured here. `None` when no
/// profile was measured and no row either.
pub fn measured_profiles_text(report: &Report) -> Option<String> {
    let measured: Vec<String> = report
        .clients
        .iter()
        .filter_map(|p| {
            let m = p.measured.as_ref()?;
            let model = match m.model.as_str() {
                "" => String::new(),
                model => format!(" with model {model}"),
            };
            Some(format!("{} {}{model} ({})", p.id, m.version, m.date))
        })
        .collect();
    let ran = !report.measured_clients.is_empty();
    if measured.is_empty() && !ran {
        return None;
    }
    let mut out = String::new();
    if !measured.is_empty() {
        let rest = if measured.len() == report.clients.len() {
            ""
        } else {
            "; the others are modelled from their sources"
        };
        out.push_str(&format!(
            "Profiles measured in the lab (`mcp-budget lab`): {}{rest}. ",
            measured.join(", ")
        ));
    }
    out.push_str(if ran {
        "Rows marked (measured VERSION) are what that client sent its model in this run (`--client measured`); budgeted stays modelled."
    } else {
        "The rows apply the profiles; `audit --client measured` runs the installed clients instead."
    });
    // a measured client that moved from its profile: the profile is stale
    for c in &report.measured_clients {
        for line in &c.drift {
            out.push_str(&format!(" Stale profile: {}: {line}.", c.client));
        }
    }
    Some(out)
}
/// "1 of 4 results", "none".
pub fn cut_text(cut: usize, results: usize) -> String {
    match cut {
        0 => "none".into(),
        n => format!("{n} of {results}"),
    }
}

/// A result in a client in a few words: "full 512", "cut to 2,702 (37% kept)", "to file, 29
/// shown", "refused".
pub fn seen_text(s: &ClientSeen) -> String {
    match s.outcome {
        Outcome::Full => format!("full {}", thousands(s.tokens_to_model)),
        Outcome::Refused => "refused".into(),
        Outcome::Truncated => format!(
            "cut to {} ({:.0}% kept)",
            thousands(s.tokens_to_model),
            s.kept_fraction * 100.0
        ),
        Outcome::SpilledToFile => format!("to file, {} shown", thousands(s.tokens_to_model)),
    }
}

/// Which tokenizer family each client's counts are in: the report's, and for each client whose
/// profile names its model's family, that family's tokenizer and its schema tax per turn in it
/// (the rows' `model_tokens`), or that its model's tokenizer is not built in. `None` when no
/// client names a family.
pub fn model_tokenizers_text(report: &Report) -> Option<String> {
    let primary = report
        .tokenizers
        .first()
        .map_or("cl100k_base", String::as_str);
    let notes: Vec<String> = report
        .clients
        .iter()
        .filter_map(|p| {
            let m = p.model.as_ref()?;
            let schema: Option<usize> = report
                .servers
                .iter()
                .flat_map(|s| s.clients.iter().filter(|c| c.client == p.id))
                .map(|c| c.model_tokens_per_turn)
                .sum();
            let exact = if m.exact { "exact" } else { "an estimate" };
            Some(
                match p
                    .model_tokenizer()
                    .filter(|t| !primary.starts_with(t.name()))
                {
                    Some(t) => match schema {
                        Some(n) => format!(
                            "{} in {} ({exact}): {} tokens/turn",
                            p.id,
                            t.name(),
                            crate::ground::units::thousands(n)
                        ),
                        None => format!("{} in {} ({exact})", p.id, t.name()),
                    },
                    None if !m.exact => {
                        format!("{} in {primary} (its model's is not built in)", p.id)
                    }
                    None => return None,
                },
            )
        })
        .collect();
    (!notes.is_empty()).then(|| {
        format!(
            "Counted in {primary}; in each model's own tokenizer (audit.json `model_tokens`): {}.",
            notes.join("; ")
        )
    })
}
