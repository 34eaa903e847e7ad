//! Wrapping the entries of Codex's `config.toml` (`[mcp_servers.NAME]`) with `toml_edit`, a
//! format-preserving TOML editor: comments, key order and formatting outside the edited values
//! stay as written (CRLF line ends too). A remote entry's `http_headers` move into `env`;
//! `env_http_headers` and `bearer_token_env_var` name variables that Codex passes through by
//! `env_vars` (Codex starts a stdio server with only the variables it is told to pass).

use std::collections::BTreeMap;

use toml_edit::{Array, DocumentMut, InlineTable, Item, TableLike, Value};

use super::argv::{
    header_var, is_wrapped, original_command, proxy_prefix, remote_refusal, Options,
};
use super::project::header_refusal;
use super::{picked, Edited, EntryChange, EntryOutcome};
use crate::config::ClientKind;

/// The document, or why it cannot be edited: the error's line and message, never the line's
/// text (it can hold a secret).
fn parse(text: &str) -> Result<DocumentMut, String> {
    text.parse::<DocumentMut>().map_err(|e| {
        let line = e.span().map_or(0, |s| {
            text[..s.start.min(text.len())].matches('\n').count() + 1
        });
        format!(
            "not TOML: {} at line {line}",
            crate::ground::text::one_line(e.message().trim())
        )
    })
}

/// The text of a document, with the file's CRLF line ends when it had them.
fn written(doc: &DocumentMut, crlf: bool) -> String {
    let text = doc.to_string();
    if crlf {
        text.replace("\r\n", "\n").replace('\n', "\r\n")
    } else {
        text
    }
}

/// Each server entry of a Codex config as canonical JSON, by name (to tell an entry edited by
/// hand from the one `wrap` wrote).
fn canonical_entries(text: &str) -> BTreeMap<String, String> {
    let Ok(v) = toml::from_str::<toml::Value>(text) else {
        return BTreeMap::new();
    };
    v.get("mcp_servers")
        .and_then(toml::Value::as_table)
        .into_iter()
        .flatten()
        .map(|(k, e)| {
            let json = serde_json::to_value(e).unwrap_or_default();
            (format!("mcp_servers.{k}"), json.to_string())
        })
        .collect()
}

fn text_of(t: &dyn TableLike, key: &str) -> Option<String> {
    t.get(key).and_then(Item::as_str).map(str::to_string)
}

fn string_list(t: &dyn TableLike, key: &str) -> Option<Vec<String>> {
    let arr = t.get(key)?.as_array()?;
    arr.iter().map(|v| v.as_str().map(str::to_string)).collect()
}

/// A one-line array of strings.
fn array(items: &[String]) -> Value {
    let mut a = Array::new();
    for s in items {
        a.push(s.as_str());
    }
    Value::Array(a)
}

/// Replace a value in place, keeping its key, position and surrounding spaces and comments.
fn set(t: &mut dyn TableLike, key: &str, mut value: Value) {
    match t.get_mut(key) {
        Some(Item::Value(old)) => {
            *value.decor_mut() = old.decor().clone();
            *old = value;
        }
        _ => {
            t.insert(key, Item::Value(value));
        }
    }
}

/// The proxy's arguments and environment for a remote entry; the keys it replaces removed.
fn remote(
    t: &mut dyn TableLike,
    url: String,
    items: &mut Vec<String>,
    env: &mut Vec<(String, String)>,
    pass: &mut Vec<String>,
    options: &Options,
) -> Result<(), EntryOutcome> {
    let keys: Vec<String> = t.iter().map(|(k, _)| k.to_string()).collect();
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    let has_headers = ["http_headers", "env_http_headers", "bearer_token_env_var"]
        .iter()
        .any(|k| t.contains_key(k));
    if let Some(why) = remote_refusal(&url, &keys, has_headers, options) {
        return Err(EntryOutcome::Skipped(why));
    }
    items.extend(["--upstream-url".into(), url]);
    let mut taken = Vec::new();
    if let Some(h) = t.get("http_headers") {
        let h = h.as_table_like().ok_or(EntryOutcome::Skipped(
            "`http_headers` is not a table".into(),
        ))?;
        for (k, v) in h.iter() {
            let v = v.as_str().ok_or(EntryOutcome::Skipped(format!(
                "header `{k}` is not a string"
            )))?;
            if let Some(why) = options.shared.and_then(|c| header_refusal(c, k, v)) {
                return Err(EntryOutcome::Skipped(why));
            }
            let var = header_var(k, &taken);
            items.extend(["--header-env".into(), format!("{k}: {var}")]);
            env.push((var.clone(), v.to_string()));
            taken.push(var);
        }
    }
    if let Some(h) = t.get("env_http_headers") {
        let h = h.as_table_like().ok_or(EntryOutcome::Skipped(
            "`env_http_headers` is not a table".into(),
        ))?;
        for (k, v) in h.iter() {
            let var = v.as_str().ok_or(EntryOutcome::Skipped(format!(
                "header `{k}` is not a string"
            )))?;
            items.extend(["--header-env".into(), format!("{k}: {var}")]);
            pass.push(var.to_string());
        }
    }
    if let Some(var) = text_of(t, "bearer_token_env_var") {
        items.extend(["--upstream-bearer-env".into(), var.clone()]);
        pass.push(var);
    }
    for key in [
        "url",
        "http_headers",
        "env_http_headers",
        "bearer_token_env_var",
    ] {
        t.remove(key);
    }
    Ok(())
}

