//! `mcp-budget stats LOG.jsonl`: per-tool count, p50, p95 and max of raw and returned tokens and
//! of engine time, from a proxy call log.

use std::io::Write;

use mcp_budget::proxy::read_log;
use mcp_budget::report::{render_stats_table, stats_rows, write_stats_csv};

use crate::cli::{StatsArgs, StatsFormat};
use crate::exit::ExitStatus;

pub fn run(args: StatsArgs) -> anyhow::Result<ExitStatus> {
    let records = read_log(&args.log).map_err(|e| anyhow::anyhow!(e))?;
    let rows = stats_rows(&records);
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
