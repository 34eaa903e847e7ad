//! Probe files (TOML, see docs/design.md) and the single entry point that loads any config file:
//! a probe file, a JSON client config (with comments allowed) or Codex's `config.toml`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Value};

use super::{
    assess, discover, expand_vars, load_client_config, ClaudeRecords, ClientKind, ConfigError,
    EntryError, Origin, Place, Probe, ServerSet, ServerSpec, TransportSpec, Trust,
};

/// `[defaults]` of a probe file.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Defaults {
    pub budget: Option<usize>,
    pub tokenizer: Option<Vec<String>>,
    pub timeout_secs: Option<u64>,
    pub concurrency: Option<usize>,
}

/// A parsed probe file, before its servers are resolved.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeFile {
    #[serde(default)]
    pub defaults: Defaults,
    #[serde(default)]
    pub servers: BTreeMap<String, toml::Value>,
    /// The budget engine's per-tool policy, read by the engine.
    pub policy: Option<toml::Value>,
    /// CI gate thresholds, read by the gate.
    pub gate: Option<toml::Value>,
    /// The file it was read from.
    #[serde(skip)]
    pub path: PathBuf,
}

/// One `[servers.NAME]` table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ServerEntry {
    builtin: Option<String>,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<String>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    transport: Option<String>,
    from: Option<String>,
    /// A recording made by `audit --record` (a folder, relative to this file).
    capture: Option<String>,
    /// Which server of the recording (needed when it holds several).
    capture_server: Option<String>,
    timeout_secs: Option<u64>,
    #[serde(default)]
    probes: Vec<ProbeEntry>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProbeEntry {
    tool: String,
    #[serde(default)]
    arguments: toml::Table,
    /// Tells calls of one tool apart in tables and charts ("page 2", "a long article").
    label: Option<String>,
}

/// What loading one file gave: its servers and skipped entries, and a probe file's other tables.
#[derive(Debug, Clone, Default)]
pub struct ConfigFile {
    pub servers: ServerSet,
    /// `Some` for a probe file.
    pub probe_file: Option<ProbeFile>,
}

type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Load any supported config file, detecting its format. `home` is used to resolve a probe
/// file's `from = "<client>:<server>"`.
pub fn load_config_file(
    path: &Path,
    home: Option<&Path>,
    lookup: Lookup,
) -> Result<ConfigFile, ConfigError> {
    let text = read_text(path)?;
    parse_config_text(path, &text, home, lookup)
}

/// Parse a config file's text; `path` names it in errors and decides TOML vs JSON by extension.
pub fn parse_config_text(
    path: &Path,
    text: &str,
    home: Option<&Path>,
    lookup: Lookup,
) -> Result<ConfigFile, ConfigError> {
    let text = crate::ground::text::strip_bom(text);
    let file = path.display().to_string();
    let is_toml = path.extension().is_some_and(|e| e == "toml");
    if is_toml {
        let table: toml::Table =
            toml::from_str(text).map_err(|e| parse_error(path, &e.to_string()))?;
        if table.contains_key("mcp_servers") && !table.contains_key("servers") {
            let json =
                serde_json::to_value(&table).map_err(|e| parse_error(path, &e.to_string()))?;
            let root = json.as_object().cloned().unwrap_or_default();
            let servers = load_client_config(ClientKind::Codex, &file, &root, lookup);
            return Ok(ConfigFile {
                servers,
                probe_file: None,
            });
        }
        return load_probe_file(path, text, home, lookup);
    }
    let json = super::jsonc::parse_jsonc(text).map_err(|e| parse_error(path, &e))?;
    let root: Map<String, Value> = match json {
        Value::Object(m) => m,
        _ => return Err(parse_error(path, "expected a JSON object at the top level")),
    };
    let kind = ClientKind::guess(path, &root).ok_or_else(|| ConfigError::UnknownFormat {
        path: path.to_path_buf(),
    })?;
    Ok(ConfigFile {
        servers: load_client_config(kind, &file, &root, lookup),
        probe_file: None,
    })
}

fn parse_error(path: &Path, message: &str) -> ConfigError {
    ConfigError::Parse {
        path: path.to_path_buf(),
        message: message.trim().replace('\n', " "),
    }
}

impl ProbeFile {
    /// Read a probe file's tables alone, its servers not resolved (`gate --config` wants only
    /// `[gate]`).
    pub fn read(path: &Path) -> Result<ProbeFile, ConfigError> {
        let text = read_text(path)?;
        ProbeFile::parse(path, crate::ground::text::strip_bom(&text))
    }

