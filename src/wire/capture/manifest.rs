//! `manifest.json`, what a recording holds, and `probes.toml`, a probe file that audits it.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{CaptureError, ReplayDefaults};
use crate::ground::atomic::write_atomic;

/// The manifest's file name inside a recording's directory.
pub const MANIFEST_FILE: &str = "manifest.json";
/// The probe file that audits a recording.
pub const PROBES_FILE: &str = "probes.toml";
/// Bumped when a manifest field changes meaning or is removed.
pub const SCHEMA_VERSION: u32 = 1;

/// `manifest.json`: the recording's servers, in name order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub schema_version: u32,
    pub tool_version: String,
    /// When the recording was started (RFC 3339, UTC).
    pub recorded_at: String,
    pub servers: Vec<ManifestServer>,
}

/// One recorded server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestServer {
    pub name: String,
    /// Its transcript (JSON lines), relative to the recording's directory.
    pub file: String,
    /// How it was reached: builtin, stdio, http, sse.
    pub transport: String,
    /// The command line or URL, secrets redacted.
    pub target: String,
    /// The tool calls made, with their arguments as recorded (secrets redacted).
    pub probes: Vec<RecordedProbe>,
    pub messages: MessageCounts,
    /// Secrets replaced in the transcript. A replacement inside a result changes its bytes, so
    /// a nonzero count means some replayed result is not byte for byte what the server sent.
    pub redactions: usize,
    /// How many replacements each secret's name accounts for (`FIELD_API_KEY`,
    /// `header Authorization`, `url api_key`, ...); never the values.
    #[serde(default)]
    pub redacted: BTreeMap<String, usize>,
}

/// Lines in each direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageCounts {
    pub sent: usize,
    pub received: usize,
}

/// A `tools/call` made during the recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedProbe {
    pub tool: String,
    pub arguments: serde_json::Value,
}

impl Manifest {
    /// Read `DIR/manifest.json`.
    pub fn read(dir: &Path) -> Result<Manifest, CaptureError> {
        let path = dir.join(MANIFEST_FILE);
        let text = std::fs::read_to_string(&path).map_err(|source| CaptureError::Read {
            path: path.clone(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|e| CaptureError::Parse {
            path,
            message: e.to_string(),
        })
    }

    /// Write `DIR/manifest.json` (whole or not at all).
    pub fn write(&self, dir: &Path) -> Result<(), CaptureError> {
        let path = dir.join(MANIFEST_FILE);
        write_atomic(&path, |out| {
            serde_json::to_writer_pretty(&mut *out, self)?;
            out.write_all(b"\n")
        })
        .map_err(|source| CaptureError::Write { path, source })
    }

    /// The text of `probes.toml`: one server per recorded server, each run as
    /// `<exe> serve-capture <dir> --server <name>`, with the recorded probes. `dir` and `exe`
    /// should be absolute, so the file works from any directory.
    pub fn probes_toml(
        &self,
        dir: &Path,
        defaults: &ReplayDefaults,
    ) -> Result<String, CaptureError> {
        let mut out =
            format!(
            "# Audits the recording in this directory (written by `mcp-budget audit --record`):\n\
             #   mcp-budget audit {}\n",
            dir.join(PROBES_FILE).display().to_string().replace(['\n', '\r'], " ")
        );
        if !defaults.tokenizer.is_empty() || defaults.budget.is_some() {
            out.push_str("\n[defaults]\n");
            if let Some(budget) = defaults.budget {
                out.push_str(&format!("budget = {budget}\n"));
            }
            if !defaults.tokenizer.is_empty() {
                let names: Vec<String> =
                    defaults.tokenizer.iter().map(|t| toml_string(t)).collect();
                out.push_str(&format!("tokenizer = [{}]\n", names.join(", ")));
            }
        }
        for server in &self.servers {
            out.push_str(&replay_entry(server)?);
        }
        Ok(out)
    }
}

/// `[servers.<name>]` running `serve-capture` for this server, and its probes.
fn replay_entry(server: &ManifestServer) -> Result<String, CaptureError> {
    let key = toml_key(&server.name);
    // `capture` is relative to this file, so the folder can move (into a repository, to CI)
    let mut out = format!(
        "\n[servers.{key}]\ncapture = \".\"\ncapture_server = {}\n",
        toml_string(&server.name)
    );
    for probe in &server.probes {
        out.push_str(&format!(
            "\n[[servers.{key}.probes]]\ntool = {}\n",
            toml_string(&probe.tool)
        ));
        // TOML has no null: a probe file could not have made such a call
        let arguments =
            toml::Value::try_from(&probe.arguments).map_err(|e| CaptureError::Probe {
                server: server.name.clone(),
                message: format!("tool `{}`: {e}", probe.tool),
            })?;
        if !matches!(&arguments, toml::Value::Table(t) if t.is_empty()) {
            out.push_str(&format!("arguments = {arguments}\n"));
        }
    }
    Ok(out)
}

/// A TOML basic string.
fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// A TOML key: bare when it can be, else quoted.
fn toml_key(s: &str) -> String {
    let bare = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        s.to_string()
    } else {
        toml_string(s)
    }
}