fn wrap_entry(t: &mut dyn TableLike, name: &str, options: &Options) -> Result<(), EntryOutcome> {
    let mut items = proxy_prefix(ClientKind::Codex, name, options);
    let mut env: Vec<(String, String)> = Vec::new();
    let mut pass: Vec<String> = Vec::new();
    if let Some(command) = text_of(t, "command") {
        let args = match t.get("args") {
            None => Vec::new(),
            Some(_) => string_list(t, "args").ok_or(EntryOutcome::Skipped(
                "`args` is not a list of strings".into(),
            ))?,
        };
        if is_wrapped(&command, args.first().map(String::as_str)) {
            return Err(EntryOutcome::AlreadyWrapped);
        }
        items.push("--".into());
        items.push(command);
        items.extend(args);
    } else if let Some(url) = text_of(t, "url") {
        if t.contains_key("env") {
            return Err(EntryOutcome::Skipped("it has both a URL and `env`".into()));
        }
        remote(t, url, &mut items, &mut env, &mut pass, options)?;
    } else {
        return Err(EntryOutcome::Skipped(
            "no `command` or `url`: an unknown shape, left as it is".into(),
        ));
    }
    set(t, "command", Value::from(options.bin.as_str()));
    set(t, "args", array(&items));
    env.extend(options.env.iter().cloned());
    pass.extend(options.pass.iter().cloned());
    if !env.is_empty() {
        if !t.contains_key("env") {
            t.insert("env", Item::Value(Value::InlineTable(InlineTable::new())));
        }
        let table = t
            .get_mut("env")
            .and_then(Item::as_table_like_mut)
            .ok_or(EntryOutcome::Skipped("`env` is not a table".into()))?;
        for (k, v) in env {
            table.insert(&k, toml_edit::value(v));
        }
    }
    if !pass.is_empty() {
        let mut vars = string_list(t, "env_vars").unwrap_or_default();
        for v in pass {
            if !vars.contains(&v) {
                vars.push(v);
            }
        }
        set(t, "env_vars", array(&vars));
    }
    Ok(())
}

/// The `mcp_servers` table of a document; None when there is none, an unknown shape when it is
/// not a table.
fn servers_of(doc: &mut DocumentMut) -> Result<Option<&mut dyn TableLike>, String> {
    match doc.get_mut("mcp_servers") {
        None => Ok(None),
        Some(item) => item
            .as_table_like_mut()
            .map(Some)
            .ok_or("`mcp_servers` is not a table: an unknown shape, left as it is".into()),
    }
}

/// Wrap the picked entries; the originals recorded are the whole file (an entry comes back
/// from it by its key).
pub(super) fn wrap(text: &str, servers: &[String], options: &Options) -> Result<Edited, String> {
    let mut doc = parse(text)?;
    let mut out = Edited::default();
    if let Some(map) = servers_of(&mut doc)? {
        let names: Vec<String> = map.iter().map(|(k, _)| k.to_string()).collect();
        for name in names.into_iter().filter(|n| picked(servers, n)) {
            let key = format!("mcp_servers.{name}");
            let item = map.get_mut(&name).expect("listed");
            let outcome = match item.as_table_like_mut() {
                None => {
                    EntryOutcome::Skipped("not a table: an unknown shape, left as it is".into())
                }
                Some(t) => match wrap_entry(t, &name, options) {
                    Ok(()) => {
                        out.originals.insert(key.clone(), text.to_string());
                        EntryOutcome::Wrapped
                    }
                    Err(o) => o,
                },
            };
            out.entries.push(EntryChange {
                key,
                server: name,
                outcome,
            });
        }
    }
    // an entry left alone must be left byte for byte: the file is written only if one changed
    out.text = if out.originals.is_empty() {
        text.to_string()
    } else {
        written(&doc, text.contains("\r\n"))
    };
    let now = canonical_entries(&out.text);
    for key in out.originals.keys() {
        if let Some(c) = now.get(key) {
            out.wrapped.insert(key.clone(), c.clone());
        }
    }
    Ok(out)
}

