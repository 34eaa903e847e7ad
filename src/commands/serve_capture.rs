//! `mcp-budget serve-capture DIR`: a recording served back as an MCP server on stdio. Also the
//! binary's side of `audit --record DIR`: where the recording goes and what is said about it.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use mcp_budget::budget::Engine;
use mcp_budget::capture::{self, CaptureError, Recorder, Replay, ReplayDefaults, PROBES_FILE};
use mcp_budget::config::ServerSpec;
use mcp_budget::tokens::TokenizerSet;

use crate::cli::ServeCaptureArgs;
use crate::exit::ExitStatus;

pub fn run(args: ServeCaptureArgs) -> anyhow::Result<ExitStatus> {
    let mut replay = match Replay::load(&args.dir, args.server.as_deref()) {
        Ok(r) => r,
        Err(e @ CaptureError::ServerRequired { .. }) => {
            crate::printer::warn(&format!("error: {e} with --server NAME"));
            return Ok(ExitStatus::Error);
        }
        Err(e) => {
            crate::printer::warn(&format!("error: {e}"));
            return Ok(ExitStatus::Error);
        }
    };
    let served = super::runtime()?.block_on(capture::serve(
        &mut replay,
        tokio::io::stdin(),
        tokio::io::stdout(),
    ));
    match served {
        // the client went away: the session is over
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitStatus::Success),
        other => other
            .context("failed to serve the recording")
            .map(|()| ExitStatus::Success),
    }
}

/// The recorder for `audit --record DIR`: every transcript is cleaned of every server's secrets,
/// and its `probes.toml` runs this executable with the run's tokenizers and budget.
pub(super) fn recorder(
    dir: Option<&Path>,
    tokenizers: &TokenizerSet,
    engine: &Engine,
    specs: &[ServerSpec],
) -> anyhow::Result<Option<Arc<Recorder>>> {
    let Some(dir) = dir else {
        return Ok(None);
    };
    let defaults = ReplayDefaults {
        tokenizer: tokenizers
            .all()
            .iter()
            .map(|t| t.name().to_string())
            .collect(),
        budget: Some(engine.policy().budget()),
    };
    let mut recorder = Recorder::create(dir, defaults).context("--record")?;
    recorder.redact_secrets_of(specs);
    Ok(Some(Arc::new(recorder)))
}

/// Say where the recording is, or what failed to be written.
pub(super) fn recorded(recorder: Option<&Recorder>) -> ExitStatus {
    let Some(recorder) = recorder else {
        return ExitStatus::Success;
    };
    let failures = recorder.failures();
    for f in &failures {
        crate::printer::warn(&format!("error: recording: {f}"));
    }
    let manifest = recorder.manifest();
    if manifest.servers.is_empty() {
        eprintln!("nothing recorded: no server could be reached");
        return ExitStatus::Error;
    }
    let redactions: usize = manifest.servers.iter().map(|s| s.redactions).sum();
    eprintln!(
        "recording of {} server(s) written to {} ({redactions} secret(s) replaced); audit it with: mcp-budget audit {}",
        manifest.servers.len(),
        recorder.dir().display(),
        recorder.dir().join(PROBES_FILE).display()
    );
    if failures.is_empty() {
        ExitStatus::Success
    } else {
        ExitStatus::Error
    }
}
