//! `mcp-budget gate CURRENT.json [--baseline BASELINE.json]`: thresholds and growth against a
//! baseline, printed for a terminal, a PR comment, GitHub Actions or a script. Also the gate step
//! of `audit --gate`.

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use mcp_budget::config::ProbeFile;
use mcp_budget::gate::{
    check_comparable, evaluate, load_report, render_github, render_markdown, render_table,
    NotComparable, Thresholds, ToolLimits, Verdict,
};
use mcp_budget::report::Report;

use crate::cli::{GateArgs, GateFormat, ThresholdArgs};
use crate::exit::ExitStatus;

pub fn run(args: GateArgs) -> anyhow::Result<ExitStatus> {
    let mut files = Thresholds::default();
    for path in &args.configs {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let probe: ProbeFile = toml::from_str(mcp_budget::text::strip_bom(&text))
            .with_context(|| format!("{} is not a probe file", path.display()))?;
        if let Some(table) = probe.gate.as_ref().and_then(toml::Value::as_table) {
            files = files.overlay(&Thresholds::from_toml(table, &path.display().to_string())?);
        }
    }
    let thresholds = thresholds(files, &args.thresholds)?;
    let current = load_report(&args.current)?;
    let baseline = match &args.baseline {
        Some(p) => Some(load_report(p)?),
        None => None,
    };
    let shown = args.baseline.as_ref().map(|p| p.display().to_string());
    let comparable = check_comparable(
        &current,
        &args.current.display().to_string(),
        baseline.as_ref().zip(shown.as_deref()),
    );
    if let Err(e) = comparable {
        crate::printer::warn(&format!("error: {e}"));
        return Ok(ExitStatus::Error);
    }
    let verdict = evaluate(
        &current,
        baseline.as_ref().zip(shown.as_deref()),
        &thresholds,
    );
    print(&verdict, args.format, args.width)?;
    Ok(status(&verdict, args.exit_zero))
}

/// The file thresholds with the flags on top; a bad value is a usage error that names it.
pub fn thresholds(files: Thresholds, flags: &ThresholdArgs) -> anyhow::Result<Thresholds> {
    let flags = Thresholds {
        max_tools_tokens: flags.max_tools_tokens,
        max_tool_count: flags.max_tool_count,
        tools: ToolLimits {
            max_tool_tokens: flags.max_tool_tokens,
            max_raw_tokens: flags.max_raw_tokens,
            max_budgeted_tokens: flags.max_budgeted_tokens,
            max_regression_pct: flags.max_regression_pct,
        },
        overrides: Vec::new(),
    };
    let t = files.overlay(&flags);
    t.check().map_err(|(what, message)| {
        anyhow::anyhow!(
            "invalid gate threshold `--{}`: {message}",
            what.replace('_', "-")
        )
    })?;
    Ok(t)
}

/// Exit 1 on a failed gate unless `exit_zero`.
pub fn status(verdict: &Verdict, exit_zero: bool) -> ExitStatus {
    if verdict.passed || exit_zero {
        ExitStatus::Success
    } else {
        ExitStatus::GateFailed
    }
}

fn print(verdict: &Verdict, format: GateFormat, width: Option<u16>) -> anyhow::Result<()> {
    let text = match format {
        GateFormat::Table => render_table(verdict, crate::printer::table_width(width)),
        GateFormat::Markdown => render_markdown(verdict),
        GateFormat::Json => serde_json::to_string_pretty(verdict)? + "\n",
        GateFormat::Github => {
            // the job summary gets the Markdown, appended as GitHub asks
            if let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) {
                let mut f = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&path)
                    .with_context(|| {
                        format!(
                            "cannot append to $GITHUB_STEP_SUMMARY ({})",
                            Path::new(&path).display()
                        )
                    })?;
                f.write_all(render_markdown(verdict).as_bytes())?;
            }
            render_github(verdict)
        }
    };
    crate::printer::print(&text)
}

/// `audit --gate` / `--baseline`: judge the fresh report, write gate.md and gate.json beside it,
/// print the verdict on stderr. Returns the verdict, or `None` (the reason on stderr) when the
/// report lacks a server the baseline has.
pub fn audit_gate(
    report: &Report,
    baseline: Option<&Path>,
    thresholds: &Thresholds,
    out_dir: Option<&Path>,
) -> anyhow::Result<Option<Verdict>> {
    let base = match baseline {
        Some(p) => Some(load_report(p)?),
        None => None,
    };
    let shown = baseline.map(|p| p.display().to_string());
    if let (Some(b), Some(p)) = (&base, &shown) {
        if let Err(e @ NotComparable::MissingServer { .. }) =
            check_comparable(report, "this audit", Some((b, p)))
        {
            crate::printer::warn(&format!("error: {e}"));
            return Ok(None);
        }
    }
    let verdict = evaluate(report, base.as_ref().zip(shown.as_deref()), thresholds);
    if let Some(dir) = out_dir {
        let fail = || format!("failed to write the gate verdict to {}", dir.display());
        mcp_budget::atomic::write_atomic(&dir.join("gate.md"), |o| {
            o.write_all(render_markdown(&verdict).as_bytes())
        })
        .with_context(fail)?;
        mcp_budget::atomic::write_atomic(&dir.join("gate.json"), |o| {
            serde_json::to_writer_pretty(&mut *o, &verdict)?;
            o.write_all(b"\n")
        })
        .with_context(fail)?;
    }
    crate::printer::warn(&render_table(&verdict, Some(120)));
    Ok(Some(verdict))
}