/// Give one entry its original values: each key of the original table set in place (its
/// current comments and spacing kept), the keys `wrap` added removed.
fn restore(t: &mut dyn TableLike, original: &dyn TableLike) {
    let now: Vec<String> = t.iter().map(|(k, _)| k.to_string()).collect();
    for k in now {
        if !original.contains_key(&k) {
            t.remove(&k);
        }
    }
    for (k, item) in original.iter() {
        match item {
            Item::Value(v) => set(t, k, v.clone()),
            other => {
                t.insert(k, other.clone());
            }
        }
    }
}

/// Unwrap the picked wrapped entries: each from its recorded original file while it is as
/// `wrap` left it, else (a stdio entry) from what follows `--`.
pub(super) fn unwrap(
    text: &str,
    servers: &[String],
    originals: &BTreeMap<String, String>,
    wrapped: &BTreeMap<String, String>,
) -> Result<Edited, String> {
    let mut doc = parse(text)?;
    let mut out = Edited::default();
    let now = canonical_entries(text);
    let mut changed = false;
    if let Some(map) = servers_of(&mut doc)? {
        let names: Vec<String> = map.iter().map(|(k, _)| k.to_string()).collect();
        for name in names.into_iter().filter(|n| picked(servers, n)) {
            let key = format!("mcp_servers.{name}");
            let Some(t) = map.get_mut(&name).and_then(Item::as_table_like_mut) else {
                continue;
            };
            let args = string_list(t, "args").unwrap_or_default();
            let is = text_of(t, "command")
                .is_some_and(|c| is_wrapped(&c, args.first().map(String::as_str)));
            if !is {
                if !servers.is_empty() {
                    out.entries.push(EntryChange {
                        key,
                        server: name,
                        outcome: EntryOutcome::NotWrapped,
                    });
                }
                continue;
            }
            let untouched = wrapped.get(&key).is_some_and(|w| now.get(&key) == Some(w));
            let from_record = originals.get(&key).filter(|_| untouched).and_then(|o| {
                let mut d = o.parse::<DocumentMut>().ok()?;
                let m = servers_of(&mut d).ok()??;
                m.get(&name).cloned()
            });
            let outcome = if let Some(item) = from_record.as_ref().and_then(Item::as_table_like) {
                restore(t, item);
                EntryOutcome::Restored
            } else if let Some(cmd) = original_command(&args) {
                let cmd = cmd.to_vec();
                set(t, "command", Value::from(cmd[0].as_str()));
                set(t, "args", array(&cmd[1..]));
                EntryOutcome::Rebuilt
            } else {
                EntryOutcome::Skipped(if originals.contains_key(&key) {
                    "a remote entry edited by hand since it was wrapped: left wrapped (its original \
                     is in wrap's record)"
                        .into()
                } else {
                    "wrapped from a URL, and mcp-budget has no record of the original: left wrapped"
                        .into()
                })
            };
            changed |= matches!(outcome, EntryOutcome::Restored | EntryOutcome::Rebuilt);
            out.entries.push(EntryChange {
                key,
                server: name,
                outcome,
            });
        }
    }
    out.text = if changed {
        written(&doc, text.contains("\r\n"))
    } else {
        text.to_string()
    };
    Ok(out)
}

/// The secrets of a Codex config as written: header values, `env` values and strings under
/// secret-looking keys (TOML cannot repeat a key, so the parsed file has them all).
pub(super) fn secrets(text: &str) -> Vec<(String, String)> {
    let Ok(v) = toml::from_str::<toml::Value>(text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut walk: Vec<(String, &toml::Value)> = vec![(String::new(), &v)];
    while let Some((key, node)) = walk.pop() {
        match node {
            toml::Value::Table(t) => {
                for (k, x) in t {
                    let whole = matches!(key.as_str(), "http_headers" | "headers");
                    match x.as_str() {
                        Some(s) if whole || crate::config::is_secret_name(k) => {
                            out.push((format!("{key} {k}"), s.to_string()))
                        }
                        Some(s) => out.extend(
                            crate::config::env_secrets([(k.as_str(), s)])
                                .into_iter()
                                .map(|s| (s.name, s.value)),
                        ),
                        None => walk.push((k.clone(), x)),
                    }
                }
            }
            toml::Value::Array(a) => walk.extend(a.iter().map(|x| (key.clone(), x))),
            _ => {}
        }
    }
    out
}
