//! Import of the MCP client configs users already have. Every client keeps a map of server
//! name -> entry; the entries differ only in a few key names, so one tolerant entry parser
//! serves them all and the client decides where the map is and what `url` means.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::{expand_vars, EntryError, Origin, ServerSet, ServerSpec, TransportSpec, Trust};

/// The MCP clients whose config files we read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientKind {
    ClaudeDesktop,
    ClaudeCode,
    Cursor,
    VsCode,
    Windsurf,
    Gemini,
    Codex,
    /// A plain `mcpServers` file that is not in any client's known place.
    Generic,
}

impl ClientKind {
    pub const ALL: [ClientKind; 8] = [
        ClientKind::ClaudeDesktop,
        ClientKind::ClaudeCode,
        ClientKind::Cursor,
        ClientKind::VsCode,
        ClientKind::Windsurf,
        ClientKind::Gemini,
        ClientKind::Codex,
        ClientKind::Generic,
    ];

    /// The id used in reports and in probe files' `from = "<id>:<server>"`.
    pub fn id(&self) -> &'static str {
        match self {
            ClientKind::ClaudeDesktop => "claude-desktop",
            ClientKind::ClaudeCode => "claude-code",
            ClientKind::Cursor => "cursor",
            ClientKind::VsCode => "vscode",
            ClientKind::Windsurf => "windsurf",
            ClientKind::Gemini => "gemini",
            ClientKind::Codex => "codex",
            ClientKind::Generic => "generic",
        }
    }

    pub fn from_id(id: &str) -> Option<ClientKind> {
        ClientKind::ALL.into_iter().find(|k| k.id() == id)
    }

    /// The client whose known place `path` is (the file and the folders it sits in, as
    /// discovery lists them), if any.
    pub fn at(path: &Path) -> Option<ClientKind> {
        let names: Vec<&str> = path
            .components()
            .rev()
            .take(3)
            .filter_map(|c| c.as_os_str().to_str())
            .collect();
        let ends = |tail: &[&str]| names.len() >= tail.len() && names[..tail.len()] == *tail;
        Some(match names.as_slice() {
            [".claude.json", ..] | [".mcp.json", ..] => ClientKind::ClaudeCode,
            _ if ends(&["claude_desktop_config.json", "Claude"]) => ClientKind::ClaudeDesktop,
            _ if ends(&["mcp_config.json", "windsurf", ".codeium"]) => ClientKind::Windsurf,
            _ if ends(&["mcp.json", ".cursor"]) => ClientKind::Cursor,
            _ if ends(&["settings.json", ".gemini"]) => ClientKind::Gemini,
            _ if ends(&["mcp.json", ".vscode"])
                || ends(&["mcp.json", "User", "Code"])
                || ends(&["settings.json", "User", "Code"]) =>
            {
                ClientKind::VsCode
            }
            _ => return None,
        })
    }

    /// The client of a JSON config: the one whose known place `path` is; else the layout names
    /// it (`servers` is VS Code's own, `projects` is `~/.claude.json`'s); else a plain
    /// `mcpServers` file is generic, whatever its file name.
    pub fn guess(path: &Path, json: &Map<String, Value>) -> Option<ClientKind> {
        if let Some(kind) = ClientKind::at(path) {
            return Some(kind);
        }
        if json.contains_key("servers")
            || json.get("mcp").is_some_and(|m| m.get("servers").is_some())
        {
            Some(ClientKind::VsCode)
        } else if json.contains_key("projects") {
            Some(ClientKind::ClaudeCode)
        } else if json.contains_key("mcpServers") {
            Some(ClientKind::Generic)
        } else {
            None
        }
    }
}

