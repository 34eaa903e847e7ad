//! `mcp-budget gate CURRENT.json [--baseline BASELINE.json]`: thresholds and growth against a
//! baseline, printed for a terminal, a PR comment, GitHub Actions or a script.

use std::path::Path;

use anyhow::Context;
use mcp_budget::judge::gate::{judge, load_report, Verdict};
use mcp_budget::output::gate::render;

use crate::app::cli::{GateArgs, VerdictFormat};
use crate::app::exit::Failure;
use crate::app::settings;

pub fn run(args: GateArgs) -> anyhow::Result<()> {
    let settings::Gate { thresholds } = settings::Gate::resolve(&args)?;
    let current = load_report(&args.current)?;
    let baseline = match &args.baseline {
        Some(p) => Some(load_report(p)?),
        None => None,
    };
    let shown = args.baseline.as_ref().map(|p| p.display().to_string());
    let judged = judge(
        &current,
        &args.current.display().to_string(),
        baseline.as_ref().zip(shown.as_deref()),
        &thresholds,
    );
    let verdict = match judged {
        Ok(v) => v,
        Err(e) => {
            crate::app::printer::warn(&format!("error: {e}"));
            return Err(Failure::Reported.into());
        }
    };
    if args.format == VerdictFormat::Github {
        summary(&verdict)?;
    }
    let format = args.format.core(
        crate::app::printer::table_width(args.width),
        crate::app::printer::wraps(args.width),
    );
    let escaped = args.format != VerdictFormat::Json;
    crate::app::printer::rendered(escaped, |out| render(&verdict, format, out))?;
    Failure::of_verdict(&verdict, args.exit_zero)
}

/// `--format github`: the Markdown verdict appended to the job summary, when the runner names
/// one (`$GITHUB_STEP_SUMMARY`).
fn summary(verdict: &Verdict) -> anyhow::Result<()> {
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) else {
        return Ok(());
    };
    let fail = || {
        format!(
            "cannot append to $GITHUB_STEP_SUMMARY ({})",
            Path::new(&path).display()
        )
    };
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(fail)?;
    render(
        verdict,
        mcp_budget::output::gate::GateFormat::Markdown,
        &mut f,
    )
    .with_context(fail)
}
