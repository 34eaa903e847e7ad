//! The lab's runs that find a client's rules (`lab --derive`): each shape's search, `--jobs`
//! shapes at once, and the one run on a server from before 2026 that says the client's era.

use std::collections::BTreeMap;
use std::path::Path;

use futures::StreamExt;

use super::super::adapter::Adapter;
use super::super::derive::{self, ShapeRule};
use super::super::probe::ProbeOutcome;
use super::super::shape_server::{MAX_CHARS, TOOL};
use super::{run_server, LabOptions, LabProbe, LabServer};

/// Find the client's rules on the lab server, shape by shape: the rules, the shapes that
/// failed, and (`--keep`) where the runs' folders are.
pub(super) async fn derive_client(
    opts: &LabOptions,
    adapter: &Adapter,
    bin: &Path,
    base_env: &BTreeMap<String, String>,
    progress: &mut impl FnMut(&str),
) -> (Vec<ShapeRule>, Vec<String>, Vec<String>) {
    let server = LabServer {
        name: "lab".into(),
        command: vec![opts.exe.display().to_string(), "lab-server".into()],
        env: BTreeMap::new(),
        probes: Vec::new(),
    };
    let kept = std::cell::RefCell::new(Vec::new());
    let progress = std::cell::RefCell::new(progress);
    let (server, kept_ref) = (&server, &kept);
    // each shape's search on its own, `--jobs` shapes at once, read back in the shapes' order
    let mut found =
        futures::stream::iter(opts.derive.iter().copied().enumerate().map(|(i, shape)| {
            (progress.borrow_mut())(&format!("{}: deriving {}", adapter.id, shape.name()));
            let run = move |chars: usize| {
                let probe = LabProbe {
                    tool: TOOL.into(),
                    arguments: serde_json::json!({"shape": shape.name(), "chars": chars}),
                };
                async move {
                    let (outcome, folders) =
                        probe_once(opts, adapter, bin, server, &probe, base_env).await;
                    kept_ref.borrow_mut().extend(folders);
                    outcome
                }
            };
            // where the client's profile puts the boundaries, tried first
            let hints = crate::profiles::profile(&adapter.id).map(|p| {
                let top = derive::ESCALATE_MAX.min(MAX_CHARS);
                derive::hints(p, shape, derive::SMALLEST, MAX_CHARS, top, opts.tokenizer)
            });
            async move { (i, shape, derive::bisect(shape, MAX_CHARS, hints, run).await) }
        }))
        .buffer_unordered(opts.jobs.max(1))
        .collect::<Vec<_>>()
        .await;
    found.sort_by_key(|f| f.0);
    let (mut rules, mut errors) = (Vec::new(), Vec::new());
    for (_, shape, result) in found {
        match result {
            Ok(found) => rules.extend(found),
            Err(e) => errors.push(format!("{}: {e}", shape.name())),
        }
    }
    derive::settle_units(&mut rules);
    (rules, errors, kept.into_inner())
}

/// The era the client speaks, from one run on a server from before 2026 (`lab-server --era
/// unaware`): what it opens with, and, if that is `server/discover`, whether it falls back.
pub(super) async fn era_once(
    opts: &LabOptions,
    adapter: &Adapter,
    bin: &Path,
    base_env: &BTreeMap<String, String>,
) -> Option<super::super::ClientEra> {
    let server = LabServer {
        name: "lab".into(),
        command: vec![
            opts.exe.display().to_string(),
            "lab-server".into(),
            "--era".into(),
            "unaware".into(),
        ],
        env: BTreeMap::new(),
        probes: vec![LabProbe {
            tool: TOOL.into(),
            arguments: serde_json::json!({"shape": "lines", "chars": 200}),
        }],
    };
    run_server(opts, adapter, bin, &server, base_env).await.era
}

/// One run of one probe: what it became, or why it could not be measured; and where
/// `--keep` left its folders.
async fn probe_once(
    opts: &LabOptions,
    adapter: &Adapter,
    bin: &Path,
    server: &LabServer,
    probe: &LabProbe,
    base_env: &BTreeMap<String, String>,
) -> (Result<ProbeOutcome, String>, Vec<String>) {
    let one = LabServer {
        probes: vec![probe.clone()],
        ..server.clone()
    };
    let mut report = run_server(opts, adapter, bin, &one, base_env).await;
    let kept = std::mem::take(&mut report.kept);
    if let Some(e) = report.error.take().or_else(|| report.probe_errors.pop()) {
        return (Err(e), kept);
    }
    let outcome = report
        .probes
        .pop()
        .ok_or_else(|| "the run measured nothing".to_string());
    (outcome, kept)
}
