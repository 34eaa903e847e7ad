//! Wrapping the entries of a JSON or JSONC client config (every client but Codex) by edits that
//! keep the file as the user wrote it: the parser locates each value and property by its byte
//! range, and an edit replaces that range and nothing else, so comments, key order, spacing and
//! every untouched entry stay byte for byte. Original values move into the wrapped entry by
//! their raw text (`${VAR}` forms and escapes as written).

use std::collections::BTreeMap;

use jsonc_parser::ast::{Object, Value as Node};
use jsonc_parser::common::Ranged;

use super::argv::{
    header_var, is_wrapped, original_command, proxy_prefix, remote_refusal, Options,
};
use super::project::header_refusal;
use super::tree::{canonical, maps, parse, prop, raw, string, twice};
use super::{picked, Edited, EntryChange, EntryOutcome};
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

fn quote(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

fn pairs(env: &[(String, String)]) -> String {
    env.iter()
        .map(|(k, v)| format!("{}: {v}", quote(k)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Add `pairs` to the object `obj`: after its last property, or as its only ones.
fn add_to_object(obj: &Object, env: &[(String, String)]) -> Edit {
    let body = pairs(env);
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

/// The edits that wrap a stdio entry.
fn wrap_stdio(
    text: &str,
    entry: &Object,
    command: &jsonc_parser::ast::ObjectProp,
    mut items: Vec<String>,
    options_env: &[(String, String)],
) -> Result<Vec<Edit>, EntryOutcome> {
    let mut edits = Vec::new();
    items.push(quote("--"));
    items.push(raw(text, &command.value));
    let after_args = match prop(entry, "args").map(|a| &a.value) {
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
        Some(_) => return Err(EntryOutcome::Skipped("`args` is not a list".into())),
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
            Some(Node::Object(env)) => edits.push(add_to_object(env, options_env)),
            Some(_) => return Err(EntryOutcome::Skipped("`env` is not an object".into())),
            None => edits.push(Edit {
                start: after_args,
                end: after_args,
                text: format!(", \"env\": {{{}}}", pairs(options_env)),
            }),
        }
    }
    Ok(edits)
}

/// The edits that wrap one entry, or why it is left alone.
fn wrap_entry(
    text: &str,
    client: ClientKind,
    name: &str,
    entry: &Object,
    options: &Options,
) -> Result<Vec<Edit>, EntryOutcome> {
    if let Some(key) = twice(entry) {
        return Err(EntryOutcome::Skipped(format!(
            "it has the key `{key}` twice (which one a client reads is its own affair)"
        )));
    }
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
            return Err(EntryOutcome::Skipped("`command` is not a string".into()));
        };
        let first = match prop(entry, "args").map(|a| &a.value) {
            Some(Node::Array(arr)) => arr.elements.first().and_then(string),
            _ => None,
        };
        if is_wrapped(c, first) {
            return Err(EntryOutcome::AlreadyWrapped);
        }
        edits.push(Edit {
            start: command.value.start(),
            end: command.value.end(),
            text: quote(&options.bin),
        });
        edits.extend(wrap_stdio(text, entry, command, items, &options_env)?);
        return Ok(edits);
    }
    let urls: Vec<_> = ["httpUrl", "serverUrl", "url"]
        .iter()
        .filter_map(|k| prop(entry, k))
        .collect();
    let url_prop = match urls.as_slice() {
        [] => {
            return Err(EntryOutcome::Skipped(
                "no `command` or `url`: an unknown shape, left as it is".into(),
            ))
        }
        [one] => *one,
        _ => {
            return Err(EntryOutcome::Skipped(
                "it has more than one of `url`, `httpUrl` and `serverUrl`".into(),
            ))
        }
    };
    let Some(url) = string(&url_prop.value) else {
        return Err(EntryOutcome::Skipped("its URL is not a string".into()));
    };
    let keys: Vec<&str> = entry.properties.iter().map(|p| p.name.as_str()).collect();
    let headers = prop(entry, "headers");
    if let Some(why) = remote_refusal(url, &keys, headers.is_some(), options) {
        return Err(EntryOutcome::Skipped(why));
    }
    if prop(entry, "env").is_some() {
        return Err(EntryOutcome::Skipped("it has both a URL and `env`".into()));
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
    if let Some(h) = headers {
        let Node::Object(h) = &h.value else {
            return Err(EntryOutcome::Skipped("`headers` is not an object".into()));
        };
        let mut taken = Vec::new();
        for header in &h.properties {
            let Some(value) = string(&header.value) else {
                return Err(EntryOutcome::Skipped(format!(
                    "header `{}` is not a string",
                    header.name.as_str()
                )));
            };
            if let Some(why) = options
                .shared
                .and_then(|c| header_refusal(c, header.name.as_str(), value))
            {
                return Err(EntryOutcome::Skipped(why));
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

/// The edits that take one wrapped entry back: its recorded original text while the entry is
/// still as `wrap` left it; else (edited by hand since, or wrapped elsewhere) a stdio entry's
/// command and arguments from what follows `--`, everything else in it kept.
fn unwrap_entry(
    text: &str,
    entry_node: &Node,
    entry: &Object,
    original: Option<&String>,
    as_wrapped: Option<&String>,
) -> Result<(Vec<Edit>, EntryOutcome), EntryOutcome> {
    let command = prop(entry, "command").and_then(|c| string(&c.value).map(|s| (c, s)));
    let args = match prop(entry, "args").map(|a| &a.value) {
        Some(Node::Array(arr)) => Some(arr),
        _ => None,
    };
    let first = args.and_then(|a| a.elements.first()).and_then(string);
    let Some((command, _)) = command.filter(|(_, c)| is_wrapped(c, first)) else {
        return Err(EntryOutcome::NotWrapped);
    };
    let untouched = as_wrapped.is_some_and(|w| *w == canonical(text, entry_node));
    if let (Some(original), true) = (original, untouched) {
        let edit = Edit {
            start: entry_node.start(),
            end: entry_node.end(),
            text: original.clone(),
        };
        return Ok((vec![edit], EntryOutcome::Restored));
    }
    let arr = args.expect("a wrapped entry has args");
    let strings: Vec<String> = arr
        .elements
        .iter()
        .map(|e| string(e).unwrap_or("").to_string())
        .collect();
    let Some(cmd) = original_command(&strings) else {
        return Err(EntryOutcome::Skipped(match original {
            Some(_) => "a remote entry edited by hand since it was wrapped: left wrapped (its \
                        original is in wrap's record)"
                .into(),
            None => "wrapped from a URL, and mcp-budget has no record of the original: left \
                     wrapped"
                .into(),
        }));
    };
    let at = strings.len() - cmd.len();
    let rest: Vec<String> = arr.elements[at + 1..]
        .iter()
        .map(|e| raw(text, e))
        .collect();
    let edits = vec![
        Edit {
            start: command.value.start(),
            end: command.value.end(),
            text: raw(text, &arr.elements[at]),
        },
        Edit {
            start: arr.start(),
            end: arr.end(),
            text: format!("[{}]", rest.join(", ")),
        },
    ];
    Ok((edits, EntryOutcome::Rebuilt))
}

/// Every server entry of the file: (key path, name, its node).
fn entries<'a>(
    client: ClientKind,
    root: &'a Option<Node<'a>>,
) -> Result<Vec<(String, &'a str, &'a Node<'a>)>, String> {
    let Some(Node::Object(root)) = root else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (map_key, map) in maps(client, root)? {
        for p in &map.properties {
            let name = p.name.as_str();
            out.push((format!("{map_key}.{name}"), name, &p.value));
        }
    }
    Ok(out)
}

/// Wrap the picked entries of a file.
pub(super) fn wrap(
    text: &str,
    client: ClientKind,
    servers: &[String],
    options: &Options,
) -> Result<Edited, String> {
    let root = parse(text)?;
    let mut edits = Vec::new();
    let mut out = Edited::default();
    for (key, name, node) in entries(client, &root)? {
        if !picked(servers, name) {
            continue;
        }
        let outcome = match node {
            Node::Object(entry) => match wrap_entry(text, client, name, entry, options) {
                Ok(e) => {
                    edits.extend(e);
                    out.originals.insert(key.clone(), raw(text, node));
                    EntryOutcome::Wrapped
                }
                Err(outcome) => outcome,
            },
            _ => EntryOutcome::Skipped("not an object: an unknown shape, left as it is".into()),
        };
        out.entries.push(EntryChange {
            key,
            server: name.to_string(),
            outcome,
        });
    }
    out.text = apply(text, edits);
    // each wrapped entry as wrap leaves it, to tell a hand edit from it at unwrap
    let after = parse(&out.text)?;
    for (key, _, node) in entries(client, &after)? {
        if out.originals.contains_key(&key) {
            out.wrapped.insert(key, canonical(&out.text, node));
        }
    }
    Ok(out)
}

/// Unwrap the picked wrapped entries of a file with the recorded originals (by key) and the
/// entries as `wrap` left them.
pub(super) fn unwrap(
    text: &str,
    client: ClientKind,
    servers: &[String],
    originals: &BTreeMap<String, String>,
    wrapped: &BTreeMap<String, String>,
) -> Result<Edited, String> {
    let root = parse(text)?;
    let mut edits = Vec::new();
    let mut out = Edited::default();
    for (key, name, node) in entries(client, &root)? {
        let Node::Object(entry) = node else {
            continue;
        };
        if !picked(servers, name) {
            continue;
        }
        let outcome = match unwrap_entry(text, node, entry, originals.get(&key), wrapped.get(&key))
        {
            Ok((e, outcome)) => {
                edits.extend(e);
                outcome
            }
            // listed only when the caller named it
            Err(EntryOutcome::NotWrapped) if servers.is_empty() => continue,
            Err(outcome) => outcome,
        };
        out.entries.push(EntryChange {
            key,
            server: name.to_string(),
            outcome,
        });
    }
    out.text = apply(text, edits);
    Ok(out)
}
