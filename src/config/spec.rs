//! The data model of a server to audit: how to reach it, where it was declared, what to probe.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::PathBuf;

use serde::Serialize;

use super::names::{is_header_flag, is_secret_name};
use super::{redact_url, EntryError, Trust, REDACTED};

/// Where a server spec was declared: a file (or `<embedded>`) and the key inside it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Origin {
    pub file: String,
    pub key: String,
    /// The client whose config it came from (`claude-desktop`, `cursor`, ...) or `probe-file`.
    pub client: String,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.file, self.key)
    }
}

/// How to reach a server. Values are already `${VAR}`-expanded; `Display` redacts secrets.
#[derive(Debug, Clone, PartialEq)]
pub enum TransportSpec {
    /// A server built into this binary (`demo`), run in-process.
    Builtin { name: String },
    /// A child process speaking JSON-RPC over stdin/stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP (protocol 2025-03-26 and later).
    Http {
        url: String,
        headers: BTreeMap<String, String>,
    },
    /// Legacy HTTP+SSE (protocol 2024-11-05).
    Sse {
        url: String,
        headers: BTreeMap<String, String>,
    },
    /// A recording made by `audit --record`, served in-process (no credentials, no network).
    Capture {
        dir: PathBuf,
        /// The recorded server; `None` when the recording holds one.
        server: Option<String>,
    },
}

impl TransportSpec {
    /// The transport's name as reports show it.
    pub fn kind(&self) -> &'static str {
        match self {
            TransportSpec::Builtin { .. } => "builtin",
            TransportSpec::Stdio { .. } => "stdio",
            TransportSpec::Http { .. } => "http",
            TransportSpec::Sse { .. } => "sse",
            TransportSpec::Capture { .. } => "capture",
        }
    }
}

impl fmt::Display for TransportSpec {
    /// A one-line, secret-free description: the command line or the URL.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransportSpec::Builtin { name } => write!(f, "builtin:{name}"),
            TransportSpec::Capture { dir, server } => {
                write!(f, "capture:{}", dir.display())?;
                match server {
                    Some(s) => write!(f, " ({s})"),
                    None => Ok(()),
                }
            }
            TransportSpec::Stdio {
                command, args, env, ..
            } => {
                for key in env.keys() {
                    write!(f, "{key}={REDACTED} ")?;
                }
                f.write_str(command)?;
                let mut hide_next = false;
                for arg in args {
                    let (shown, hide) = redact_arg(arg, hide_next);
                    hide_next = hide;
                    write!(f, " {shown}")?;
                }
                Ok(())
            }
            TransportSpec::Http { url, headers } | TransportSpec::Sse { url, headers } => {
                f.write_str(&redact_url(url))?;
                for key in headers.keys() {
                    write!(f, " -H '{key}: {REDACTED}'")?;
                }
                Ok(())
            }
        }
    }
}

/// Redact the value of a secret-looking flag (`--api-key=X`, or `--token X`); returns the
/// argument as shown and whether the next argument is a secret value.
fn redact_arg(arg: &str, hide_this: bool) -> (String, bool) {
    if hide_this && !arg.starts_with('-') {
        // a header given as a flag (`--header "Authorization: Bearer X"`): keep its name
        if let Some((name, _)) = arg.split_once(':').filter(|(n, _)| is_header_name(n)) {
            return (format!("{name}: {REDACTED}"), false);
        }
        return (REDACTED.to_string(), false);
    }
    // `--header` / `-H` take a header line: every header value is treated as a secret
    if is_header_flag(arg) {
        return (arg.to_string(), true);
    }
    // the one rule for secret names, as the redactor uses it
    let secret_name = is_secret_name;
    if let Some(flag) = arg.strip_prefix('-') {
        if let Some((name, _)) = flag.split_once('=') {
            if secret_name(name) {
                return (format!("-{name}={REDACTED}"), false);
            }
            // `--url=https://user:PASSWORD@host`
            return (redact_url(arg), false);
        }
        return (arg.to_string(), secret_name(flag));
    }
    (redact_url(arg), false)
}

