//! What a lab run found, per client: its version and status, and per server the definitions
//! it sent and what each probe became. `--format json` writes this (`clients` at the top).

use serde::{Deserialize, Serialize};

use super::definitions::Definitions;
use super::derive::ShapeRule;
use super::isolate::Isolation;
use super::model::Api;
use super::probe::ProbeOutcome;

/// The version of the lab's JSON; adding a field keeps it, renaming one bumps it.
pub const LAB_SCHEMA_VERSION: u32 = 1;

/// A whole lab run.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct LabReport {
    pub schema_version: u32,
    pub tool: String,
    pub generated_at: String,
    pub isolation: Isolation,
    pub tokenizer: String,
    pub clients: Vec<ClientReport>,
}

/// Whether a client could be measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ClientStatus {
    /// Every run reached the model and back.
    Measured,
    /// Some runs failed (see each server's `error`).
    Partial,
    /// No run worked.
    Failed,
    /// The client is not installed here.
    NotInstalled,
}

/// One client.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ClientReport {
    pub id: String,
    pub name: String,
    pub version: Option<String>,
    pub status: ClientStatus,
    pub api: Api,
    /// The model name the client was told.
    pub model: String,
    pub adapter: String,
    /// Where it was found, or where it was looked for.
    pub binary: Option<String>,
    pub looked_in: Vec<String>,
    pub servers: Vec<LabServerReport>,
    /// `--derive`: the rules found per shape.
    pub rules: Vec<ShapeRule>,
    /// `--derive`: a shape whose bisection failed (a run that could not be measured).
    pub derive_errors: Vec<String>,
    /// `--derive --keep`: where the bisection's runs' folders were left.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub derive_kept: Vec<String>,
    /// `--derive`: the protocol era it spoke to a server from before 2026 (its fallback).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub era: Option<super::ClientEra>,
    /// `--derive`: the rules as a profile entry for `clients.toml` (TOML).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub profile: String,
}

/// One server in one client.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(rename = "ServerReport"))]
pub struct LabServerReport {
    pub server: String,
    /// The tools/list pages the client read, and whether it stopped with a next page left.
    pub pages_read: usize,
    pub stopped_before_last_page: bool,
    /// The protocol era the client spoke to this server (its first run that sent a request).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub era: Option<super::ClientEra>,
    pub definitions: Option<Definitions>,
    pub probes: Vec<ProbeOutcome>,
    /// The runs' wall time, in ms.
    pub run_ms: Vec<u64>,
    /// Why the server could not be measured in this client at all, in one line.
    pub error: Option<String>,
    /// Probes that could not be measured, each in one line (the others were).
    pub probe_errors: Vec<String>,
    /// Where `--keep` left the runs' folders.
    pub kept: Vec<String>,
    /// Runs made again: a client that listed the probe's tool but ended without calling it
    /// (a model's turn it let go, seen under a loaded machine) is run once more; each line says
    /// which run and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retried: Vec<String>,
}

impl LabServerReport {
    /// A report of `server` with nothing measured yet.
    pub fn empty(server: &str) -> LabServerReport {
        LabServerReport {
            server: server.to_string(),
            pages_read: 0,
            stopped_before_last_page: false,
            era: None,
            definitions: None,
            probes: Vec::new(),
            run_ms: Vec::new(),
            error: None,
            probe_errors: Vec::new(),
            kept: Vec::new(),
            retried: Vec::new(),
        }
    }
}

impl LabReport {
    /// The clients whose absence fails the run: those of `asked` (the ids it was asked for)
    /// that were not found; none asked, every client when none was found at all. A run that
    /// measured nothing it was asked for must not pass a CI step.
    pub fn not_found(&self, asked: &[String]) -> Vec<&ClientReport> {
        let missing = |c: &&ClientReport| c.status == ClientStatus::NotInstalled;
        if asked.is_empty() {
            if self.clients.iter().all(|c| missing(&c)) {
                return self.clients.iter().collect();
            }
            return Vec::new();
        }
        self.clients
            .iter()
            .filter(|c| asked.contains(&c.id))
            .filter(missing)
            .collect()
    }
}

impl LabReport {
    /// Where a measured client has moved from its profile, a line each: an installed version
    /// that is not the one the profile was measured with (and what to run), and each probe
    /// whose measurement the profile does not predict. Empty when every measured client is
    /// as its profile says (`lab --check` fails on any line).
    pub fn drift(&self) -> Vec<String> {
        let mut out = Vec::new();
        for c in &self.clients {
            if c.status == ClientStatus::NotInstalled {
                continue;
            }
            out.extend(c.version.as_deref().and_then(|v| stale_profile(&c.id, v)));
            out.extend(
                c.servers
                    .iter()
                    .filter_map(|s| era_drift(&c.id, s.era.as_ref()?)),
            );
            for p in c.servers.iter().flat_map(|s| &s.probes) {
                let Some(m) = p.modelled.as_ref().filter(|m| !m.agrees) else {
                    continue;
                };
                out.push(format!(
                    "{}: {}: the profile predicts {} tokens ({}), the client sent {} ({})",
                    c.id,
                    p.tool,
                    crate::ground::units::thousands(m.tokens),
                    m.outcome.name(),
                    crate::ground::units::thousands(p.delivered.map_or(0, |d| d.tokens)),
                    m.measured_outcome.name()
                ));
            }
        }
        out
    }
}

