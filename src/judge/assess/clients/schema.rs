//! What each client sends per turn of each server's tool definitions: every definition (the
//! measured model view), or the tool names alone when the client defers definitions until the
//! model searches for them. Server instructions are sent alike by every client and are counted
//! apart (`instructions_tokens`); the dollar figure is in the report's priced tokenizer.

use std::collections::HashSet;
use std::str::FromStr;

use crate::measure::facts::ClientSchema;

use crate::config::profiles::{ClientProfile, SchemaMode};
use crate::ground::tokens::Tokenizer;
use crate::measure::facts::{Report, ServerReport, Status};

/// What a deferring client shows every turn of a server's tools (`tools`: each name and its
/// description's first line): a name each, as the client spells it (`mcp__server__tool` for
/// Claude Code), or with the profile's `deferred_line` a line each with the description, under
/// its `deferred_server_line`.
pub fn deferred_names(profile: &ClientProfile, server: &str, tools: &[(&str, &str)]) -> String {
    let template = profile.tool_name.as_deref().unwrap_or("{tool}");
    let schema = &profile.schema;
    let mut lines: Vec<String> = schema
        .deferred_server_line
        .iter()
        .map(|h| h.replace("{server}", server))
        .collect();
    for (tool, description) in tools {
        let name = template.replace("{server}", server).replace("{tool}", tool);
        lines.push(match &schema.deferred_line {
            None => name,
            Some(line) => {
                let cut = cut_description(description, schema.description_chars);
                line.replace("{name}", &name)
                    .replace("{description}", &serde_json::Value::from(cut).to_string())
            }
        });
    }
    lines.join("\n")
}

/// A description's first line cut to `chars` characters, its last three made `...` (Qwen
/// Code's cut of a deferred tool's description).
fn cut_description(line: &str, chars: Option<usize>) -> String {
    match chars {
        Some(n) if line.chars().count() > n => {
            let kept: String = line.chars().take(n.saturating_sub(3)).collect();
            kept + "..."
        }
        _ => line.to_string(),
    }
}

/// What a client that adds a property to every tool's schema (`adds_parameter`) adds to each
/// definition: the property's compact JSON after a comma.
fn added_per_tool(profile: &ClientProfile) -> Option<String> {
    let added: serde_json::Value =
        serde_json::from_str(profile.schema.adds_parameter.as_ref()?).ok()?;
    let inner = added.to_string();
    Some(format!(",{}", inner.strip_prefix('{')?.strip_suffix('}')?))
}

/// How many of a server's tools a client offers its model when that is fewer than it lists:
/// the first page's, for a client that reads no further, or those of the pages it reads until
/// it has `max_tools` (unknown in an old report: all).
fn offered(
    profile: &ClientProfile,
    (pages, first_page, all): (usize, usize, usize),
    page_tools: &[usize],
) -> Option<usize> {
    if profile.first_page_only() {
        return (pages > 1 && first_page > 0 && first_page < all).then_some(first_page);
    }
    let max = profile.listing.as_ref()?.max_tools?;
    let mut read = 0;
    for n in page_tools {
        if read >= max {
            break;
        }
        read += n;
    }
    (read > 0 && read < all).then_some(read)
}

/// The listing a client is offered: its tools' names and model-view tokens, the protocol
/// version it is in when the server lists the eras differently, and how many tools the client
/// offers when fewer (`offered`).
struct Listing<'a> {
    /// Each tool's name and its description's first line.
    names: Vec<(&'a str, &'a str)>,
    tokens: Vec<usize>,
    era: Option<String>,
    offered: Option<usize>,
    /// The listing is the handshake era's (counted in the primary tokenizer only).
    from_handshake: bool,
}

fn listing<'a>(profile: &ClientProfile, s: &'a ServerReport) -> Listing<'a> {
    let list = &s.tools_list;
    let handshake = profile.era.as_ref().is_some_and(|e| e.handshake());
    match &list.handshake_era {
        Some(old) if handshake => Listing {
            names: old.tools.iter().map(|t| (t.as_str(), "")).collect(),
            tokens: old.tool_tokens.clone(),
            era: Some(old.protocol_version.clone()),
            offered: offered(
                profile,
                (old.pages, old.first_page_tools, old.tool_count),
                &[],
            ),
            from_handshake: true,
        },
        other => Listing {
            names: s
                .tools
                .iter()
                .map(|t| (t.name.as_str(), t.description_head.as_str()))
                .collect(),
            tokens: s.tools.iter().map(|t| t.model_tokens).collect(),
            era: other.as_ref().and(s.protocol_version.clone()),
            offered: offered(
                profile,
                (list.pages, list.first_page_tools, list.tool_count),
                &list.page_tools,
            ),
            from_handshake: false,
        },
    }
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
            // a client of the handshake era is offered that era's listing, and a client that
            // reads the first page only that page's tools
            let model = profile
                .model_tokenizer()
                .filter(|m| m.name() != tokenizer.name());
            let added = added_per_tool(profile);
            let (tokens, offered, era, names_len, unseen, model_tokens) = {
                let l = listing(profile, s);
                let names = &l.names[..l.offered.unwrap_or(l.names.len())];
                // a property the client adds to each definition costs that much per tool
                let added = |t: crate::ground::tokens::Tokenizer| match (&added, deferred) {
                    (Some(a), false) => t.count(a) * names.len(),
                    _ => 0,
                };
                let tokens = added(tokenizer)
                    + match (deferred, l.offered, &l.era) {
                        (true, _, _) => tokenizer.count(&deferred_names(profile, &s.name, names)),
                        (false, None, None) => s.tools_list.model_tokens,
                        (false, n, _) => l.tokens[..n.unwrap_or(l.tokens.len())].iter().sum(),
                    };
                // a probe of a listed tool the client is not offered never reaches its model
                let seen: HashSet<&str> = names.iter().map(|n| n.0).collect();
                let listed: HashSet<&str> = s.tools.iter().map(|t| t.name.as_str()).collect();
                let unseen: Vec<usize> = (0..s.probes.len())
                    .filter(|&i| {
                        let tool = s.probes[i].tool.as_str();
                        listed.contains(tool) && !seen.contains(tool)
                    })
                    .collect();
                // the same in the model's tokenizer: the names counted, or each offered tool's
                // view as the audit counted it in that tokenizer
                let model_tokens = model.and_then(|m| match (deferred, l.from_handshake) {
                    (true, _) => Some(m.count(&deferred_names(profile, &s.name, names))),
                    (false, true) => None,
                    (false, false) => s.tools[..names.len()]
                        .iter()
                        .map(|t| t.by_tokenizer.get(m.name()).copied())
                        .sum::<Option<usize>>()
                        .map(|n| n + added(m)),
                });
                (tokens, l.offered, l.era, names.len(), unseen, model_tokens)
            };
            for i in unseen {
                for c in s.probes[i].clients.iter_mut() {
                    if c.client == profile.id {
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
                tool_limit_exceeded: tool_rules.iter().any(|r| names_len as u64 > r.threshold),
                usd_per_1k_turns: price.map(|p| 1000.0 * tokens as f64 * ratio * p / 1e6),
                confirmed: profile.schema.sourced.confirmed
                    && tool_rules.iter().all(|r| r.sourced.confirmed)
                    && (offered.is_none()
                        || profile
                            .listing
                            .as_ref()
                            .is_some_and(|l| l.sourced.confirmed)),
                tools_offered: offered,
                listing_era: era,
                model_tokenizer: model.map(|m| m.name().to_string()),
                model_tokens_per_turn: model_tokens,
                measured: None,
            });
        }
    }
}