type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Read the servers of a client config that is already parsed into JSON (Codex's TOML is
/// converted to JSON first).
pub fn load_client_config(
    kind: ClientKind,
    file: &str,
    root: &Map<String, Value>,
    lookup: Lookup,
) -> ServerSet {
    let mut set = ServerSet::default();
    let mut read_map = |key_path: &str, map: Option<&Value>| {
        let Some(map) = map else { return };
        let Some(map) = map.as_object() else {
            set.errors.push(entry_error(
                file,
                key_path,
                None,
                "expected an object of servers",
            ));
            return;
        };
        for (name, entry) in map {
            let key = format!("{key_path}.{name}");
            match parse_entry(kind, entry, lookup) {
                Ok(Some(transport)) => set.servers.push(ServerSpec {
                    name: name.clone(),
                    origin: Origin {
                        file: file.to_string(),
                        key,
                        client: kind.id().to_string(),
                    },
                    transport,
                    probes: Vec::new(),
                    timeout_secs: None,
                    trust: Trust::Named,
                }),
                Ok(None) => {}
                Err(message) => set
                    .errors
                    .push(entry_error(file, &key, Some(name), &message)),
            }
        }
    };
    match kind {
        ClientKind::VsCode => {
            read_map("servers", root.get("servers"));
            read_map(
                "mcp.servers",
                root.get("mcp").and_then(|m| m.get("servers")),
            );
        }
        ClientKind::Codex => read_map("mcp_servers", root.get("mcp_servers")),
        _ => read_map("mcpServers", root.get("mcpServers")),
    }
    if let Some(projects) = root.get("projects").and_then(Value::as_object) {
        for (project, body) in projects {
            read_map(
                &format!("projects.{project}.mcpServers"),
                body.get("mcpServers"),
            );
        }
    }
    set
}

fn entry_error(file: &str, key: &str, server: Option<&String>, message: &str) -> EntryError {
    EntryError {
        file: file.to_string(),
        key: key.to_string(),
        server: server.cloned(),
        message: message.to_string(),
    }
}

/// One entry to a transport; `Ok(None)` for an entry the user disabled.
fn parse_entry(
    kind: ClientKind,
    entry: &Value,
    lookup: Lookup,
) -> Result<Option<TransportSpec>, String> {
    let obj = entry.as_object().ok_or("expected an object")?;
    let disabled = obj.get("disabled").and_then(Value::as_bool) == Some(true)
        || obj.get("enabled").and_then(Value::as_bool) == Some(false);
    if disabled {
        return Ok(None);
    }
    let text = |key: &str| -> Result<Option<String>, String> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => expand_vars(s, lookup)
                .map(Some)
                .map_err(|e| format!("`{key}`: {e}")),
            Some(_) => Err(format!("`{key}` must be a string")),
        }
    };
    let kind_field = text("type")?.or(text("transport")?);
    if let Some(command) = text("command")? {
        return Ok(Some(TransportSpec::Stdio {
            command,
            args: string_list(obj.get("args"), lookup).map_err(|e| format!("`args`: {e}"))?,
            env: string_map(obj.get("env"), lookup).map_err(|e| format!("`env`: {e}"))?,
            cwd: text("cwd")?.map(Into::into),
        }));
    }
    let mut headers = string_map(obj.get("headers").or(obj.get("http_headers")), lookup)
        .map_err(|e| format!("`headers`: {e}"))?;
    if let Some(var) = text("bearer_token_env_var")? {
        let token = lookup(&var).ok_or(format!("environment variable `{var}` is not set"))?;
        headers.insert("Authorization".into(), format!("Bearer {token}"));
    }
    let (url, sse) = match (text("httpUrl")?, text("serverUrl")?, text("url")?) {
        (Some(u), _, _) => (u, false),
        (None, Some(u), _) => (u, false),
        (None, None, Some(u)) => (u, kind == ClientKind::Gemini),
        (None, None, None) => return Err("no `command` or `url`".into()),
    };
    let sse = match kind_field.as_deref() {
        Some("sse") => true,
        Some("http" | "streamable-http" | "streamableHttp" | "streamable_http") => false,
        Some("stdio") => return Err("`type` is stdio but there is no `command`".into()),
        Some(other) => return Err(format!("unknown transport type `{other}`")),
        None => sse,
    };
    Ok(Some(if sse {
        TransportSpec::Sse { url, headers }
    } else {
        TransportSpec::Http { url, headers }
    }))
}

