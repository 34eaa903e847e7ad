//! `mcp-budget audit`: load the servers, audit them, write the report files, print a summary;
//! with `--gate` or `--baseline`, judge the fresh report; with `--record`, say where the
//! recording went. Its settings are resolved in `settings::Audit`.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use mcp_budget::config::Sources;
use mcp_budget::judge::assess::{annotate, findings};
use mcp_budget::judge::gate::{judge, Thresholds, Verdict};
use mcp_budget::measure::facts::{ProbeStatus, Report, Status};
use mcp_budget::output::gate::GateFormat;
use mcp_budget::output::report::{bundle, render, CsvKind, Format};
use mcp_budget::run::audit::{build_report, run_audit, AuditOptions, AuditRun};
use mcp_budget::wire::capture::{Recorder, PROBES_FILE};

use crate::app::cli::{AuditArgs, AuditFormat};
use crate::app::exit::Failure;
use crate::app::printer::warn;
use crate::app::progress::Bars;
use crate::app::settings;

#[cfg(feature = "lab")]
mod drift;
#[cfg(feature = "lab")]
mod measured;

pub fn run(args: AuditArgs) -> anyhow::Result<()> {
    if let Some(rule) = &args.explain {
        return explain(rule);
    }
    let settings::AuditPlan {
        price,
        baseline,
        sources,
        settings,
    } = settings::AuditPlan::resolve(&args)?;
    let opts = settings.options;
    let run = audit_servers(&sources, &opts)?;
    let mut report = build_report(run, &opts.tokenizers, &sources.servers.errors);
    annotate(&mut report, price);
    #[cfg(feature = "lab")]
    if settings.measured {
        // the measured rows change what the compatibility findings see
        if let Err(e) = measured::measure(&mut report, &sources.servers.servers) {
            warn(&format!("error: {e:#}"));
            return Err(Failure::Reported.into());
        }
        findings::apply(&mut report);
    } else {
        // the lab says it for a measured client
        drift::say(&report);
    }
    if !args.no_write {
        write_reports(&report, &args.out, !args.no_charts)?;
    }
    let recorded = recorded(opts.recorder.as_deref());
    let exported = settings.otlp.as_ref().is_none_or(|c| export(&report, c));
    print_report(&report, &args)?;
    if let Some(path) = &args.suggest_policy {
        suggest_policy(&report, path)?;
    }
    // a recording that failed, or a server that could not be audited (2), outranks a failed
    // gate (1)
    let audited = recorded && exported && audited(&report, &sources);
    if args.gate || args.baseline.is_some() {
        let t = settings.thresholds.unwrap_or_default();
        match gate(&report, baseline.as_ref(), &t, &args)? {
            // a report that cannot be compared with its baseline is an error, never a pass
            None => return Err(Failure::Reported.into()),
            Some(v) if audited && args.gate => return Failure::of_verdict(&v, args.exit_zero),
            Some(_) => {}
        }
    }
    Failure::unless_failed(!audited)
}

/// Audit the servers with a progress bar each; a signal stops them (no report written, the last
/// one as it was) and is the run's failure.
fn audit_servers(sources: &Sources, opts: &AuditOptions) -> anyhow::Result<AuditRun> {
    let specs = sources.servers.servers.clone();
    crate::app::signin::offer_sign_ins(&specs);
    let bars = Arc::new(Bars::new(specs.len()));
    let run = super::runtime()?.block_on(async {
        let signalled = super::signals()?;
        let audit = run_audit(specs, opts, bars.clone());
        tokio::pin!(audit);
        anyhow::Ok(tokio::select! {
            run = &mut audit => Ok(run),
            // the servers end while the audit still holds them (dropping it would SIGKILL them)
            status = signalled => {
                mcp_budget::wire::upstream::end_all(mcp_budget::wire::upstream::GRACE).await;
                Err(status)
            }
        })
    })?;
    bars.finish();
    run.map_err(|status| -> anyhow::Error {
        warn(&format!(
            "interrupted ({}): servers stopped, no report written (the last one is as it was)",
            status.name()
        ));
        Failure::Signalled(status).into()
    })
}

/// `audit --suggest-policy FILE`: write the policy that cuts the schema tax, and say how much.
fn suggest_policy(report: &Report, path: &Path) -> anyhow::Result<()> {
    let text = mcp_budget::judge::assess::suggested_policy(report)
        .with_context(|| format!("cannot write the suggested policy {}", path.display()))?;
    mcp_budget::ground::atomic::write_atomic(path, |w| w.write_all(text.as_bytes()))
        .with_context(|| format!("cannot write the suggested policy {}", path.display()))?;
    let (now, then) = mcp_budget::judge::assess::suggested_tax(report);
    warn(&format!(
        "suggested policy written to {}: schema tax {} -> {} tokens per turn with it (mcp-budget proxy --policy {} -- <server>)",
        path.display(),
        mcp_budget::ground::units::thousands(now),
        mcp_budget::ground::units::thousands(then),
        path.display()
    ));
    Ok(())
}

