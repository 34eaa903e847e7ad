//! Wrapping the entries of a JSON or JSONC client config (every client but Codex) by edits that
//! keep the file as the user wrote it: the parser locates each value and property by its byte
//! range, and an edit replaces that range and nothing else, so comments, key order, spacing and
//! every untouched entry stay byte for byte. Original values move into the wrapped entry by
//! their raw text (`${VAR}` forms and escapes as written).

use std::collections::BTreeMap;

use jsonc_parser::ast::{Object, ObjectProp, Value as Node};
use jsonc_parser::common::Ranged;
use jsonc_parser::{parse_to_ast, CollectOptions};

use super::argv::{header_var, is_wrapped, original_command, proxy_prefix, Options};
use super::{EntryChange, Outcome, Wrapped};
use crate::config::ClientKind;

/// One replacement of `start..end`.
struct Edit {
    start: usize,
    end: usize,
    text: String,
}

/// The text with the edits made (they never overlap).
fn apply(text: &str, mut edits: Vec<Edit>) -> String {
    edits.sort_by_key(|e| e.start);
    let mut out = String::with_capacity(text.len() + 256);
    let mut at = 0;
    for e in edits {
        debug_assert!(e.start >= at, "overlapping edits");
        out.push_str(&text[at..e.start]);
        out.push_str(&e.text);
        at = e.end;
    }
    out.push_str(&text[at..]);
    out
}

/// The parsed file, or why it cannot be edited.
fn parse(text: &str) -> Result<Node<'_>, String> {
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
        Some(v @ Node::Object(_)) => Ok(v),
        _ => Err("not a JSON object: an unknown shape, left as it is".into()),
    }
}

fn prop<'a>(obj: &'a Object<'a>, name: &str) -> Option<&'a ObjectProp<'a>> {
    obj.properties.iter().find(|p| p.name.as_str() == name)
}

