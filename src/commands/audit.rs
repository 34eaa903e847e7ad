//! `mcp-budget audit`: load the servers, audit them, write the report files, print a summary.
//!
//! Settings precedence: command-line flag > `MCP_BUDGET_*` environment variable > the first
//! probe file's `[defaults]` > built-in default.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use mcp_budget::audit::{build_report, run_audit, AuditOptions};
use mcp_budget::budget::{Engine, Policy};
use mcp_budget::config::{load_sources, parse_config_text, Defaults, Sources};
use mcp_budget::demo::DEMO_PROBES;
use mcp_budget::gate::Thresholds;
use mcp_budget::report::{
    annotate, bundle, findings, pricing, render, CsvKind, Format, ProbeStatus, Report, Status,
};
use mcp_budget::tokens::{Tokenizer, TokenizerSet};
use mcp_budget::upstream::{load_ca_file, SessionOptions};

use crate::cli::{AuditArgs, AuditFormat};
use crate::exit::ExitStatus;
use crate::printer::warn;
use crate::progress::Bars;

pub fn run(args: AuditArgs) -> anyhow::Result<ExitStatus> {
    if let Some(rule) = &args.explain {
        return explain(rule);
    }
    let price = pricing::choose(Some(&args.model), args.price.as_deref())?;
    let cwd = std::env::current_dir()?;
    let home = super::home();
    let mut files = args.files.clone();
    files.extend(args.configs.iter().cloned());
    let mut sources = load_sources(&files, home.as_deref(), &cwd, &super::env_var);
    if files.is_empty() && sources.servers.servers.is_empty() && sources.file_errors.is_empty() {
        warn("no MCP client config found; auditing the embedded demo server (probes/demo.toml)");
        let demo = parse_config_text(
            Path::new("probes/demo.toml"),
            DEMO_PROBES,
            None,
            &super::env_var,
        )?;
        sources.servers.merge(demo.servers);
        sources.probe_files.extend(demo.probe_file);
    }
    for e in &sources.file_errors {
        warn(&format!("error: {e}"));
    }
    for e in &sources.servers.errors {
        warn(&format!("error: skipped {e}"));
    }
    if let Err(e) = sources.servers.select(&args.servers) {
        warn(&format!("error: {e}"));
        return Ok(ExitStatus::Error);
    }
    // nothing to measure (every file broken, or none defines a server) is a config error: no
    // table is printed and the last report stays as it was
    if sources.servers.servers.is_empty() {
        if sources.file_errors.is_empty() && sources.servers.errors.is_empty() {
            warn(&format!("error: {}", nothing_to_audit(&files)));
        }
        return Ok(ExitStatus::Error);
    }
    let opts = options(&args, &sources)?;
    let thresholds = if args.gate {
        Some(gate_thresholds(&args, &sources)?)
    } else {
        None
    };
    let specs = sources.servers.servers.clone();
    let bars = Arc::new(Bars::new(specs.len()));
    let rows = super::runtime()?.block_on(async {
        tokio::select! {
            rows = run_audit(specs, &opts, bars.clone()) => Some(rows),
            _ = tokio::signal::ctrl_c() => None,
        }
    });
    bars.finish();
    let Some(rows) = rows else {
        warn("interrupted: servers stopped, no report written");
        return Ok(ExitStatus::Interrupted);
    };
    let mut report = build_report(rows, &opts.tokenizers, &sources.servers.errors);
    annotate(&mut report, price);
    if !args.no_write {
        write_reports(&report, &args.out, !args.no_charts)?;
    }
    let recorded = super::serve_capture::recorded(opts.recorder.as_deref());
    print_report(&report, &args)?;
    // a recording that failed, or a server that could not be audited (2), outranks a failed
    // gate (1)
    let audited = match recorded {
        ExitStatus::Success => status(&report, &sources),
        failed => failed,
    };
    if args.gate || args.baseline.is_some() {
        let t = thresholds.unwrap_or_default();
        let out = (!args.no_write).then_some(args.out.as_path());
        let verdict = super::gate::audit_gate(&report, args.baseline.as_deref(), &t, out)?;
        match verdict {
            // a report that cannot be compared with its baseline is an error, never a pass
            None => return Ok(ExitStatus::Error),
            Some(v) if audited == ExitStatus::Success && args.gate => {
                return Ok(super::gate::status(&v, args.exit_zero));
            }
            Some(_) => {}
        }
    }
    Ok(audited)
}

fn options(args: &AuditArgs, sources: &Sources) -> anyhow::Result<AuditOptions> {
    let defaults = sources
        .probe_files
        .first()
        .map(|p| p.defaults.clone())
        .unwrap_or_default();
    let Defaults {
        tokenizer,
        timeout_secs,
        concurrency,
        budget,
    } = defaults;
    let tokenizers = match (&args.tokenizer, tokenizer) {
        (Some(list), _) => Tokenizer::parse_list(list)?,
        (None, Some(list)) => Tokenizer::parse_list(&list.join(","))?,
        (None, None) => vec![Tokenizer::Cl100k],
    };
    let tokenizers = TokenizerSet::new(tokenizers);
    let engine = engine(args, sources, budget, tokenizers.primary())?;
    let specs = &sources.servers.servers;
    let recorder =
        super::serve_capture::recorder(args.record.as_deref(), &tokenizers, &engine, specs)?;
    Ok(AuditOptions {
        tokenizers,
        timeout: Duration::from_secs(args.timeout.or(timeout_secs).unwrap_or(60)),
        concurrency: args.concurrency.or(concurrency).unwrap_or(8),
        auto_probe: args.auto_probe,
        session: SessionOptions {
            max_response_bytes: args.max_response_bytes,
            record: args.record.is_some(),
            extra_roots: match &args.ca_cert {
                Some(path) => load_ca_file(path).map_err(|e| anyhow::anyhow!("--ca-cert: {e}"))?,
                None => Vec::new(),
            },
            ..SessionOptions::default()
        },
        engine: Some(Arc::new(engine)),
        recorder,
    })
}

