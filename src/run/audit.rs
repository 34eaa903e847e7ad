//! Running an audit: every server concurrently (bounded), each under its own timeout, each
//! ending as a report row whatever happens to it. Async, no printing: progress goes to an
//! [`AuditObserver`] the binary implements.

mod clients;
mod engine_time;
mod era;
mod lists;
mod observer;
mod server;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio::task::JoinSet;

pub use clients::client_rows;
pub use engine_time::warm_up;
pub use observer::{AuditObserver, NoProgress, Phase};
pub use server::audit_server;

use crate::budget::Engine;
use crate::config::profiles::ClientProfile;
use crate::config::{EntryError, ServerSpec};
use crate::ground::tokens::TokenizerSet;
use crate::measure::facts::{ConfigIssue, Report, ServerReport};
use crate::wire::capture::Recorder;
use crate::wire::upstream::SessionOptions;

/// Settings of one audit run.
#[derive(Debug, Clone)]
pub struct AuditOptions {
    pub tokenizers: TokenizerSet,
    /// Bound on each server's whole audit (connect, lists, probes).
    pub timeout: Duration,
    /// Servers audited at once.
    pub concurrency: usize,
    /// Also call read-only tools that need no arguments.
    pub auto_probe: bool,
    pub session: SessionOptions,
    /// The budget engine every probe result is replayed through.
    pub engine: Option<Arc<Engine>>,
    /// Where each server's transcript goes (`--record`); needs `session.record`.
    pub recorder: Option<Arc<Recorder>>,
    /// The clients whose view of every result and tool list is reported.
    pub clients: Vec<&'static ClientProfile>,
    /// Tools a parameter must be repeated in, the same, to be a `shared-parameters` group.
    pub shared_min_tools: usize,
}

impl Default for AuditOptions {
    fn default() -> Self {
        AuditOptions {
            tokenizers: TokenizerSet::default(),
            timeout: Duration::from_secs(60),
            concurrency: 8,
            auto_probe: false,
            session: SessionOptions::default(),
            engine: None,
            recorder: None,
            clients: crate::config::profiles::profiles().iter().collect(),
            shared_min_tools: crate::measure::SHARED_PARAMETER_TOOLS,
        }
    }
}

/// What an audit run measured: a row per server, and the engine's start-up.
#[derive(Debug, Clone)]
pub struct AuditRun {
    /// In the order the specs were given.
    pub servers: Vec<ServerReport>,
    /// Microseconds of the engine's one-time start-up, paid before the first probe and in no
    /// probe's `engine_us`; `None` without an engine.
    pub engine_startup_us: Option<u64>,
    /// The clients the rows were measured for.
    pub clients: Vec<ClientProfile>,
    /// Where the engine spilled originals; `None` without an engine.
    pub spill_dir: Option<String>,
}

/// Audit every server, after the engine's start-up ([`warm_up`]) so that no probe pays it.
pub async fn run_audit(
    specs: Vec<ServerSpec>,
    opts: &AuditOptions,
    observer: Arc<dyn AuditObserver>,
) -> AuditRun {
    let engine_startup_us = match opts.engine.clone() {
        Some(engine) => tokio::task::spawn_blocking(move || warm_up(&engine))
            .await
            .ok(),
        None => None,
    };
    AuditRun {
        servers: audit_servers(specs, opts, observer).await,
        engine_startup_us,
        clients: opts.clients.iter().map(|p| (*p).clone()).collect(),
        spill_dir: opts
            .engine
            .as_ref()
            .map(|e| e.store().dir().display().to_string()),
    }
}

/// Audit every server (bounded concurrency); rows come back in the order the specs were given.
async fn audit_servers(
    specs: Vec<ServerSpec>,
    opts: &AuditOptions,
    observer: Arc<dyn AuditObserver>,
) -> Vec<ServerReport> {
    let permits = Arc::new(Semaphore::new(opts.concurrency.max(1)));
    let mut set = JoinSet::new();
    let mut tasks = HashMap::new();
    for (index, spec) in specs.into_iter().enumerate() {
        let (permits, opts, observer) = (permits.clone(), opts.clone(), observer.clone());
        let kept = spec.clone();
        let task = set.spawn(async move {
            let _permit = permits.acquire_owned().await;
            (index, audit_server(&spec, &opts, observer.as_ref()).await)
        });
        tasks.insert(task.id(), (index, kept));
    }
    let mut rows = rows_of(set, tasks, observer.as_ref()).await;
    rows.sort_by_key(|(i, _)| *i);
    rows.into_iter().map(|(_, r)| r).collect()
}

/// Every task's row; a task that panicked (a bug of ours) is its server's error row, which
/// names it, not a row gone missing.
async fn rows_of(
    mut set: JoinSet<(usize, ServerReport)>,
    mut tasks: HashMap<tokio::task::Id, (usize, ServerSpec)>,
    observer: &dyn AuditObserver,
) -> Vec<(usize, ServerReport)> {
    let mut rows = Vec::new();
    while let Some(joined) = set.join_next_with_id().await {
        match joined {
            Ok((_, row)) => rows.push(row),
            Err(e) => {
                let Some((index, spec)) = tasks.remove(&e.id()) else {
                    continue;
                };
                let row = server::crashed(&spec, &panic_text(e));
                observer.finished(&row);
                rows.push((index, row));
            }
        }
    }
    rows
}

/// What a failed task said: its panic's message.
fn panic_text(e: tokio::task::JoinError) -> String {
    if !e.is_panic() {
        return "its task was cancelled".into();
    }
    let payload = e.into_panic();
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// Wrap an audit run into a report.
pub fn build_report(
    run: AuditRun,
    tokenizers: &TokenizerSet,
    config_errors: &[EntryError],
) -> Report {
    Report {
        generated_at: crate::ground::units::now_rfc3339(),
        engine_startup_us: run.engine_startup_us,
        clients: run.clients,
        spill_dir: run.spill_dir,
        config_errors: config_errors
            .iter()
            .map(|e| ConfigIssue {
                file: e.file.clone(),
                key: e.key.clone(),
                message: e.message.clone(),
            })
            .collect(),
        ..Report::new(tokenizers.names(), run.servers)
    }
}

#[cfg(test)]
mod tests;