/// The line that says client `id` spoke another era than its profile's `[client.era]`: another
/// first request or version, or a fallback from a refused `server/discover` it is not said to
/// make (or not to); `None` when it spoke as profiled, or the profile says nothing.
pub fn era_drift(id: &str, era: &super::ClientEra) -> Option<String> {
    let rule = crate::config::profiles::profile(id)?.era.as_ref()?;
    let asked = era.asked.as_deref().unwrap_or("no version");
    if era.opened_with != rule.opens_with || asked != rule.version {
        return Some(format!(
            "{id}: opened with {} asking {asked}, the profile says {} asking {}",
            era.opened_with, rule.opens_with, rule.version
        ));
    }
    match era.fell_back {
        Some(fell) if fell != rule.falls_back => Some(format!(
            "{id}: {}, the profile says it {} back",
            era.describe(),
            if rule.falls_back {
                "falls"
            } else {
                "does not fall"
            }
        )),
        _ => None,
    }
}

/// The line that says client `id`, installed in `installed`, is not the version its profile
/// was measured with, and what to run; `None` when it is, or the profile was never measured.
pub fn stale_profile(id: &str, installed: &str) -> Option<String> {
    let on = &crate::config::profiles::profile(id)?
        .measured
        .as_ref()?
        .version;
    (on != installed).then(|| {
        format!(
            "{id}: profile measured on {on}, installed {installed}: run `mcp-budget lab --derive --client {id}`"
        )
    })
}

impl ClientReport {
    /// The status the servers' results add up to.
    pub fn settle(&mut self) {
        if self.status == ClientStatus::NotInstalled {
            return;
        }
        let failed = self.servers.iter().filter(|s| s.error.is_some()).count();
        let partly = self.servers.iter().any(|s| !s.probe_errors.is_empty())
            || !self.derive_errors.is_empty();
        self.status = match failed {
            0 if !partly => ClientStatus::Measured,
            n if n == self.servers.len() => ClientStatus::Failed,
            _ => ClientStatus::Partial,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(id: &str, status: ClientStatus) -> ClientReport {
        ClientReport {
            id: id.into(),
            name: id.into(),
            version: None,
            status,
            api: Api::ChatCompletions,
            model: "lab-model".into(),
            adapter: format!("built-in:{id}.toml"),
            binary: None,
            looked_in: Vec::new(),
            servers: Vec::new(),
            rules: Vec::new(),
            derive_errors: Vec::new(),
            derive_kept: Vec::new(),
            era: None,
            profile: String::new(),
        }
    }

    fn report(clients: Vec<ClientReport>) -> LabReport {
        LabReport {
            schema_version: LAB_SCHEMA_VERSION,
            tool: "mcp-budget".into(),
            generated_at: String::new(),
            isolation: Isolation::UrlsOnly,
            tokenizer: "cl100k_base".into(),
            clients,
        }
    }

    #[test]
    fn a_client_that_speaks_another_era_than_its_profile_is_drift() {
        let era = |opened: &str, asked: &str, fell_back: Option<bool>| crate::lab::ClientEra {
            opened_with: opened.into(),
            asked: Some(asked.into()),
            discover_refused: fell_back.map(|_| -32601),
            fell_back,
            settled: None,
        };
        // as measured: Claude Code 2.1.332 discovers in 2026-07-28 and falls back
        assert_eq!(
            era_drift(
                "claude-code",
                &era("server/discover", "2026-07-28", Some(true))
            ),
            None
        );
        assert_eq!(
            era_drift("claude-code", &era("initialize", "2025-06-18", None)).as_deref(),
            Some("claude-code: opened with initialize asking 2025-06-18, the profile says server/discover asking 2026-07-28")
        );
        assert_eq!(
            era_drift("claude-code", &era("server/discover", "2026-07-28", Some(false))).as_deref(),
            Some("claude-code: 2026-07-28 (server/discover), refused -32601: did not fall back to initialize, the profile says it falls back")
        );
        assert_eq!(era_drift("codex", &era("initialize", "2025-11-25", None)).as_deref(),
            Some("codex: opened with initialize asking 2025-11-25, the profile says initialize asking 2025-06-18"));
        // a client without an era in its profile is not drift
        assert_eq!(
            era_drift("cursor", &era("initialize", "2025-06-18", None)),
            None
        );
    }

    #[test]
    fn a_client_asked_for_and_not_found_fails_and_with_none_asked_so_does_finding_none() {
        let ids = |v: Vec<&ClientReport>| v.iter().map(|c| c.id.clone()).collect::<Vec<_>>();
        let some = report(vec![
            client("codex", ClientStatus::Measured),
            client("cline", ClientStatus::NotInstalled),
        ]);
        assert!(some.not_found(&[]).is_empty());
        assert_eq!(ids(some.not_found(&["cline".into()])), ["cline"]);
        assert!(some.not_found(&["codex".into()]).is_empty());
        let none = report(vec![
            client("codex", ClientStatus::NotInstalled),
            client("cline", ClientStatus::NotInstalled),
        ]);
        assert_eq!(ids(none.not_found(&[])), ["codex", "cline"]);
    }
}