/// The engine: built-in policy, then the probe files' `[policy]`, then `--policy`; the budget
/// from `--budget`, else the first probe file's `[defaults]`.
fn engine(
    args: &AuditArgs,
    sources: &Sources,
    file_budget: Option<usize>,
    tokenizer: Tokenizer,
) -> anyhow::Result<Engine> {
    let mut policy = Policy::builtin();
    for probe in &sources.probe_files {
        if let Some(table) = &probe.policy {
            policy
                .extend_from_toml(table)
                .with_context(|| format!("in {}", probe.path.display()))?;
        }
    }
    if let Some(path) = &args.engine.policy {
        policy.extend_from_file(path)?;
    }
    if let Some(b) = args.engine.budget.or(file_budget) {
        policy.set_budget(b)?;
    }
    let spill = match (&args.engine.spill_dir, args.no_write) {
        (Some(dir), _) => dir.clone(),
        (None, false) => args.out.join("spill"),
        (None, true) => super::replay::default_spill_dir(),
    };
    let store = super::spill_store(&spill)?;
    Ok(Engine::new(policy, tokenizer, store))
}

/// The probe files' `[gate]` tables in order, then the flags.
fn gate_thresholds(args: &AuditArgs, sources: &Sources) -> anyhow::Result<Thresholds> {
    let mut t = Thresholds::default();
    for probe in &sources.probe_files {
        if let Some(table) = probe.gate.as_ref().and_then(toml::Value::as_table) {
            t = t.overlay(&Thresholds::from_toml(
                table,
                &probe.path.display().to_string(),
            )?);
        }
    }
    super::gate::thresholds(t, &args.thresholds)
}

/// `audit --explain RULE`: what a findings rule checks and why.
fn explain(id: &str) -> anyhow::Result<ExitStatus> {
    if id == "list" {
        for r in findings::RULES {
            crate::printer::print(&format!("{:<30} {:<8} {}\n", r.id, r.severity, r.title))?;
        }
        return Ok(ExitStatus::Success);
    }
    match findings::rule(id) {
        Some(r) => {
            crate::printer::print(&findings::explain(r))?;
            Ok(ExitStatus::Success)
        }
        None => {
            let known: Vec<&str> = findings::RULES.iter().map(|r| r.id).collect();
            warn(&format!(
                "error: unknown rule `{id}` (known: {})",
                known.join(", ")
            ));
            Ok(ExitStatus::Error)
        }
    }
}

fn write_reports(report: &Report, dir: &Path, charts: bool) -> anyhow::Result<()> {
    let fail = || format!("failed to write the report to {}", dir.display());
    bundle::write(report, dir, charts).with_context(fail)?;
    warn(&format!("report written to {}", dir.display()));
    Ok(())
}

fn print_report(report: &Report, args: &AuditArgs) -> anyhow::Result<()> {
    use crate::printer::print;
    let text = |format: Format| -> anyhow::Result<String> {
        let mut out = Vec::new();
        render(report, format, &mut out)?;
        String::from_utf8(out).context("the report is not UTF-8")
    };
    match args.format {
        AuditFormat::Table => print(&text(Format::Table {
            width: crate::printer::table_width(args.width),
        })?),
        AuditFormat::Json => crate::printer::print_with(|out| render(report, Format::Json, out)),
        AuditFormat::Csv => print(&text(Format::Csv(CsvKind::Tools))?),
        AuditFormat::Markdown => print(&text(Format::Markdown { charts: &[] })?),
    }
}

/// Exit 2 when a server could not be audited, a probe could not be made (an unknown tool, a
/// JSON-RPC error, a timeout) or a config entry was skipped; each one is named on stderr.
fn status(report: &Report, sources: &Sources) -> ExitStatus {
    let mut failed = !sources.file_errors.is_empty() || !sources.servers.errors.is_empty();
    for s in &report.servers {
        for p in &s.probes {
            if let Some(e) = p.budgeted.as_ref().and_then(|b| b.spill_error.as_deref()) {
                failed = true;
                warn(&format!(
                    "error: server `{}`, probe `{}`: the full original could not be saved: {e}",
                    s.name, p.tool
                ));
            }
        }
        if s.status == Status::Error {
            failed = true;
            warn(&format!(
                "error: server `{}`: {}",
                s.name,
                s.error.as_deref().unwrap_or("failed")
            ));
        }
        for p in s.probes.iter().filter(|p| p.status == ProbeStatus::Error) {
            failed = true;
            warn(&format!(
                "error: server `{}`: probe of `{}` failed: {}",
                s.name,
                p.tool,
                p.error.as_deref().unwrap_or("no result")
            ));
        }
    }
    if failed {
        ExitStatus::Error
    } else {
        ExitStatus::Success
    }
}

/// The message for a run with no server to audit.
fn nothing_to_audit(files: &[std::path::PathBuf]) -> String {
    if files.is_empty() {
        return "no server to audit: the client configs found define none".into();
    }
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    format!("no server to audit: {} define(s) none", names.join(", "))
}
