//! The tool definitions a client sends its model per turn, as it sends them: found in the
//! first model request that carries tools, compared with what the server listed (from the
//! tap): how many are there whole, by name only, or not at all; in a namespace or plain; the
//! bytes and tokens they take; and how the client rewrote them (name pattern, keys dropped or
//! added, parameters added).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::model::Recorded;
use crate::ground::tokens::Tokenizer;

/// The keys a client may put a tool's input schema under.
const SCHEMA_KEYS: [&str; 5] = [
    "input_schema",
    "inputSchema",
    "parameters",
    "parametersJsonSchema",
    "parameters_json_schema",
];

/// How a client presents a server's tools on the first turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Form {
    /// Every tool's definition, as plain tools.
    Whole,
    /// Every tool's definition, inside a namespace item.
    Namespace,
    /// Some tools' definitions only (the rest not sent at all).
    Partial,
    /// Names only: definitions load after the model searches for them.
    Deferred,
    /// Neither definitions nor names (a code-mode bridge, or the tools never loaded).
    Hidden,
}

/// The definitions one client sent for one server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Definitions {
    pub form: Form,
    pub server_tools: usize,
    /// Tools whose definition was in the first turn.
    pub defined: usize,
    /// Tools present by name only.
    pub named: usize,
    /// The definitions as sent (compact JSON of each definition object, or of the namespace).
    pub bytes: usize,
    pub tokens: usize,
    /// The server's own definitions, compact JSON, for comparison.
    pub server_bytes: usize,
    pub server_tokens: usize,
    /// The name the model sees, with the server's name as `{tool}` (e.g. `mcp__demo__{tool}`).
    pub name_pattern: Option<String>,
    /// Keys of the server's definitions (top level and inside schemas) never sent.
    pub dropped: Vec<String>,
    /// Keys the client added (top level and inside schemas).
    pub added: Vec<String>,
    /// Parameters the client added to every tool.
    pub added_parameters: Vec<String>,
    /// Deferred: what the client's profile says it sends of these tools every turn (its
    /// `tool_name` and `deferred_line`), to set beside `tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modelled_tokens: Option<usize>,
}

/// Measure the definitions of `server_tools` in the first request with tools.
pub fn measure(server_tools: &[Value], requests: &[Recorded], tokenizer: Tokenizer) -> Definitions {
    let server_bytes: usize = server_tools.iter().map(|t| t.to_string().len()).sum();
    let server_tokens = server_tools
        .iter()
        .map(|t| tokenizer.count(&t.to_string()))
        .sum();
    let first = requests
        .iter()
        .filter_map(|r| serde_json::from_slice::<Value>(&r.body).ok())
        .find(has_tools);
    let mut d = Definitions {
        form: Form::Hidden,
        server_tools: server_tools.len(),
        defined: 0,
        named: 0,
        bytes: 0,
        tokens: 0,
        server_bytes,
        server_tokens,
        name_pattern: None,
        dropped: Vec::new(),
        added: Vec::new(),
        added_parameters: Vec::new(),
        modelled_tokens: None,
    };
    let Some(body) = first else {
        return d;
    };
    let text = body.to_string();
    let mut sent_defs = Vec::new();
    let mut namespaces = BTreeSet::new();
    for tool in server_tools {
        let name = tool["name"].as_str().unwrap_or("");
        match find_definition(&body, tool) {
            Some((def, ns)) => {
                if let Some(ns) = ns {
                    namespaces.insert(ns.to_string());
                }
                sent_defs.push((tool, def));
            }
            None if !name.is_empty() && text.contains(name) => d.named += 1,
            None => {}
        }
    }
    d.defined = sent_defs.len();
    d.form = match (d.defined, d.named) {
        (n, _) if n == server_tools.len() && n > 0 && !namespaces.is_empty() => Form::Namespace,
        (n, _) if n == server_tools.len() && n > 0 => Form::Whole,
        (0, 0) => Form::Hidden,
        (0, _) => Form::Deferred,
        _ => Form::Partial,
    };
    let counted: Vec<String> = if d.form == Form::Deferred {
        // what a deferring client sends every turn: the lines that name the tools
        let names: Vec<&str> = server_tools
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        vec![naming_lines(&body, &names).join("\n")]
    } else if namespaces.is_empty() {
        sent_defs.iter().map(|(_, def)| def.to_string()).collect()
    } else {
        namespace_items(&body, &namespaces)
    };
    d.bytes = counted.iter().map(String::len).sum();
    d.tokens = counted.iter().map(|t| tokenizer.count(t)).sum();
    compare(&mut d, &sent_defs);
    d
}

