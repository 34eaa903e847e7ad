//! The lab's runs that find a client's rules (`lab --derive`): each shape's search, `--jobs`
//! shapes at once, and the one run on a server from before 2026 that says the client's era.

use std::collections::BTreeMap;
use std::path::Path;

use futures::StreamExt;

use super::super::adapter::Adapter;
use super::super::derive::{self, ShapeRule};
use super::super::probe::ProbeOutcome;
use super::super::report::LabServerReport;
use super::super::shape_server::{MAX_CHARS, TOOL};
use super::{read_call, read_listing, run_probe, run_server, LabOptions, LabProbe, LabServer};

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
            let run = move |sizes: Vec<usize>| {
                let probes: Vec<LabProbe> = sizes
                    .iter()
                    .map(|chars| LabProbe {
                        tool: TOOL.into(),
                        arguments: serde_json::json!({"shape": shape.name(), "chars": chars}),
                    })
                    .collect();
                async move {
                    let (outcomes, folders) =
                        probe_run(opts, adapter, bin, server, &probes, base_env).await;
                    kept_ref.borrow_mut().extend(folders);
                    outcomes
                }
            };
            // where the client's profile puts the boundaries, tried first
            let hints = crate::config::profiles::profile(&adapter.id).map(|p| {
                let top = derive::ESCALATE_MAX.min(MAX_CHARS);
                derive::hints(p, shape, derive::SMALLEST, MAX_CHARS, top, opts.tokenizer)
            });
            let batch = adapter.derive_calls;
            async move {
                let rules = derive::bisect(shape, MAX_CHARS, hints, batch, run).await;
                (i, shape, rules)
            }
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

/// One client run of `probes` (calls of one tool, one after another): what each became, for
/// the calls up to the first that could not be measured (an error when the first could not);
/// and where `--keep` left the run's folders.
async fn probe_run(
    opts: &LabOptions,
    adapter: &Adapter,
    bin: &Path,
    server: &LabServer,
    probes: &[LabProbe],
    base_env: &BTreeMap<String, String>,
) -> (Result<Vec<ProbeOutcome>, String>, Vec<String>) {
    let Some(first) = probes.first() else {
        return (Ok(Vec::new()), Vec::new());
    };
    let more: Vec<serde_json::Value> = probes[1..].iter().map(|p| p.arguments.clone()).collect();
    let (_, run) = run_probe(opts, adapter, bin, server, base_env, first, &more).await;
    let mut outcome = match run {
        Ok(outcome) => outcome,
        Err(e) => return (Err(e.to_string()), Vec::new()),
    };
    let kept = match opts.keep {
        true => outcome
            .keep()
            .map(|d| d.display().to_string())
            .into_iter()
            .collect(),
        false => Vec::new(),
    };
    let mut report = LabServerReport::empty(&server.name);
    read_listing(&mut report, adapter, &outcome, opts.tokenizer);
    if let Some(e) = report.error {
        return (Err(e), kept);
    }
    let mut outcomes = Vec::new();
    for (k, p) in probes.iter().enumerate() {
        match read_call(&report, adapter, p, k, &outcome, opts.tokenizer) {
            Ok(o) => outcomes.push(o),
            Err(e) if k == 0 => return (Err(e), kept),
            Err(_) => break,
        }
    }
    (Ok(outcomes), kept)
}
