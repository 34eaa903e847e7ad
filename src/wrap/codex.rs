//! Wrapping the entries of Codex's `config.toml` (`[mcp_servers.NAME]`) with `toml_edit`, a
//! format-preserving TOML editor: comments, key order and formatting outside the edited values
//! stay as written. A remote entry's `http_headers` move into `env`; `env_http_headers` and
//! `bearer_token_env_var` name variables that Codex passes through by `env_vars` (Codex starts
//! a stdio server with only the variables it is told to pass).

use std::collections::BTreeMap;

use toml_edit::{Array, DocumentMut, InlineTable, Item, TableLike, Value};

use super::argv::{header_var, is_wrapped, original_command, proxy_prefix, Options};
use super::{EntryChange, Outcome, Wrapped};
use crate::config::ClientKind;

fn parse(text: &str) -> Result<DocumentMut, String> {
    text.parse::<DocumentMut>()
        .map_err(|e| format!("not TOML: {}", crate::text::one_line(&e.to_string())))
}

/// A string value as the file had it.
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

fn wrap_entry(t: &mut dyn TableLike, name: &str, options: &Options) -> Result<(), Outcome> {
    let mut items = proxy_prefix(ClientKind::Codex, name, options);
    let mut env: Vec<(String, String)> = Vec::new();
    let mut pass: Vec<String> = Vec::new();
    if let Some(command) = text_of(t, "command") {
        let args = match t.get("args") {
            None => Vec::new(),
            Some(_) => string_list(t, "args")
                .ok_or(Outcome::Skipped("`args` is not a list of strings".into()))?,
        };
        if is_wrapped(&command, args.first().map(String::as_str)) {
            return Err(Outcome::AlreadyWrapped);
        }
        items.push("--".into());
        items.push(command);
        items.extend(args);
    } else if let Some(url) = text_of(t, "url") {
        if crate::config::redact_url(&url) != url {
            return Err(Outcome::Skipped(
                "its URL carries a credential, which a wrapped entry would show in argv; left as it is"
                    .into(),
            ));
        }
        items.extend(["--upstream-url".into(), url]);
        let mut taken = Vec::new();
        if let Some(h) = t.get("http_headers") {
            let h = h
                .as_table_like()
                .ok_or(Outcome::Skipped("`http_headers` is not a table".into()))?;
            for (k, v) in h.iter() {
                let v = v
                    .as_str()
                    .ok_or(Outcome::Skipped(format!("header `{k}` is not a string")))?;
                let var = header_var(k, &taken);
                items.extend(["--header-env".into(), format!("{k}: {var}")]);
                env.push((var.clone(), v.to_string()));
                taken.push(var);
            }
        }
        if let Some(h) = t.get("env_http_headers") {
            let h = h
                .as_table_like()
                .ok_or(Outcome::Skipped("`env_http_headers` is not a table".into()))?;
            for (k, v) in h.iter() {
                let var = v
                    .as_str()
                    .ok_or(Outcome::Skipped(format!("header `{k}` is not a string")))?;
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
    } else {
        return Err(Outcome::Skipped(
            "no `command` or `url`: an unknown shape, left as it is".into(),
        ));
    }
    set(t, "command", Value::from(options.bin.as_str()));
    set(t, "args", array(&items));
    env.extend(options.env.iter().cloned());
    if !env.is_empty() {
        let table = match t.get_mut("env") {
            Some(item) => item
                .as_table_like_mut()
                .ok_or(Outcome::Skipped("`env` is not a table".into()))?,
            None => {
                t.insert("env", Item::Value(Value::InlineTable(InlineTable::new())));
                t.get_mut("env")
                    .and_then(Item::as_table_like_mut)
                    .expect("just made")
            }
        };
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

fn picked(servers: &[String], name: &str) -> bool {
    servers.is_empty() || servers.iter().any(|s| s == name)
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
pub(super) fn wrap(text: &str, servers: &[String], options: &Options) -> Result<Wrapped, String> {
    let mut doc = parse(text)?;
    let mut changes = Vec::new();
    let mut originals = BTreeMap::new();
    if let Some(map) = servers_of(&mut doc)? {
        let names: Vec<String> = map.iter().map(|(k, _)| k.to_string()).collect();
        for name in names.into_iter().filter(|n| picked(servers, n)) {
            let key = format!("mcp_servers.{name}");
            let item = map.get_mut(&name).expect("listed");
            let outcome = match item.as_table_like_mut() {
                None => Outcome::Skipped("not a table: an unknown shape, left as it is".into()),
                Some(t) => match wrap_entry(t, &name, options) {
                    Ok(()) => {
                        originals.insert(key.clone(), text.to_string());
                        Outcome::Wrapped
                    }
                    Err(o) => o,
                },
            };
            changes.push(EntryChange {
                key,
                server: name,
                outcome,
            });
        }
    }
    // an entry left alone must be left byte for byte: only a wrapped one was touched
    let any = changes.iter().any(|c| c.outcome == Outcome::Wrapped);
    Ok((
        if any {
            doc.to_string()
        } else {
            text.to_string()
        },
        changes,
        originals,
    ))
}

/// Unwrap the picked wrapped entries: each from its recorded original file, else (a stdio
/// entry) from what follows `--`.
pub(super) fn unwrap(
    text: &str,
    servers: &[String],
    originals: &BTreeMap<String, String>,
) -> Result<(String, Vec<EntryChange>), String> {
    let mut doc = parse(text)?;
    let mut changes = Vec::new();
    if let Some(map) = servers_of(&mut doc)? {
        let names: Vec<String> = map.iter().map(|(k, _)| k.to_string()).collect();
        for name in names.into_iter().filter(|n| picked(servers, n)) {
            let key = format!("mcp_servers.{name}");
            let Some(t) = map.get(&name).and_then(Item::as_table_like) else {
                continue;
            };
            let args = string_list(t, "args").unwrap_or_default();
            let wrapped = text_of(t, "command")
                .is_some_and(|c| is_wrapped(&c, args.first().map(String::as_str)));
            if !wrapped {
                continue;
            }
            let from_record = originals.get(&key).and_then(|o| {
                let mut d = o.parse::<DocumentMut>().ok()?;
                let m = servers_of(&mut d).ok()??;
                m.get(&name).cloned()
            });
            let outcome = if let Some(item) = from_record {
                map.insert(&name, item);
                Outcome::Restored
            } else if let Some(cmd) = original_command(&args) {
                let cmd = cmd.to_vec();
                let t = map
                    .get_mut(&name)
                    .and_then(Item::as_table_like_mut)
                    .expect("a table");
                set(t, "command", Value::from(cmd[0].as_str()));
                set(t, "args", array(&cmd[1..]));
                Outcome::Rebuilt
            } else {
                Outcome::Skipped(
                    "wrapped from a URL, and mcp-budget has no record of the original: left wrapped"
                        .into(),
                )
            };
            changes.push(EntryChange {
                key,
                server: name,
                outcome,
            });
        }
    }
    let any = changes
        .iter()
        .any(|c| matches!(c.outcome, Outcome::Restored | Outcome::Rebuilt));
    Ok((
        if any {
            doc.to_string()
        } else {
            text.to_string()
        },
        changes,
    ))
}