fn has_tools(body: &Value) -> bool {
    body["tools"].as_array().is_some_and(|t| !t.is_empty())
}

/// The object that defines `tool` in a request (a `name` equal to its name or ending in
/// `_name`, `.name` or `-name`, with a schema that takes its parameters), and the namespace it
/// sits in.
fn find_definition<'a>(body: &'a Value, tool: &Value) -> Option<(&'a Value, Option<&'a str>)> {
    let name = tool["name"].as_str().unwrap_or("");
    let mut stack: Vec<(&Value, Option<&str>)> = vec![(&body["tools"], None)];
    while let Some((v, ns)) = stack.pop() {
        match v {
            Value::Array(a) => stack.extend(a.iter().map(|x| (x, ns))),
            Value::Object(o) => {
                let own = o.get("name").and_then(Value::as_str);
                if own.is_some_and(|n| names_tool(n, name)) && defines(v) && takes(v, tool) {
                    return Some((v, ns));
                }
                let inner_ns = if o.get("type").and_then(Value::as_str) == Some("namespace") {
                    own
                } else {
                    ns
                };
                for (k, x) in o {
                    if !SCHEMA_KEYS.contains(&k.as_str()) {
                        stack.push((x, inner_ns));
                    }
                }
            }
            _ => {}
        }
    }
    None
}

fn names_tool(sent: &str, tool: &str) -> bool {
    sent == tool
        || sent
            .strip_suffix(tool)
            .is_some_and(|p| p.ends_with(['_', '.', '-']))
}

fn defines(v: &Value) -> bool {
    SCHEMA_KEYS.iter().any(|k| v.get(*k).is_some())
        || v.get("function")
            .is_some_and(|f| SCHEMA_KEYS.iter().any(|k| f.get(*k).is_some()))
}

/// Whether a definition that lists parameters lists every parameter of the server's tool: a
/// client's own tool of the same name (Qwen Code's `read_file` with `file_path`, beside the
/// server's deferred `read_file` with `path`) is not the server's.
fn takes(def: &Value, tool: &Value) -> bool {
    let def = def.get("function").unwrap_or(def);
    let sent = SCHEMA_KEYS
        .iter()
        .find_map(|k| def.get(*k))
        .map(props)
        .unwrap_or_default();
    sent.is_empty() || props(&tool["inputSchema"]).is_subset(&sent)
}

/// Every line of the request's texts that names one of `tools` (as a name of its own: after
/// the start of the line, `_`, `.`, `-` or `"`, before its end, `"`, `:`, `,`, `)` or a space),
/// each once: a deferring client's list of names, or of names and descriptions, that it sends
/// every turn. A server's instructions that mention a tool in a sentence are not such a line.
fn naming_lines(body: &Value, tools: &[&str]) -> Vec<String> {
    let mut texts: Vec<&str> = Vec::new();
    let mut stack = vec![body];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => texts.push(s),
            Value::Array(a) => stack.extend(a.iter().rev()),
            Value::Object(o) => stack.extend(o.values().rev()),
            _ => {}
        }
    }
    let names = |line: &str| {
        tools.iter().any(|t| {
            line.match_indices(t).any(|(at, _)| {
                let before = line[..at].chars().next_back();
                let after = line[at + t.len()..].chars().next();
                before.is_none_or(|c| matches!(c, '_' | '.' | '-' | '"'))
                    && after.is_none_or(|c| matches!(c, '"' | ':' | ',' | ')' | ' '))
            })
        })
    };
    let mut seen = BTreeSet::new();
    texts
        .iter()
        .flat_map(|t| t.lines())
        .filter(|l| names(l) && seen.insert(*l))
        .map(String::from)
        .collect()
}