    /// A probe file's tables from its text; `path` names it in errors.
    fn parse(path: &Path, text: &str) -> Result<ProbeFile, ConfigError> {
        let mut parsed: ProbeFile =
            toml::from_str(text).map_err(|e| parse_error(path, &e.to_string()))?;
        parsed.path = path.to_path_buf();
        Ok(parsed)
    }
}

fn read_text(path: &Path) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })
}

fn load_probe_file(
    path: &Path,
    text: &str,
    home: Option<&Path>,
    lookup: Lookup,
) -> Result<ConfigFile, ConfigError> {
    let parsed = ProbeFile::parse(path, text)?;
    let file = path.display().to_string();
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut set = ServerSet::default();
    for (name, value) in &parsed.servers {
        let key = format!("servers.{name}");
        let result = ServerEntry::deserialize(value.clone())
            .map_err(|e| e.to_string().trim().replace('\n', " "))
            .and_then(|entry| resolve_entry(name, entry, &dir, home, lookup));
        match result {
            Ok(mut spec) => {
                spec.origin = Origin {
                    file: file.clone(),
                    key,
                    client: "probe-file".into(),
                };
                set.servers.push(spec);
            }
            Err(message) => set.errors.push(EntryError {
                file: file.clone(),
                key,
                server: Some(name.clone()),
                message,
            }),
        }
    }
    Ok(ConfigFile {
        servers: set,
        probe_file: Some(parsed),
    })
}

/// A probe's label, checked: one short line a terminal prints as it is.
fn checked_label(label: &str) -> Result<String, String> {
    let label = label.trim();
    if label.is_empty() || label.chars().count() > 80 || label.chars().any(char::is_control) {
        return Err(format!(
            "probe label {label:?}: give one line of 1 to 80 characters, no control characters"
        ));
    }
    Ok(label.to_string())
}

fn resolve_entry(
    name: &str,
    entry: ServerEntry,
    dir: &Path,
    home: Option<&Path>,
    lookup: Lookup,
) -> Result<ServerSpec, String> {
    let probes = entry
        .probes
        .iter()
        .map(|p| {
            let shown_arguments = match serde_json::to_value(&p.arguments) {
                Ok(Value::Object(m)) => m,
                _ => Map::new(),
            };
            let arguments = match expand_json(Value::Object(shown_arguments.clone()), lookup)? {
                Value::Object(m) => m,
                _ => Map::new(),
            };
            Ok(Probe {
                tool: p.tool.clone(),
                arguments,
                shown_arguments,
                label: p.label.as_deref().map(checked_label).transpose()?,
            })
        })
        .collect::<Result<_, String>>()
        .map_err(|e| format!("probe arguments: {e}"))?;
    let (transport, trust) = match entry_transport(&entry, dir, lookup)? {
        Some(transport) => (transport, Trust::Named),
        None => resolve_from(entry.from.as_deref().unwrap_or_default(), dir, home, lookup)?,
    };
    Ok(ServerSpec {
        name: name.to_string(),
        origin: Origin {
            file: String::new(),
            key: String::new(),
            client: String::new(),
        },
        transport,
        probes,
        timeout_secs: entry.timeout_secs,
        trust,
    })
}

