//! Running the chosen clients on the servers: per client, find it and read its version, then
//! one run per probe (a server without probes gets one run for its definitions), `--jobs` runs
//! at once (a client takes about a core while it starts: two on two cores), reported in the
//! probes' order.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;

use super::adapter::Adapter;
use super::find::{self, Located};
use super::isolate::Isolation;
use super::profile;
use super::report::{ClientReport, ClientStatus, LabReport, LabServerReport, LAB_SCHEMA_VERSION};
use super::run::{self, RunOutcome, RunSpec};
use super::shapes::Shape;
use crate::config::{ServerSpec, TransportSpec};
use crate::ground::tokens::Tokenizer;

mod derive_runs;
mod read;
use derive_runs::{derive_client, era_once};
use read::{read_call, read_listing};

/// A server the lab mounts (stdio: the lab's clients start it behind the tap).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct LabServer {
    pub name: String,
    pub command: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub probes: Vec<LabProbe>,
}

impl LabServer {
    /// The server a lab client mounts for `spec`: its stdio command, or this executable's
    /// demo server or recording (`exe`). A URL server is out of reach of loopback.
    pub fn from_spec(spec: &ServerSpec, exe: &Path) -> Result<LabServer, String> {
        let exe = exe.display().to_string();
        let (command, env) = match &spec.transport {
            TransportSpec::Builtin { .. } => (vec![exe, "demo-server".into()], BTreeMap::new()),
            TransportSpec::Stdio {
                command, args, env, ..
            } => {
                let mut argv = vec![command.clone()];
                argv.extend(args.iter().cloned());
                (argv, env.clone())
            }
            TransportSpec::Capture { dir, server } => {
                let mut argv = vec![exe, "serve-capture".into(), dir.display().to_string()];
                if let Some(s) = server {
                    argv.extend(["--server".into(), s.clone()]);
                }
                (argv, BTreeMap::new())
            }
            TransportSpec::Http { .. } | TransportSpec::Sse { .. } => {
                return Err("a URL server cannot be reached from the lab's loopback-only network (record it with `audit --record` and mount the recording)".into())
            }
        };
        Ok(LabServer {
            name: spec.name.clone(),
            command,
            env,
            probes: spec
                .probes
                .iter()
                .map(|p| LabProbe {
                    tool: p.tool.clone(),
                    arguments: Value::Object(p.arguments.clone()),
                })
                .collect(),
        })
    }
}

/// A tool the scripted model calls, with its arguments.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct LabProbe {
    pub tool: String,
    pub arguments: Value,
}

/// What to run.
#[derive(Debug, Clone)]
pub struct LabOptions {
    pub adapters: Vec<Adapter>,
    /// `--client-bin ID=PATH`.
    pub client_bins: BTreeMap<String, PathBuf>,
    /// npm folders searched for `node_modules/.bin/NAME`.
    pub npm_folders: Vec<PathBuf>,
    pub servers: Vec<LabServer>,
    pub timeout: Duration,
    pub keep: bool,
    pub isolation: Isolation,
    pub tokenizer: Tokenizer,
    /// This executable (the tap and the demo server are its subcommands).
    pub exe: PathBuf,
    /// `--derive`: the shapes to find each client's rules for (none: no derive).
    pub derive: Vec<Shape>,
    /// Client runs at once (probes of a server; shapes of a derive), at least 1.
    pub jobs: usize,
}

/// Run every client on every server.
pub async fn run_lab(opts: &LabOptions, mut progress: impl FnMut(&str)) -> LabReport {
    let base_env = find::base_env();
    // a daemon a client starts in a session of its own is handed to the lab and ended after
    // each run (super::reap)
    super::reap::adopt_orphans();
    let mut clients = Vec::new();
    for adapter in &opts.adapters {
        progress(&format!("{}: looking for it", adapter.id));
        clients.push(run_client(opts, adapter, &base_env, &mut progress).await);
    }
    super::reap::end_escaped(None);
    LabReport {
        schema_version: LAB_SCHEMA_VERSION,
        tool: format!("mcp-budget {}", env!("CARGO_PKG_VERSION")),
        generated_at: crate::ground::units::now_rfc3339(),
        isolation: opts.isolation,
        tokenizer: opts.tokenizer.name().into(),
        clients,
    }
}

