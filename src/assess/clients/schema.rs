//! What each client sends per turn of each server's tool definitions: every definition (the
//! measured model view), or the tool names alone when the client defers definitions until the
//! model searches for them. Server instructions are sent alike by every client and are counted
//! apart (`instructions_tokens`); the dollar figure is in the report's priced tokenizer.

use std::str::FromStr;

use crate::facts::ClientSchema;

use crate::facts::{Report, Status};
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
        let names: Vec<&str> = s.tools.iter().map(|t| t.name.as_str()).collect();
        // the priced tokenizer's tokens per primary token, for this server's definitions
        let ratio = match &s.cost {
            Some(c) if s.tools_list.model_tokens > 0 => {
                c.tokens_per_turn as f64 / s.tools_list.model_tokens as f64
            }
            _ => 1.0,
        };
        for profile in &report.clients {
            let deferred = match profile.schema.mode {
                SchemaMode::Full => false,
                SchemaMode::Deferred | SchemaMode::Names => true,
                SchemaMode::DeferredOver => {
                    total_tools > profile.schema.over_tools.unwrap_or(usize::MAX)
                }
            };
            let tokens = if deferred {
                tokenizer.count(&deferred_names(profile, &s.name, &names))
            } else {
                s.tools_list.model_tokens
            };
            let tool_rules: Vec<_> = profile
                .rules
                .iter()
                .filter(|r| r.applies == "tools")
                .collect();
            s.clients.push(ClientSchema {
                client: profile.id.clone(),
                schema_tokens_per_turn: tokens,
                deferred,
                tool_limit_exceeded: tool_rules
                    .iter()
                    .any(|r| s.tools_list.tool_count as u64 > r.threshold),
                usd_per_1k_turns: price.map(|p| 1000.0 * tokens as f64 * ratio * p / 1e6),
                confirmed: profile.schema.sourced.confirmed
                    && tool_rules.iter().all(|r| r.sourced.confirmed),
                measured: None,
            });
        }
    }
}