/// The compact JSON of each namespace item the tools were found in.
fn namespace_items(body: &Value, names: &BTreeSet<String>) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| {
            t["type"] == "namespace" && t["name"].as_str().is_some_and(|n| names.contains(n))
        })
        .map(Value::to_string)
        .collect()
}

/// Name pattern, keys dropped and added, parameters added: compared over every tool sent.
fn compare(d: &mut Definitions, sent: &[(&Value, &Value)]) {
    let mut dropped = BTreeSet::new();
    let mut added = BTreeSet::new();
    let mut params: Option<BTreeSet<String>> = None;
    for (server, def) in sent {
        let def = def.get("function").unwrap_or(def);
        let name = server["name"].as_str().unwrap_or("");
        if let Some(sent_name) = def["name"].as_str() {
            d.name_pattern
                .get_or_insert_with(|| sent_name.replacen(name, "{tool}", 1));
        }
        let server_schema = &server["inputSchema"];
        let sent_schema = SCHEMA_KEYS
            .iter()
            .find_map(|k| def.get(*k))
            .unwrap_or(&Value::Null);
        let (s_keys, d_keys) = (keys(server_schema), keys(sent_schema));
        dropped.extend(
            s_keys
                .difference(&d_keys)
                .map(|k| format!("inputSchema.{k}")),
        );
        added.extend(d_keys.difference(&s_keys).map(|k| format!("schema.{k}")));
        for k in server.as_object().into_iter().flatten().map(|(k, _)| k) {
            if k != "inputSchema" && k != "name" && k != "description" && def.get(k).is_none() {
                dropped.insert(k.clone());
            }
        }
        for k in def.as_object().into_iter().flatten().map(|(k, _)| k) {
            if !SCHEMA_KEYS.contains(&k.as_str()) && server.get(k).is_none() {
                added.insert(k.clone());
            }
        }
        let extra: BTreeSet<String> = props(sent_schema)
            .difference(&props(server_schema))
            .cloned()
            .collect();
        params = Some(match params {
            None => extra,
            Some(p) => p.intersection(&extra).cloned().collect(),
        });
    }
    d.dropped = dropped.into_iter().collect();
    d.added = added.into_iter().collect();
    d.added_parameters = params.unwrap_or_default().into_iter().collect();
}

/// Every key used anywhere in a schema (property names excluded).
fn keys(schema: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![(schema, false)];
    while let Some((v, in_props)) = stack.pop() {
        match v {
            Value::Object(o) => {
                for (k, x) in o {
                    if !in_props {
                        out.insert(k.clone());
                    }
                    stack.push((
                        x,
                        !in_props && (k == "properties" || k == "$defs" || k == "definitions"),
                    ));
                }
            }
            Value::Array(a) => stack.extend(a.iter().map(|x| (x, false))),
            _ => {}
        }
    }
    out
}

fn props(schema: &Value) -> BTreeSet<String> {
    schema["properties"]
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;

/// What `profile` says a deferring client sends every turn of a server's `tools`.
pub fn modelled_deferred(
    profile: &crate::config::profiles::ClientProfile,
    server: &str,
    tools: &[Value],
    tokenizer: Tokenizer,
) -> usize {
    // the name and the description's first line, as the audit keeps them (no tokens counted)
    let heads: Vec<(&str, String)> = tools
        .iter()
        .map(|t| {
            let name = t["name"].as_str().unwrap_or("");
            (name, crate::measure::description_head(t.get("description")))
        })
        .collect();
    let pairs: Vec<(&str, &str)> = heads.iter().map(|(n, d)| (*n, d.as_str())).collect();
    tokenizer.count(&crate::judge::assess::clients::deferred_names(
        profile, server, &pairs,
    ))
}
