//! Whether a server may be started. A config found under the current folder (`.mcp.json`,
//! `.cursor/mcp.json`, `.vscode/mcp.json`, `.gemini/settings.json`) or a project entry of
//! `~/.claude.json` is project-scoped: a stranger's code until the user trusts it by naming the
//! file, by `--trust-project`, or in Claude Code itself. Claude Code's records are read only
//! from places a cloned repository cannot write, and only for a folder the user trusted there.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

use serde_json::Value;

use super::{ClientKind, Place, ServerSpec};

/// Why a server may, or may not, be started.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Trust {
    /// Its file was named by the user (`--config`, a probe file, the command line).
    #[default]
    Named,
    /// A user-level client config in the home folder.
    User,
    /// A project server its client records as approved (where, in words).
    Approved { by: String },
    /// A project server the user allowed for this run (`--trust-project`).
    TrustedByFlag,
    /// A project server nobody approved: not started.
    Untrusted { why: String },
    /// A project server its client records as rejected: not started, even with
    /// `--trust-project`.
    Rejected { by: String },
}

impl Trust {
    /// Whether the server may be started.
    pub fn runs(&self) -> bool {
        !matches!(self, Trust::Untrusted { .. } | Trust::Rejected { .. })
    }

    /// A short id for machine outputs.
    pub fn id(&self) -> &'static str {
        match self {
            Trust::Named => "named",
            Trust::User => "user",
            Trust::Approved { .. } => "approved",
            Trust::TrustedByFlag => "trust-project",
            Trust::Untrusted { .. } => "untrusted",
            Trust::Rejected { .. } => "rejected",
        }
    }

    /// The same trust once the user passed `--trust-project` (when `allowed`): an unapproved
    /// project server runs, a rejected one still does not.
    pub fn allowed_by_flag(self, allowed: bool) -> Trust {
        match self {
            Trust::Untrusted { .. } if allowed => Trust::TrustedByFlag,
            other => other,
        }
    }

    /// The trust a probe file's server gets from the server its `from` names: a user-level or
    /// named one is as trusted as the probe file (named); a project one keeps its own trust.
    pub fn through_probe_file(self) -> Trust {
        match self {
            Trust::User => Trust::Named,
            other => other,
        }
    }
}

impl fmt::Display for Trust {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Trust::Named => f.write_str("named on the command line"),
            Trust::User => f.write_str("user config"),
            Trust::Approved { by } => write!(f, "approved: {by}"),
            Trust::TrustedByFlag => f.write_str("project config, trusted by --trust-project"),
            Trust::Untrusted { why } => write!(f, "not trusted: {why}"),
            Trust::Rejected { by } => write!(f, "rejected: {by}"),
        }
    }
}

/// What Claude Code records about project servers, read from the places a repository cannot
/// write: `~/.claude.json`, `~/.claude/settings.json` and, in a folder the user trusted,
/// `.claude/settings.local.json`. The project's own `.claude/settings.json` (the author's) and
/// an untrusted folder's files can only reject.
#[derive(Debug, Default)]
pub struct ClaudeRecords {
    /// `~/.claude.json` projects whose folder-trust dialog was accepted (their keys).
    trusted_folders: BTreeSet<String>,
    /// The current folder is one of them.
    here_trusted: bool,
    /// Where `enableAllProjectMcpServers: true` was found.
    enable_all: Option<String>,
    /// `enabledMcpjsonServers`: server name -> where.
    enabled: BTreeMap<String, String>,
    /// `disabledMcpjsonServers`: server name -> where.
    disabled: BTreeMap<String, String>,
}

impl ClaudeRecords {
    /// Read Claude Code's records for the project in `cwd`. A file that is missing or broken
    /// approves nothing.
    pub fn read(home: Option<&Path>, cwd: &Path) -> ClaudeRecords {
        let mut records = ClaudeRecords::default();
        let here = folder_keys(cwd);
        if let Some(h) = home {
            let state = h.join(".claude.json");
            if let Some(Value::Object(root)) = read_json(&state) {
                records.read_state(&root, &here, &state);
            }
        }
        let trusted = records.here_trusted;
        let mut files = Vec::new();
        if let Some(h) = home {
            files.push((h.join(".claude/settings.json"), trusted));
        }
        files.push((cwd.join(".claude/settings.local.json"), trusted));
        files.push((cwd.join(".claude/settings.json"), false));
        for (path, approves) in files {
            if let Some(v) = read_json(&path) {
                records.read_settings(&v, &path.display().to_string(), approves);
            }
        }
        records
    }

