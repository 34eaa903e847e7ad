//! `mcp-budget stats LOG.jsonl`: per-tool count, p50, p95 and max of raw and returned tokens and
//! of engine time, from a proxy call log; `--chart` also draws them.

use std::io::Write;

use anyhow::Context;
use mcp_budget::proxy::read_log;
use mcp_budget::report::charts::render_stats_chart;
use mcp_budget::report::{render_stats_table, stats_rows, write_stats_csv};

use crate::cli::{StatsArgs, StatsFormat};
use crate::exit::ExitStatus;

pub fn run(args: StatsArgs) -> anyhow::Result<ExitStatus> {
    // a wrong chart name is found before the log is read
    let chart_png = match &args.chart {
        None => None,
        Some(path) => match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("png") => Some(true),
            Some(e) if e.eq_ignore_ascii_case("svg") => Some(false),
            _ => anyhow::bail!(
                "--chart {}: the file must end in .svg or .png",
                path.display()
            ),
        },
    };
    let records = read_log(&args.log).map_err(|e| anyhow::anyhow!(e))?;
    let rows = stats_rows(&records);
    if let (Some(path), Some(png)) = (&args.chart, chart_png) {
        match render_stats_chart(&rows, png)? {
            Some(bytes) => mcp_budget::atomic::write_atomic(path, |w| w.write_all(&bytes))
                .with_context(|| format!("cannot write {}", path.display()))?,
            None => eprintln!(
                "mcp-budget: {} has no calls: no chart written",
                args.log.display()
            ),
        }
    }
    let mut out = std::io::stdout().lock();
    let written = match args.format {
        StatsFormat::Table => out.write_all(render_stats_table(&rows).as_bytes()),
        StatsFormat::Json => serde_json::to_writer_pretty(&mut out, &rows)
            .map_err(std::io::Error::other)
            .and_then(|()| out.write_all(b"\n")),
        StatsFormat::Csv => write_stats_csv(&rows, &mut out).map_err(std::io::Error::other),
    };
    match written {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitStatus::Success),
        other => other.map(|()| ExitStatus::Success).map_err(Into::into),
    }
}
