//! `mcp-budget stats LOG.jsonl`: per-tool count, p50, p95 and max of raw and returned tokens and
//! of engine time, from a proxy call log; `--chart` also draws them.

use anyhow::Context;
use mcp_budget::ground::calllog::scan_log;
use mcp_budget::output::report::charts::render_stats_chart;
use mcp_budget::output::report::{render_stats, stats_rows};

use crate::app::cli::{StatsArgs, StatsFormat};
use crate::app::exit::Failure;
use crate::app::settings;

pub fn run(args: StatsArgs) -> anyhow::Result<()> {
    // a wrong chart name is found before the log is read
    let settings::Stats { chart } = settings::Stats::resolve(&args)?;
    let scan = scan_log(&args.log).map_err(|e| anyhow::anyhow!(e))?;
    if !scan.bad_lines.is_empty() {
        crate::app::printer::warn(&skipped_lines(&args.log, &scan.bad_lines));
        if scan.records.is_empty() {
            crate::app::printer::warn(&format!("error: {} has no call record", args.log.display()));
            return Err(Failure::Reported.into());
        }
    }
    let rows = stats_rows(&scan.records);
    if let Some((path, kind)) = &chart {
        match render_stats_chart(&rows, *kind == settings::ChartFile::Png)? {
            Some(bytes) => mcp_budget::ground::atomic::write_atomic(path, |w| w.write_all(&bytes))
                .with_context(|| format!("cannot write {}", path.display()))?,
            None => crate::app::printer::warn(&format!(
                "mcp-budget: {} has no calls: no chart written",
                args.log.display()
            )),
        }
    }
    crate::app::printer::rendered(args.format == StatsFormat::Table, |out| {
        render_stats(&rows, args.format.listing(args.width), out)
    })?;
    Ok(())
}

/// `warning: LOG: skipped 3 lines that are not call records (lines 4, 9, 12)`, the first five
/// line numbers named.
fn skipped_lines(log: &std::path::Path, bad: &[usize]) -> String {
    const NAMED: usize = 5;
    let mut named: Vec<String> = bad.iter().take(NAMED).map(usize::to_string).collect();
    if bad.len() > NAMED {
        named.push("...".into());
    }
    format!(
        "warning: {}: skipped {} line{} that {} not call records (line{} {})",
        log.display(),
        bad.len(),
        if bad.len() == 1 { "" } else { "s" },
        if bad.len() == 1 { "is" } else { "are" },
        if bad.len() == 1 { "" } else { "s" },
        named.join(", ")
    )
}