fn string_list(v: Option<&Value>, lookup: Lookup) -> Result<Vec<String>, String> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| match i {
                Value::String(s) => expand_vars(s, lookup),
                Value::Number(n) => Ok(n.to_string()),
                _ => Err("expected a list of strings".to_string()),
            })
            .collect(),
        Some(_) => Err("expected a list of strings".into()),
    }
}

fn string_map(v: Option<&Value>, lookup: Lookup) -> Result<BTreeMap<String, String>, String> {
    match v {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => expand_vars(s, lookup).map(|s| (k.clone(), s)),
                Value::Number(n) => Ok((k.clone(), n.to_string())),
                Value::Bool(b) => Ok((k.clone(), b.to_string())),
                _ => Err(format!("`{k}` must be a string")),
            })
            .collect(),
        Some(_) => Err("expected an object of strings".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn load(kind: ClientKind, v: Value) -> ServerSet {
        load_client_config(kind, "f.json", v.as_object().unwrap(), &no_env)
    }

    #[test]
    fn a_client_is_named_only_at_its_known_place() {
        let servers = json!({"mcpServers": {}});
        let root = servers.as_object().unwrap();
        let kind = |p: &str| ClientKind::guess(Path::new(p), root).map(|k| k.id());
        assert_eq!(kind("mcp_config.json"), Some("generic"));
        assert_eq!(kind("/tmp/generic.json"), Some("generic"));
        assert_eq!(kind("/tmp/claude_desktop_config.json"), Some("generic"));
        assert_eq!(kind("/tmp/mcp.json"), Some("generic"));
        assert_eq!(
            kind("/h/.codeium/windsurf/mcp_config.json"),
            Some("windsurf")
        );
        assert_eq!(
            kind("/h/.config/Claude/claude_desktop_config.json"),
            Some("claude-desktop")
        );
        assert_eq!(kind(".cursor/mcp.json"), Some("cursor"));
        assert_eq!(kind("/p/.vscode/mcp.json"), Some("vscode"));
        assert_eq!(kind("/h/.gemini/settings.json"), Some("gemini"));
        assert_eq!(kind("/h/.claude.json"), Some("claude-code"));
        assert_eq!(kind("/p/.mcp.json"), Some("claude-code"));
        let vscode = json!({"servers": {}});
        assert_eq!(
            ClientKind::guess(Path::new("x.json"), vscode.as_object().unwrap()),
            Some(ClientKind::VsCode)
        );
    }

    #[test]
    fn gemini_url_is_sse_and_http_url_is_streamable() {
        let set = load(
            ClientKind::Gemini,
            json!({"mcpServers": {"a": {"url": "http://h/sse"}, "b": {"httpUrl": "http://h/mcp"}}}),
        );
        assert!(matches!(
            set.servers[0].transport,
            TransportSpec::Sse { .. }
        ));
        assert!(matches!(
            set.servers[1].transport,
            TransportSpec::Http { .. }
        ));
    }

    #[test]
    fn broken_entries_are_reported_by_key_and_the_rest_load() {
        let set = load(
            ClientKind::Cursor,
            json!({"mcpServers": {
                "ok": {"command": "srv", "args": ["--x", 3]},
                "noargs": {"command": "srv", "args": "oops"},
                "nothing": {},
                "tok": {"command": "srv", "env": {"T": "${NOT_SET_ANYWHERE}"}},
                "off": {"command": "srv", "disabled": true}
            }}),
        );
        assert_eq!(set.servers.len(), 1);
        let keys: Vec<&str> = set.errors.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(
            keys,
            ["mcpServers.noargs", "mcpServers.nothing", "mcpServers.tok"]
        );
        assert!(set.errors[2].message.contains("NOT_SET_ANYWHERE"));
    }
}