fn string<'a>(node: &'a Node<'a>) -> Option<&'a str> {
    node.as_string_lit().map(|s| s.value.as_ref())
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

fn raw(text: &str, node: &impl Ranged) -> String {
    text[node.start()..node.end()].to_string()
}

/// The maps of servers in a client's file, by key path (`mcpServers`,
/// `projects./p.mcpServers`, `servers`, `mcp.servers`); a map that is not an object is an
/// unknown shape.
fn maps<'a>(
    client: ClientKind,
    root: &'a Object<'a>,
) -> Result<Vec<(String, &'a Object<'a>)>, String> {
    let mut out = Vec::new();
    let mut add = |key: String, node: Option<&'a Node<'a>>| -> Result<(), String> {
        match node {
            None => Ok(()),
            Some(Node::Object(o)) => {
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

/// Add `pairs` to the object `obj`: after its last property, or as its only ones.
fn add_to_object(obj: &Object, pairs: &[(String, String)]) -> Edit {
    let body = self::pairs(pairs);
    match obj.properties.last() {
        Some(last) => Edit {
            start: last.end(),
            end: last.end(),
            text: format!(", {body}"),
        },
        None => Edit {
            start: obj.start(),
            end: obj.end(),
            text: format!("{{{body}}}"),
        },
    }
}

/// The edits that wrap one entry, or why it is left alone.
fn wrap_entry(
    text: &str,
    client: ClientKind,
    name: &str,
    entry: &Object,
    options: &Options,
) -> Result<Vec<Edit>, Outcome> {
    let mut items: Vec<String> = proxy_prefix(client, name, options)
        .iter()
        .map(|s| quote(s))
        .collect();
    let options_env: Vec<(String, String)> = options
        .env
        .iter()
        .map(|(k, v)| (k.clone(), quote(v)))
        .collect();
    let mut edits = Vec::new();
    if let Some(command) = prop(entry, "command") {
        let Some(c) = string(&command.value) else {
            return Err(Outcome::Skipped("`command` is not a string".into()));
        };
        let args = prop(entry, "args");
        let first = args.and_then(|a| match &a.value {
            Node::Array(arr) => arr.elements.first().and_then(string),
            _ => None,
        });
        if is_wrapped(c, first) {
            return Err(Outcome::AlreadyWrapped);
        }
        edits.push(Edit {
            start: command.value.start(),
            end: command.value.end(),
            text: quote(&options.bin),
        });
        items.push(quote("--"));
        items.push(raw(text, &command.value));
        let after_args = match args.map(|a| &a.value) {
            Some(Node::Array(arr)) if arr.elements.is_empty() => {
                edits.push(Edit {
                    start: arr.start(),
                    end: arr.end(),
                    text: format!("[{}]", items.join(", ")),
                });
                arr.end()
            }
            Some(Node::Array(arr)) => {
                // the original elements as written (comments and line breaks too), after ours
                let rest = &text[arr.start() + 1..arr.end()];
                let gap = if rest.starts_with(char::is_whitespace) {
                    ","
                } else {
                    ", "
                };
                edits.push(Edit {
                    start: arr.start(),
                    end: arr.end(),
                    text: format!("[{}{gap}{rest}", items.join(", ")),
                });
                arr.end()
            }
            Some(_) => return Err(Outcome::Skipped("`args` is not a list".into())),
            None => {
                edits.push(Edit {
                    start: command.value.end(),
                    end: command.value.end(),
                    text: format!(", \"args\": [{}]", items.join(", ")),
                });
                command.value.end()
            }
        };
        if !options_env.is_empty() {
            match prop(entry, "env").map(|p| &p.value) {
                Some(Node::Object(env)) => edits.push(add_to_object(env, &options_env)),
                Some(_) => return Err(Outcome::Skipped("`env` is not an object".into())),
                None => edits.push(Edit {
                    start: after_args,
                    end: after_args,
                    text: format!(", \"env\": {{{}}}", pairs(&options_env)),
                }),
            }
        }
        return Ok(edits);
    }
    let Some((url_prop, url)) = ["httpUrl", "serverUrl", "url"]
        .iter()
        .find_map(|k| prop(entry, k).map(|p| (p, string(&p.value))))
    else {
        return Err(Outcome::Skipped(
            "no `command` or `url`: an unknown shape, left as it is".into(),
        ));
    };
    let Some(url) = url else {
        return Err(Outcome::Skipped("its URL is not a string".into()));
    };
    if crate::config::redact_url(url) != url {
        return Err(Outcome::Skipped(
            "its URL carries a credential, which a wrapped entry would show in argv; left as it is"
                .into(),
        ));
    }
    if prop(entry, "env").is_some() {
        return Err(Outcome::Skipped("it has both a URL and `env`".into()));
    }
    let kind = ["type", "transport"]
        .iter()
        .find_map(|k| prop(entry, k))
        .map(|p| (p, string(&p.value).unwrap_or("")));
    let sse = match kind {
        Some((_, "sse")) => true,
        Some(_) => false,
        None => client == ClientKind::Gemini && url_prop.name.as_str() == "url",
    };
    items.push(quote("--upstream-url"));
    items.push(raw(text, &url_prop.value));
    if sse {
        items.push(quote("--sse"));
    }
    let mut env: Vec<(String, String)> = Vec::new();
    let headers = prop(entry, "headers");
    if let Some(h) = headers {
        let Node::Object(h) = &h.value else {
            return Err(Outcome::Skipped("`headers` is not an object".into()));
        };
        let mut taken = Vec::new();
        for header in &h.properties {
            if string(&header.value).is_none() {
                return Err(Outcome::Skipped(format!(
                    "header `{}` is not a string",
                    header.name.as_str()
                )));
            }
            let var = header_var(header.name.as_str(), &taken);
            items.push(quote("--header-env"));
            items.push(quote(&format!("{}: {var}", header.name.as_str())));
            env.push((var.clone(), raw(text, &header.value)));
            taken.push(var);
        }
    }
    env.extend(options_env);
    let mut replacement = format!(
        "\"command\": {}, \"args\": [{}]",
        quote(&options.bin),
        items.join(", ")
    );
    match headers {
        Some(h) => edits.push(Edit {
            start: h.start(),
            end: h.end(),
            text: format!("\"env\": {{{}}}", pairs(&env)),
        }),
        None if !env.is_empty() => {
            replacement += &format!(", \"env\": {{{}}}", pairs(&env));
        }
        None => {}
    }
    edits.push(Edit {
        start: url_prop.start(),
        end: url_prop.end(),
        text: replacement,
    });
    if let Some((p, _)) = kind {
        edits.push(Edit {
            start: p.value.start(),
            end: p.value.end(),
            text: quote("stdio"),
        });
    }
    Ok(edits)
}

fn pairs(env: &[(String, String)]) -> String {
    env.iter()
        .map(|(k, v)| format!("{}: {v}", quote(k)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The edits that take one wrapped entry back: its recorded original text, else (a stdio entry
/// wrapped elsewhere) the command and arguments after `--`.
fn unwrap_entry(
    text: &str,
    entry_node: &Node,
    entry: &Object,
    original: Option<&String>,
) -> Result<Vec<Edit>, Outcome> {
    let command = prop(entry, "command").and_then(|c| string(&c.value).map(|s| (c, s)));
    let args = match prop(entry, "args").map(|a| &a.value) {
        Some(Node::Array(arr)) => Some(arr),
        _ => None,
    };
    let first = args.and_then(|a| a.elements.first()).and_then(string);
    let Some((command, _)) = command.filter(|(_, c)| is_wrapped(c, first)) else {
        return Err(Outcome::NotWrapped);
    };
    if let Some(original) = original {
        return Ok(vec![Edit {
            start: entry_node.start(),
            end: entry_node.end(),
            text: original.clone(),
        }]);
    }
    let arr = args.expect("a wrapped entry has args");
    let strings: Vec<String> = arr
        .elements
        .iter()
        .map(|e| string(e).unwrap_or("").to_string())
        .collect();
    if original_command(&strings).is_none() {
        return Err(Outcome::Skipped(
            "wrapped from a URL, and mcp-budget has no record of the original: left wrapped".into(),
        ));
    }
    let at = strings.iter().position(|a| a == "--").expect("found above");
    let rest: Vec<String> = arr.elements[at + 2..]
        .iter()
        .map(|e| raw(text, e))
        .collect();
    Ok(vec![
        Edit {
            start: command.value.start(),
            end: command.value.end(),
            text: raw(text, &arr.elements[at + 1]),
        },
        Edit {
            start: arr.start(),
            end: arr.end(),
            text: format!("[{}]", rest.join(", ")),
        },
    ])
}

/// Whether the server `name` is one the caller picked (none picked: every one).
fn picked(servers: &[String], name: &str) -> bool {
    servers.is_empty() || servers.iter().any(|s| s == name)
}

/// Wrap the picked entries of a file: the new text, what happened to each entry, and the
/// original text of each entry wrapped (for `unwrap`).
pub(super) fn wrap(
    text: &str,
    client: ClientKind,
    servers: &[String],
    options: &Options,
) -> Result<Wrapped, String> {
    let root = parse(text)?;
    let Node::Object(root) = &root else {
        unreachable!("parse returns an object")
    };
    let mut edits = Vec::new();
    let mut changes = Vec::new();
    let mut originals = BTreeMap::new();
    for (map_key, map) in maps(client, root)? {
        for p in &map.properties {
            let name = p.name.as_str();
            if !picked(servers, name) {
                continue;
            }
            let key = format!("{map_key}.{name}");
            let outcome = match &p.value {
                Node::Object(entry) => match wrap_entry(text, client, name, entry, options) {
                    Ok(e) => {
                        edits.extend(e);
                        originals.insert(key.clone(), raw(text, &p.value));
                        Outcome::Wrapped
                    }
                    Err(outcome) => outcome,
                },
                _ => Outcome::Skipped("not an object: an unknown shape, left as it is".into()),
            };
            changes.push(EntryChange {
                key,
                server: name.to_string(),
                outcome,
            });
        }
    }
    Ok((apply(text, edits), changes, originals))
}

/// Unwrap the picked wrapped entries of a file with the recorded originals (by key).
pub(super) fn unwrap(
    text: &str,
    client: ClientKind,
    servers: &[String],
    originals: &BTreeMap<String, String>,
) -> Result<(String, Vec<EntryChange>), String> {
    let root = parse(text)?;
    let Node::Object(root) = &root else {
        unreachable!("parse returns an object")
    };
    let mut edits = Vec::new();
    let mut changes = Vec::new();
    for (map_key, map) in maps(client, root)? {
        for p in &map.properties {
            let name = p.name.as_str();
            let Node::Object(entry) = &p.value else {
                continue;
            };
            if !picked(servers, name) {
                continue;
            }
            let key = format!("{map_key}.{name}");
            let original = originals.get(&key);
            let outcome = match unwrap_entry(text, &p.value, entry, original) {
                Ok(e) => {
                    edits.extend(e);
                    if original.is_some() {
                        Outcome::Restored
                    } else {
                        Outcome::Rebuilt
                    }
                }
                Err(Outcome::NotWrapped) => continue,
                Err(outcome) => outcome,
            };
            changes.push(EntryChange {
                key,
                server: name.to_string(),
                outcome,
            });
        }
    }
    Ok((apply(text, edits), changes))
}