/// `audit --otlp`: the report's numbers to the collector; whether they reached it (a failure
/// is said, the report is written all the same).
fn export(report: &Report, config: &mcp_budget::output::telemetry::OtlpConfig) -> bool {
    match mcp_budget::output::telemetry::export_audit(
        report,
        config,
        &settings::env_var,
        Duration::from_secs(15),
    ) {
        Ok(points) => {
            warn(&format!(
                "telemetry: {points} data points exported ({})",
                config.describe()
            ));
            true
        }
        Err(e) => {
            warn(&format!("error: --otlp: {e}"));
            false
        }
    }
}

/// `audit --explain RULE`: what a findings rule checks and why.
fn explain(id: &str) -> anyhow::Result<()> {
    if id == "list" {
        for r in findings::RULES {
            crate::app::printer::print(&format!("{:<30} {:<8} {}\n", r.id, r.severity, r.title))?;
        }
        return Ok(());
    }
    match findings::rule(id) {
        Some(r) => {
            crate::app::printer::print(&findings::explain(r))?;
            Ok(())
        }
        None => {
            let known: Vec<&str> = findings::RULES.iter().map(|r| r.id).collect();
            warn(&format!(
                "error: unknown rule `{id}` (known: {})",
                known.join(", ")
            ));
            Err(Failure::Reported.into())
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
    use crate::app::printer::print;
    let text = |format: Format| -> anyhow::Result<String> {
        let mut out = Vec::new();
        render(report, format, &mut out)?;
        String::from_utf8(out).context("the report is not UTF-8")
    };
    match args.format {
        AuditFormat::Table => print(&text(Format::Table {
            width: crate::app::printer::table_width(args.width),
            wrap: crate::app::printer::wraps(args.width),
        })?),
        AuditFormat::Json => {
            crate::app::printer::print_with(|out| render(report, Format::Json, out))
        }
        AuditFormat::Csv => print(&text(Format::Csv(CsvKind::Tools))?),
        AuditFormat::Markdown => print(&text(Format::Markdown { charts: &[] })?),
    }
}

/// Whether every server was audited: false (exit 2) when a server could not be, a probe could
/// not be made (an unknown tool, a JSON-RPC error, a timeout) or a config entry was skipped;
/// each one is named on stderr.
fn audited(report: &Report, sources: &Sources) -> bool {
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
    !failed
}

/// `audit --gate` / `--baseline`: judge the fresh report, write gate.md and gate.json beside it,
/// print the verdict on stderr. Returns the verdict, or `None` (the reason on stderr) when the
/// report cannot be judged (`gate::judge`: it measured nothing, or lacks a server the baseline
/// has).
fn gate(
    report: &Report,
    baseline: Option<&(Report, String)>,
    thresholds: &Thresholds,
    args: &AuditArgs,
) -> anyhow::Result<Option<Verdict>> {
    let out_dir = (!args.no_write).then_some(args.out.as_path());
    let shown = GateFormat::Table {
        width: crate::app::printer::table_width(args.width),
        wrap: crate::app::printer::wraps(args.width),
    };
    let verdict = match judge(
        report,
        "this audit",
        baseline.map(|(r, shown)| (r, shown.as_str())),
        thresholds,
    ) {
        Ok(v) => v,
        Err(e) => {
            warn(&format!("error: {e}"));
            return Ok(None);
        }
    };
    if let Some(dir) = out_dir {
        mcp_budget::output::gate::write_files(&verdict, dir)
            .with_context(|| format!("failed to write the gate verdict to {}", dir.display()))?;
    }
    let mut table = Vec::new();
    mcp_budget::output::gate::render(&verdict, shown, &mut table)?;
    warn(String::from_utf8_lossy(&table).trim_end());
    Ok(Some(verdict))
}

/// `audit --record`: say where the recording is, or what failed to be written; whether all of
/// it was.
fn recorded(recorder: Option<&Recorder>) -> bool {
    let Some(recorder) = recorder else {
        return true;
    };
    let failures = recorder.failures();
    for f in &failures {
        warn(&format!("error: recording: {f}"));
    }
    let manifest = recorder.manifest();
    if manifest.servers.is_empty() {
        warn("nothing recorded: no server could be reached");
        return false;
    }
    let redactions: usize = manifest.servers.iter().map(|s| s.redactions).sum();
    warn(&format!(
        "recording of {} server(s) written to {} ({redactions} secret(s) replaced); audit it with: mcp-budget audit {}",
        manifest.servers.len(),
        recorder.dir().display(),
        recorder.dir().join(PROBES_FILE).display()
    ));
    failures.is_empty()
}
