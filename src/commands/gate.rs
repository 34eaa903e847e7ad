//! `mcp-budget gate CURRENT.json [--baseline BASELINE.json]`: thresholds and growth against a
//! baseline, printed for a terminal, a PR comment, GitHub Actions or a script.

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use mcp_budget::config::ProbeFile;
use mcp_budget::gate::{
    check_comparable, evaluate, load_report, render_github, render_markdown, render_table, Verdict,
};

use crate::cli::{GateArgs, GateFormat};
use crate::exit::ExitStatus;
use crate::settings;

pub fn run(args: GateArgs) -> anyhow::Result<ExitStatus> {
    let probe_files = args
        .configs
        .iter()
        .map(|path| ProbeFile::read(path))
        .collect::<Result<Vec<_>, _>>()?;
    let thresholds =
        settings::thresholds(settings::probe_thresholds(&probe_files)?, &args.thresholds)?;
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
    Ok(ExitStatus::of_verdict(&verdict, args.exit_zero))
}

fn print(verdict: &Verdict, format: GateFormat, width: Option<u16>) -> anyhow::Result<()> {
    let text = match format {
        GateFormat::Table => render_table(verdict, crate::printer::table_width(width)),
        GateFormat::Markdown => render_markdown(verdict),
        GateFormat::Json => {
            return crate::printer::print_with(|out| mcp_budget::gate::write_json(verdict, out))
        }
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