    fn read_state(&mut self, root: &serde_json::Map<String, Value>, here: &[String], at: &Path) {
        let Some(projects) = root.get("projects").and_then(Value::as_object) else {
            return;
        };
        for (folder, body) in projects {
            if body.get("hasTrustDialogAccepted") == Some(&Value::Bool(true)) {
                self.trusted_folders.insert(folder.clone());
            }
        }
        self.here_trusted = here.iter().any(|k| self.trusted_folders.contains(k));
        for key in here {
            if let Some(body) = projects.get(key) {
                let label = format!("{} (projects.{key})", at.display());
                self.read_settings(body, &label, self.here_trusted);
            }
        }
    }

    /// One settings object; `approves` false reads only the rejections.
    fn read_settings(&mut self, v: &Value, label: &str, approves: bool) {
        let names = |key: &str| -> Vec<String> {
            v.get(key)
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default()
        };
        for name in names("disabledMcpjsonServers") {
            self.disabled
                .entry(name)
                .or_insert(format!("disabledMcpjsonServers in {label}"));
        }
        if !approves {
            return;
        }
        for name in names("enabledMcpjsonServers") {
            self.enabled
                .entry(name)
                .or_insert(format!("enabledMcpjsonServers in {label}"));
        }
        if v.get("enableAllProjectMcpServers") == Some(&Value::Bool(true)) {
            self.enable_all
                .get_or_insert(format!("enableAllProjectMcpServers in {label}"));
        }
    }

    /// The trust of a `.mcp.json` server of the current folder, by Claude Code's records.
    fn mcp_json(&self, name: &str) -> Trust {
        if let Some(by) = self.disabled.get(name) {
            return Trust::Rejected { by: by.clone() };
        }
        if let Some(by) = self.enabled.get(name).or(self.enable_all.as_ref()) {
            return Trust::Approved { by: by.clone() };
        }
        let why = if self.here_trusted {
            "a project config, not approved in Claude Code"
        } else {
            "a project config, in a folder Claude Code does not record as trusted"
        };
        Trust::Untrusted { why: why.into() }
    }
}

/// The trust of a server found by discovery at `place` (`project` when the place is under the
/// current folder).
pub fn assess(place: &Place, spec: &ServerSpec, records: &ClaudeRecords) -> Trust {
    if !place.project {
        return match local_folder(spec) {
            Some(folder) if records.trusted_folders.contains(folder) => Trust::Approved {
                by: format!("Claude Code records the folder {folder} as trusted"),
            },
            Some(folder) => Trust::Untrusted {
                why: format!(
                    "a project entry of {} (folder {folder}), a folder Claude Code does not record as trusted",
                    place.path.display()
                ),
            },
            None => Trust::User,
        };
    }
    let top_level = spec.origin.key == format!("mcpServers.{}", spec.name);
    if place.client == ClientKind::ClaudeCode && top_level {
        return records.mcp_json(&spec.name);
    }
    Trust::Untrusted {
        why: "a project config".into(),
    }
}

/// The folder of a `projects.<folder>.mcpServers.<name>` entry (Claude Code's local scope).
fn local_folder(spec: &ServerSpec) -> Option<&str> {
    spec.origin
        .key
        .strip_prefix("projects.")?
        .strip_suffix(&format!(".mcpServers.{}", spec.name))
}

/// The keys Claude Code may file the folder under: as given and with links resolved.
fn folder_keys(cwd: &Path) -> Vec<String> {
    let mut keys = vec![cwd.display().to_string()];
    if let Ok(canon) = cwd.canonicalize() {
        let c = canon.display().to_string();
        if !keys.contains(&c) {
            keys.push(c);
        }
    }
    keys
}

fn read_json(path: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(path).ok()?;
    super::jsonc::parse_jsonc(crate::ground::text::strip_bom(&text)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn approvals_count_only_in_a_trusted_folder_and_rejections_everywhere() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let (h, p) = (home.path(), project.path().canonicalize().unwrap());
        write(
            &h.join(".claude/settings.json"),
            r#"{"enabledMcpjsonServers": ["docs"]}"#,
        );
        write(
            &p.join(".claude/settings.json"),
            r#"{"enableAllProjectMcpServers": true, "disabledMcpjsonServers": ["bad"]}"#,
        );
        let untrusted = ClaudeRecords::read(Some(h), &p);
        assert!(!untrusted.mcp_json("docs").runs(), "folder not trusted");
        assert!(!untrusted.mcp_json("evil").runs(), "the author's settings");
        assert!(matches!(untrusted.mcp_json("bad"), Trust::Rejected { .. }));
        let state = serde_json::json!({"projects": {p.display().to_string(): {
            "hasTrustDialogAccepted": true, "enabledMcpjsonServers": ["mine"]}}});
        write(&h.join(".claude.json"), &state.to_string());
        let trusted = ClaudeRecords::read(Some(h), &p);
        assert!(trusted.mcp_json("docs").runs());
        assert!(trusted.mcp_json("mine").runs());
        assert!(!trusted.mcp_json("evil").runs(), "the author's enableAll");
        assert!(matches!(trusted.mcp_json("bad"), Trust::Rejected { .. }));
    }
}
