//! What each client sends per turn of each server's tool definitions: every definition (the
//! measured model view), or the tool names alone when the client defers definitions until the
//! model searches for them. Server instructions are sent alike by every client and are counted
//! apart (`instructions_tokens`); the dollar figure is in the report's priced tokenizer.

use std::str::FromStr;

use crate::facts::ClientSchema;

use crate::facts::{Report, Status, ToolsList};
use crate::profiles::{ClientProfile, SchemaMode};
use crate::tokens::Tokenizer;

/// The names a deferring client shows for a server's tools, one per line, as the client spells
/// them (`mcp__server__tool` for Claude Code).
pub fn deferred_names(profile: &ClientProfile, server: &str, tools: &[&str]) -> String {
    let template = profile.tool_name.as_deref().unwrap_or("{tool}");
    tools
        .iter()
        .map(|t| template.replace("{server}", server).replace("{tool}", t))
        .collect::<Vec<_>>()
        .join("\n")
}

/// How many of a server's tools a client offers its model when that is fewer than it lists:
/// the first page's, for a client that reads no further (unknown in an old report: all).
fn offered(profile: &ClientProfile, list: &ToolsList) -> Option<usize> {
    (profile.first_page_only()
        && list.pages > 1
        && list.first_page_tools > 0
        && list.first_page_tools < list.tool_count)
        .then_some(list.first_page_tools)
}

/// Fill in every server's `clients` for the report's profiles.
pub fn apply(report: &mut Report) {
    let tokenizer = report
        .tokenizers
        .first()
        .and_then(|t| Tokenizer::from_str(t).ok())
        .unwrap_or(Tokenizer::Cl100k);
    let total_tools: usize = report
        .servers
        .iter()
        .filter(|s| s.status == Status::Ok)
        .map(|s| s.tools_list.tool_count)
        .sum();
    let price = report.pricing.as_ref().map(|p| p.input_usd_per_mtok);
    for s in &mut report.servers {
        s.clients.clear();
        if s.status != Status::Ok {
            continue;
        }
        let all: Vec<&str> = s.tools.iter().map(|t| t.name.as_str()).collect();
        // the priced tokenizer's tokens per primary token, for this server's definitions
        let ratio = match &s.cost {
            Some(c) if s.tools_list.model_tokens > 0 => {
                c.tokens_per_turn as f64 / s.tools_list.model_tokens as f64
            }
            _ => 1.0,
        };
        for profile in &report.clients {
            // a client that reads the first page only is offered that page's tools
            let offered = offered(profile, &s.tools_list);
            let names = &all[..offered.unwrap_or(all.len())];
            let deferred = match profile.schema.mode {
                SchemaMode::Full => false,
                SchemaMode::Deferred | SchemaMode::Names => true,
                SchemaMode::DeferredOver => {
                    total_tools > profile.schema.over_tools.unwrap_or(usize::MAX)
                }
            };
            let tokens = match (deferred, offered) {
                (true, _) => tokenizer.count(&deferred_names(profile, &s.name, names)),
                (false, None) => s.tools_list.model_tokens,
                (false, Some(n)) => s.tools[..n].iter().map(|t| t.model_tokens).sum(),
            };
            if let Some(n) = offered {
                let past: std::collections::HashSet<&str> = all[n..].iter().copied().collect();
                for p in s
                    .probes
                    .iter_mut()
                    .filter(|p| past.contains(p.tool.as_str()))
                {
                    for c in p.clients.iter_mut().filter(|c| c.client == profile.id) {
                        c.unlisted = true;
                    }
                }
            }
            let tool_rules: Vec<_> = profile
                .rules
                .iter()
                .filter(|r| r.applies == "tools")
                .collect();
            s.clients.push(ClientSchema {
                client: profile.id.clone(),
                schema_tokens_per_turn: tokens,
                deferred,
                tool_limit_exceeded: tool_rules.iter().any(|r| names.len() as u64 > r.threshold),
                usd_per_1k_turns: price.map(|p| 1000.0 * tokens as f64 * ratio * p / 1e6),
                confirmed: profile.schema.sourced.confirmed
                    && tool_rules.iter().all(|r| r.sourced.confirmed)
                    && (offered.is_none()
                        || profile
                            .listing
                            .as_ref()
                            .is_some_and(|l| l.sourced.confirmed)),
                tools_offered: offered,
                measured: None,
            });
        }
    }
}