/// A header name: letters, digits and dashes (`Authorization`, `X-Api-Key`).
fn is_header_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// One tool call to make against a server and measure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Probe {
    pub tool: String,
    /// The call's arguments: a JSON object, `${VAR}`s expanded.
    pub arguments: serde_json::Map<String, serde_json::Value>,
    /// The arguments as written (`${VAR}` kept), which is what reports show.
    pub shown_arguments: serde_json::Map<String, serde_json::Value>,
    /// The probe file's `label`, which tells calls of one tool apart in reports.
    pub label: Option<String>,
}

/// A server to audit.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSpec {
    pub name: String,
    pub origin: Origin,
    pub transport: TransportSpec,
    pub probes: Vec<Probe>,
    /// Per-server timeout for the whole audit of this server, when the file sets one.
    pub timeout_secs: Option<u64>,
    /// Whether it may be started: a project config's server is not, until the user trusts it.
    pub trust: Trust,
}

/// What loading one or more files produced: the servers, and the entries that were skipped.
#[derive(Debug, Clone, Default)]
pub struct ServerSet {
    pub servers: Vec<ServerSpec>,
    pub errors: Vec<EntryError>,
}

impl ServerSet {
    /// Add the servers of `other`; a server whose name is taken gets `@client` appended, and an
    /// identical spec under the same name (the same server in two configs) is kept once. Linear
    /// in the servers of both sets: names are looked up in an index, never by a scan.
    pub fn merge(&mut self, other: ServerSet) {
        let mut taken: HashMap<String, usize> = HashMap::with_capacity(self.servers.len());
        for (i, s) in self.servers.iter().enumerate() {
            taken.entry(s.name.clone()).or_insert(i);
        }
        self.servers.reserve(other.servers.len());
        for mut spec in other.servers {
            if let Some(&i) = taken.get(&spec.name) {
                if self.servers[i].transport == spec.transport {
                    continue;
                }
                spec.name = fresh_name(format!("{}@{}", spec.name, spec.origin.client), &taken);
            }
            taken.insert(spec.name.clone(), self.servers.len());
            self.servers.push(spec);
        }
        self.errors.extend(other.errors);
    }

    /// Keep only the servers whose names are listed; the error names the first unknown one.
    pub fn select(&mut self, names: &[String]) -> Result<(), String> {
        if names.is_empty() {
            return Ok(());
        }
        for name in names {
            if !self.servers.iter().any(|s| &s.name == name) {
                let known: Vec<&str> = self.servers.iter().map(|s| s.name.as_str()).collect();
                return Err(format!(
                    "unknown server `{name}` (known: {})",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ));
            }
        }
        self.servers.retain(|s| names.contains(&s.name));
        self.errors
            .retain(|e| e.server.as_ref().is_some_and(|n| names.contains(n)));
        Ok(())
    }
}

/// `base`, or `base2`, `base3`, ... : the first that is not taken.
fn fresh_name(base: String, taken: &HashMap<String, usize>) -> String {
    if !taken.contains_key(&base) {
        return base;
    }
    (2..)
        .map(|n| format!("{base}{n}"))
        .find(|name| !taken.contains_key(name))
        .expect("some numbered name is free")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_hides_env_values_flag_secrets_and_url_tokens() {
        let spec = TransportSpec::Stdio {
            command: "npx".into(),
            args: vec![
                "-y".into(),
                "server".into(),
                "--api-key=abc123".into(),
                "--token".into(),
                "xyz789".into(),
                "https://user:pw@h.example/p?access_token=tok9&x=1".into(),
                "--upstream=https://ghp_tok0123456@github.example/mcp".into(),
            ],
            env: BTreeMap::from([("GITHUB_TOKEN".into(), "ghp_secret".into())]),
            cwd: None,
        };
        let shown = spec.to_string();
        for secret in [
            "abc123",
            "xyz789",
            "ghp_secret",
            "tok9",
            ":pw@",
            "tok0123456",
        ] {
            assert!(!shown.contains(secret), "{secret} leaked in {shown}");
        }
        assert!(shown.contains("GITHUB_TOKEN=") && shown.contains("npx -y server"));
        assert!(
            shown.contains("--upstream=https://<redacted>@github.example/mcp"),
            "{shown}"
        );
        let http = TransportSpec::Http {
            url: "https://api.example/mcp".into(),
            headers: BTreeMap::from([("Authorization".into(), "Bearer s3".into())]),
        };
        assert_eq!(
            http.to_string(),
            "https://api.example/mcp -H 'Authorization: <redacted>'"
        );
    }
}