fn entry_transport(
    entry: &ServerEntry,
    dir: &Path,
    lookup: Lookup,
) -> Result<Option<TransportSpec>, String> {
    let ex = |s: &str| expand_vars(s, lookup);
    let exmap = |m: &BTreeMap<String, String>| -> Result<BTreeMap<String, String>, String> {
        m.iter()
            .map(|(k, v)| ex(v).map(|v| (k.clone(), v)))
            .collect()
    };
    let given = [
        entry.builtin.is_some(),
        entry.command.is_some(),
        entry.url.is_some(),
        entry.from.is_some(),
        entry.capture.is_some(),
    ];
    match given.iter().filter(|g| **g).count() {
        0 => return Err("needs one of `builtin`, `command`, `url`, `from` or `capture`".into()),
        1 => {}
        _ => {
            return Err("give only one of `builtin`, `command`, `url`, `from` and `capture`".into())
        }
    }
    if let Some(c) = &entry.capture {
        return Ok(Some(TransportSpec::Capture {
            dir: dir.join(ex(c)?),
            server: entry.capture_server.clone(),
        }));
    }
    if let Some(b) = &entry.builtin {
        if b != "demo" {
            return Err(format!("unknown builtin server `{b}` (known: demo)"));
        }
        return Ok(Some(TransportSpec::Builtin { name: b.clone() }));
    }
    if let Some(command) = &entry.command {
        return Ok(Some(TransportSpec::Stdio {
            command: ex(command)?,
            args: entry.args.iter().map(|a| ex(a)).collect::<Result<_, _>>()?,
            env: exmap(&entry.env)?,
            cwd: entry
                .cwd
                .as_deref()
                .map(ex)
                .transpose()?
                .map(|c| dir.join(c)),
        }));
    }
    if let Some(url) = &entry.url {
        let (url, headers) = (ex(url)?, exmap(&entry.headers)?);
        return match entry.transport.as_deref() {
            None | Some("http") | Some("streamable-http") => {
                Ok(Some(TransportSpec::Http { url, headers }))
            }
            Some("sse") => Ok(Some(TransportSpec::Sse { url, headers })),
            Some(other) => Err(format!("unknown transport `{other}` (known: http, sse)")),
        };
    }
    // the one left is `from`, which the caller resolves
    Ok(None)
}

/// `${VAR}` expanded in every string of a JSON value.
fn expand_json(v: Value, lookup: Lookup) -> Result<Value, String> {
    Ok(match v {
        Value::String(s) => Value::String(expand_vars(&s, lookup)?),
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|i| expand_json(i, lookup))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| expand_json(v, lookup).map(|v| (k, v)))
                .collect::<Result<_, _>>()?,
        ),
        other => other,
    })
}

/// `from = "<client id or config path>:<server name>"`, with the trust of what it names: a file
/// named by path is as trusted as the probe file; a client's config is found as discovery finds
/// it (from the probe file's folder), and a project server found so keeps its own trust.
fn resolve_from(
    from: &str,
    dir: &Path,
    home: Option<&Path>,
    lookup: Lookup,
) -> Result<(TransportSpec, Trust), String> {
    let (source, server) = from
        .rsplit_once(':')
        .ok_or(format!("`from = \"{from}\"` must be `<client>:<server>`"))?;
    let places: Vec<Place> = match ClientKind::from_id(source) {
        Some(kind) => discover(home, dir)
            .into_iter()
            .filter(|p| p.client == kind)
            .collect(),
        None => vec![Place {
            client: ClientKind::Generic,
            path: dir.join(source),
            project: false,
        }],
    };
    let named = ClientKind::from_id(source).is_none();
    let mut records = None;
    for place in &places {
        let Ok(loaded) = load_config_file(&place.path, home, lookup) else {
            continue;
        };
        let Some(spec) = loaded
            .servers
            .servers
            .into_iter()
            .find(|s| s.name == server)
        else {
            continue;
        };
        if named {
            return Ok((spec.transport, Trust::Named));
        }
        let records = records.get_or_insert_with(|| ClaudeRecords::read(home, dir));
        let trust = assess(place, &spec, records).through_probe_file();
        return Ok((spec.transport, trust));
    }
    Err(format!("`from`: no server `{server}` in {source}'s config"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn probe_file_entries_and_probes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.toml");
        std::fs::write(
            &path,
            r#"
[defaults]
budget = 4000
[servers.demo]
builtin = "demo"
[[servers.demo.probes]]
tool = "search"
arguments = { q = "x", n = 3, d = "${NOPE_VAR:-dflt}" }
[servers.bad]
command = "x"
colour = "red"
[servers.remote]
url = "http://127.0.0.1:9/sse"
transport = "sse"
"#,
        )
        .unwrap();
        let f = load_config_file(&path, None, &no_env).unwrap();
        assert_eq!(f.probe_file.unwrap().defaults.budget, Some(4000));
        let names: Vec<&str> = f.servers.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["demo", "remote"]);
        let probe = &f.servers.servers[0].probes[0];
        assert_eq!(probe.arguments["n"], 3);
        assert_eq!(probe.arguments["d"], "dflt");
        assert_eq!(probe.shown_arguments["d"], "${NOPE_VAR:-dflt}");
        assert_eq!(f.servers.errors.len(), 1);
        assert_eq!(f.servers.errors[0].key, "servers.bad");
        assert!(
            f.servers.errors[0].message.contains("colour"),
            "{}",
            f.servers.errors[0].message
        );
    }
}
