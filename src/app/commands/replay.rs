//! `mcp-budget replay`: run saved tool results through the budget engine, offline.

use mcp_budget::budget::{load_payload, CallInfo, Engine};
use mcp_budget::config::profiles::{profiles, ClientProfile};
use mcp_budget::output::report::{render_compare, render_replay, CompareRow, ReplayRow};

use crate::app::cli::{ListFormat, ReplayArgs};
use crate::app::exit::Failure;
use crate::app::settings;

pub fn run(args: ReplayArgs) -> anyhow::Result<()> {
    let settings::Replay { engine } = settings::Replay::resolve(&args)?;
    if args.compare {
        return compare(&engine, &args);
    }
    let mut rows = Vec::new();
    let mut failed = false;
    for file in &args.files {
        match replay_one(&engine, file, &args) {
            Ok(row) => {
                if let Some(e) = &row.spill_error {
                    crate::app::printer::warn(&format!(
                        "error: {}: the full original could not be saved: {e}",
                        file.display()
                    ));
                    failed = true;
                }
                rows.push(row);
            }
            Err(e) => {
                crate::app::printer::warn(&format!("error: {e:#}"));
                failed = true;
            }
        }
    }
    let format = args.format.listing(args.width);
    crate::app::printer::rendered(args.format == ListFormat::Table, |out| {
        render_replay(&rows, format, out)
    })?;
    Failure::unless_failed(failed)
}

fn replay_one(
    engine: &Engine,
    file: &std::path::Path,
    args: &ReplayArgs,
) -> anyhow::Result<ReplayRow> {
    let payload = load_payload(file, args.tool.as_deref())?;
    let call = CallInfo {
        server: &payload.server,
        tool: &payload.tool,
        raw: payload.raw.as_deref(),
        output_schema: args.output_schema,
    };
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..args.runs.max(1) {
        let started = std::time::Instant::now();
        let out = engine.run(&call, &payload.result);
        times.push(started.elapsed().as_micros() as u64);
        last = Some(out);
    }
    times.sort_unstable();
    let b = last.expect("at least one run");
    let tokens_before = engine.tokens_before(&b, &payload.result);
    Ok(ReplayRow {
        fill: Engine::fill(&b, tokens_before),
        items: b.list.clone(),
        file: file.display().to_string(),
        tool: payload.tool.clone(),
        tokens_before,
        tokens_after: b.tokens_after,
        budget: b.budget,
        strategy: b.strategy.name().to_string(),
        engine_us: times[times.len() / 2],
        stages: b
            .stages
            .iter()
            .map(|s| (s.name.clone(), s.micros))
            .collect(),
        spill_path: b.spill.as_ref().map(|s| s.path.display().to_string()),
        note: b.note.clone(),
        spill_error: b.spill_error,
        result: b.result,
        toon_tokens: mcp_budget::budget::toon_result(&payload.result).map(|t| engine.cost(&t)),
    })
}

/// `--compare`: every file as each contender gives it to the model.
fn compare(engine: &Engine, args: &ReplayArgs) -> anyhow::Result<()> {
    let clients: Vec<&ClientProfile> = match &args.client {
        Some(list) => list.profiles.clone(),
        None => profiles().iter().collect(),
    };
    // the engine alone, at the budget: each client's limits are met in its own row
    let plain = settings::Replay::plain_engine(args)?;
    let _ = engine;
    let mut rows = Vec::new();
    let mut failed = false;
    for file in &args.files {
        match load_payload(file, args.tool.as_deref()) {
            Ok(payload) => {
                let call = CallInfo {
                    server: &payload.server,
                    tool: &payload.tool,
                    raw: payload.raw.as_deref(),
                    output_schema: args.output_schema,
                };
                let comparison = mcp_budget::judge::assess::compare::compare(
                    &plain,
                    &call,
                    &payload.result,
                    &clients,
                    args.tokenizer,
                    args.needles,
                    args.seed,
                );
                rows.push(CompareRow {
                    file: file.display().to_string(),
                    tool: payload.tool.clone(),
                    comparison,
                });
            }
            Err(e) => {
                crate::app::printer::warn(&format!("error: {e:#}"));
                failed = true;
            }
        }
    }
    let format = args.format.listing(args.width);
    crate::app::printer::rendered(args.format == ListFormat::Table, |out| {
        render_compare(&rows, format, out)
    })?;
    Failure::unless_failed(failed)
}
