//! Reading a JSON or JSONC client config as the parser located it: the file's maps of servers
//! by key path, a property by name, raw text by byte range, an entry's value in a canonical
//! form (to tell an entry edited by hand from the one `wrap` wrote), and every secret the file
//! holds as written.

use jsonc_parser::ast::{Object, ObjectProp, Value as Node};
use jsonc_parser::common::Ranged;
use jsonc_parser::{parse_to_ast, CollectOptions};

use crate::config::{is_secret_name, ClientKind};

/// The parsed file (None for a file with no value: empty, or comments only), or why it
/// cannot be edited.
pub(super) fn parse(text: &str) -> Result<Option<Node<'_>>, String> {
    let parsed = parse_to_ast(
        text,
        &CollectOptions::default(),
        &crate::config::jsonc_dialect(),
    )
    .map_err(|e| {
        format!(
            "not JSON: {} at line {} column {}",
            e.kind(),
            e.line_display(),
            e.column_display()
        )
    })?;
    match parsed.value {
        None => Ok(None),
        Some(v @ Node::Object(_)) => Ok(Some(v)),
        Some(_) => Err("not a JSON object: an unknown shape, left as it is".into()),
    }
}

pub(super) fn prop<'a>(obj: &'a Object<'a>, name: &str) -> Option<&'a ObjectProp<'a>> {
    obj.properties.iter().find(|p| p.name.as_str() == name)
}

pub(super) fn string<'a>(node: &'a Node<'a>) -> Option<&'a str> {
    node.as_string_lit().map(|s| s.value.as_ref())
}

pub(super) fn raw(text: &str, node: &impl Ranged) -> String {
    text[node.start()..node.end()].to_string()
}

/// The first name that appears twice among an object's keys.
pub(super) fn twice<'a>(obj: &'a Object<'a>) -> Option<&'a str> {
    let mut seen = std::collections::HashSet::new();
    obj.properties
        .iter()
        .map(|p| p.name.as_str())
        .find(|n| !seen.insert(*n))
}

/// An entry's value, canonical (parsed and written compact): two texts of one value, however
/// spaced or commented, give the same string.
pub(super) fn canonical(text: &str, node: &Node) -> String {
    crate::config::parse_jsonc(&raw(text, node))
        .map(|v| v.to_string())
        .unwrap_or_default()
}

/// The maps of servers in a client's file, by key path (`mcpServers`,
/// `projects./p.mcpServers`, `servers`, `mcp.servers`); a map that is not an object, or that
/// names a server twice, is an unknown shape.
pub(super) fn maps<'a>(
    client: ClientKind,
    root: &'a Object<'a>,
) -> Result<Vec<(String, &'a Object<'a>)>, String> {
    let mut out = Vec::new();
    let mut add = |key: String, node: Option<&'a Node<'a>>| -> Result<(), String> {
        match node {
            None => Ok(()),
            Some(Node::Object(o)) => {
                if let Some(name) = twice(o) {
                    return Err(format!(
                        "`{key}` names the server `{name}` twice: left as it is"
                    ));
                }
                out.push((key, o));
                Ok(())
            }
            Some(_) => Err(format!(
                "`{key}` is not an object: an unknown shape, left as it is"
            )),
        }
    };
    if client == ClientKind::VsCode {
        add("servers".into(), prop(root, "servers").map(|p| &p.value))?;
        if let Some(Node::Object(mcp)) = prop(root, "mcp").map(|p| &p.value) {
            add("mcp.servers".into(), prop(mcp, "servers").map(|p| &p.value))?;
        }
    } else {
        add(
            "mcpServers".into(),
            prop(root, "mcpServers").map(|p| &p.value),
        )?;
    }
    if client == ClientKind::ClaudeCode {
        if let Some(Node::Object(projects)) = prop(root, "projects").map(|p| &p.value) {
            for p in &projects.properties {
                if let Node::Object(body) = &p.value {
                    add(
                        format!("projects.{}.mcpServers", p.name.as_str()),
                        prop(body, "mcpServers").map(|p| &p.value),
                    )?;
                }
            }
        }
    }
    Ok(out)
}

/// Every secret the file holds as written, duplicates and all: each header value, each `env`
/// value and each string under a secret-looking key anywhere (a one-line `~/.claude.json`
/// shows its `primaryApiKey` in any diff line), as (name, value) with the value both decoded
/// and as its raw text (a `\/` or `\u002d` escape is matched as written).
pub(super) fn secrets(text: &str) -> Vec<(String, String)> {
    let Ok(Some(root)) = parse(text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let push = |out: &mut Vec<(String, String)>, name: String, node: &Node| {
        if let Some(s) = node.as_string_lit() {
            out.push((name.clone(), s.value.to_string()));
            let inner = &text[s.start() + 1..s.end().saturating_sub(1)];
            out.push((name, inner.to_string()));
        }
    };
    let mut walk: Vec<(&str, &Node)> = vec![("", &root)];
    while let Some((key, node)) = walk.pop() {
        match node {
            Node::Object(o) => {
                for p in &o.properties {
                    let name = p.name.as_str();
                    let whole = matches!(key, "headers" | "http_headers");
                    if whole || is_secret_name(name) {
                        push(&mut out, format!("{key} {name}"), &p.value);
                    } else if let Some(v) = string(&p.value) {
                        // a credential inside a URL-like value (`postgres://u:PASS@h`)
                        for s in crate::config::env_secrets([(name, v)]) {
                            out.push((s.name.clone(), s.value.clone()));
                        }
                    }
                    walk.push((name, &p.value));
                }
            }
            Node::Array(a) => walk.extend(a.elements.iter().map(|e| (key, e))),
            _ => {}
        }
    }
    out
}