async fn run_client(
    opts: &LabOptions,
    adapter: &Adapter,
    base_env: &BTreeMap<String, String>,
    progress: &mut impl FnMut(&str),
) -> ClientReport {
    let mut report = ClientReport {
        id: adapter.id.clone(),
        name: adapter.name.clone(),
        version: None,
        status: ClientStatus::NotInstalled,
        api: adapter.api,
        model: adapter.model.clone(),
        adapter: adapter.origin.clone(),
        binary: None,
        looked_in: Vec::new(),
        servers: Vec::new(),
        rules: Vec::new(),
        derive_errors: Vec::new(),
        derive_kept: Vec::new(),
        era: None,
        profile: String::new(),
    };
    let bin = match find::find(adapter, &opts.client_bins, &opts.npm_folders) {
        Located::At(p) => p,
        Located::Missing { looked_in } => {
            report.looked_in = looked_in.iter().map(|p| p.display().to_string()).collect();
            return report;
        }
    };
    report.binary = Some(bin.display().to_string());
    let mut version_env = base_env.clone();
    let scratch = tempfile::tempdir().ok();
    if let Some(d) = &scratch {
        version_env.insert("HOME".into(), d.path().display().to_string());
    }
    report.version = find::version(&bin, adapter, &version_env).await;
    report.status = ClientStatus::Measured;
    if !opts.derive.is_empty() {
        (report.rules, report.derive_errors, report.derive_kept) =
            derive_client(opts, adapter, &bin, base_env, progress).await;
        progress(&format!("{}: deriving its protocol era", adapter.id));
        report.era = era_once(opts, adapter, &bin, base_env).await;
        let today = crate::ground::units::now_rfc3339();
        report.profile = profile::entry(&report, today.get(..10).unwrap_or(&today));
    }
    for server in &opts.servers {
        progress(&format!("{}: {}", adapter.id, server.name));
        let s = run_server(opts, adapter, &bin, server, base_env).await;
        report.servers.push(s);
    }
    report.settle();
    report
}

async fn run_server(
    opts: &LabOptions,
    adapter: &Adapter,
    bin: &Path,
    server: &LabServer,
    base_env: &BTreeMap<String, String>,
) -> LabServerReport {
    let mut report = LabServerReport::empty(&server.name);
    // a server without probes: one run for its definitions, calling nothing it has
    let none = [LabProbe {
        tool: String::new(),
        arguments: Value::Object(Default::default()),
    }];
    let probes: &[LabProbe] = if server.probes.is_empty() {
        &none
    } else {
        &server.probes
    };
    let jobs = opts.jobs.max(1);
    // unordered, so a long run does not hold the next back; read back in the probes' order
    let mut runs = futures::stream::iter(probes.iter().enumerate().map(|(i, p)| async move {
        (
            i,
            p,
            run_probe(opts, adapter, bin, server, base_env, p, &[]).await,
        )
    }))
    .buffer_unordered(jobs)
    .collect::<Vec<_>>()
    .await;
    runs.sort_by_key(|r| r.0);
    for (_, p, (retried, result)) in runs {
        if let Some((ms, why)) = retried {
            report.run_ms.push(ms);
            report.retried.push(why);
        }
        match result {
            Ok(mut outcome) => {
                report.run_ms.push(outcome.elapsed_ms);
                read_listing(&mut report, adapter, &outcome, opts.tokenizer);
                if report.error.is_none() && !p.tool.is_empty() {
                    match read_call(&report, adapter, p, 0, &outcome, opts.tokenizer) {
                        Ok(judged) => report.probes.push(judged),
                        Err(e) => report.probe_errors.push(e),
                    }
                }
                if opts.keep {
                    report
                        .kept
                        .extend(outcome.keep().map(|d| d.display().to_string()));
                }
            }
            Err(e) => {
                report.error.get_or_insert(e.to_string());
            }
        }
    }
    report
}

/// One probe's run (and `more` calls of its tool after it, with those arguments), once more
/// where the client listed the tool but the first call's result was not recorded: the first
/// try's time and why it was run again, and the outcome.
async fn run_probe(
    opts: &LabOptions,
    adapter: &Adapter,
    bin: &Path,
    server: &LabServer,
    base_env: &BTreeMap<String, String>,
    p: &LabProbe,
    more: &[Value],
) -> (Option<(u64, String)>, Result<RunOutcome, super::LabError>) {
    let spec = RunSpec {
        adapter,
        bin,
        server,
        tool: &p.tool,
        arguments: &p.arguments,
        more,
        timeout: opts.timeout,
        base_env,
        exe: &opts.exe,
    };
    let first = run::run(&spec).await;
    if let Ok(first) = &first {
        let listed = first
            .transcript
            .tools()
            .iter()
            .any(|t| t["name"] == p.tool.as_str());
        let result = first.transcript.call_result(&p.tool, &p.arguments, 0);
        if !p.tool.is_empty() && listed && result.is_none() {
            let why = if first.transcript.called(&p.tool) {
                format!(
                    "the server's result of `{}` was not recorded; run once more",
                    p.tool
                )
            } else {
                format!("the client never called `{}`; run once more", p.tool)
            };
            let retried = (first.elapsed_ms, failure(adapter, first, &why));
            return (Some(retried), run::run(&spec).await);
        }
    }
    (None, first)
}

/// A failed run in one line: why, the exit, and the end of the client's output when it failed.
fn failure(adapter: &Adapter, outcome: &RunOutcome, why: &str) -> String {
    let exit = if outcome.timed_out {
        "timed out".to_string()
    } else {
        outcome
            .exit_code
            .map_or("killed by a signal".into(), |c| format!("exit {c}"))
    };
    let mut line = format!(
        "{}: {why} ({exit}, {} model requests)",
        adapter.id,
        outcome.requests.len()
    );
    if outcome.timed_out || outcome.exit_code != Some(0) {
        let tail = crate::ground::text::one_line(&outcome.output_tail);
        line += &format!(": {}", crate::ground::text::tail(&tail, 300));
    }
    line
}
