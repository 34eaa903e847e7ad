//! `mcp-budget stats`: a proxy call log per tool (count, p50, p95 and max of raw and returned
//! tokens and of engine time, computed in `calllog`). Table and CSV here, JSON by serde.

use crate::ground::text::one_line;
use std::io::Write;

use super::fit::{Column, Fitted};
use super::render::Listing;
pub use crate::ground::calllog::{stats_rows, StatsRow};
use crate::ground::units::thousands;

/// `stats`' output: a table, JSON (the rows as serde writes them) or CSV.
pub fn render_stats(
    rows: &[StatsRow],
    format: Listing,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    match format {
        Listing::Table { width } => out.write_all(table(rows, width).as_bytes()),
        Listing::Json => {
            serde_json::to_writer_pretty(&mut *out, rows)?;
            out.write_all(b"\n")
        }
        Listing::Csv => write_csv(rows, out).map_err(std::io::Error::from),
    }
}

/// The rows as a terminal table fitted to `width`: the p95s stay longest, the engine's times
/// and the maxima go first.
fn table(rows: &[StatsRow], width: Option<u16>) -> String {
    let mut t = Fitted::new(vec![
        Column::text("server", 6, 2),
        Column::text("tool", 10, 0),
        Column::num("calls", 0),
        Column::num("raw p50", 1),
        Column::num("raw p95", 0),
        Column::num("raw max", 2),
        Column::num("returned p50", 1),
        Column::num("returned p95", 0),
        Column::num("returned max", 2),
        Column::num("engine ms p50", 3),
        Column::num("engine ms p95", 2),
        Column::num("engine ms max", 3),
    ]);
    for r in rows {
        t.row(vec![
            one_line(&r.server).into_owned(),
            one_line(&r.tool).into_owned(),
            r.calls.to_string(),
            thousands(r.raw_tokens_p50),
            thousands(r.raw_tokens_p95),
            thousands(r.raw_tokens_max),
            thousands(r.returned_tokens_p50),
            thousands(r.returned_tokens_p95),
            thousands(r.returned_tokens_max),
            format!("{:.2}", r.engine_ms_p50),
            format!("{:.2}", r.engine_ms_p95),
            format!("{:.2}", r.engine_ms_max),
        ]);
    }
    t.shown(width, width, "the --format csv or json output")
}

/// The rows as CSV.
fn write_csv(rows: &[StatsRow], out: &mut dyn Write) -> csv::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    for r in rows {
        w.serialize(r)?;
    }
    w.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ground::calllog::stats::call;
    use crate::ground::calllog::CallRecord;

    #[test]
    fn percentiles_per_tool() {
        let mut log: Vec<CallRecord> = (1..=100)
            .map(|i| call("big", i * 1000, 8000.min(i * 1000), i as f64))
            .collect();
        log.push(call("small", 10, 10, 0.1));
        let rows = stats_rows(&log);
        assert_eq!(rows[0].tool, "big");
        assert_eq!(
            (
                rows[0].calls,
                rows[0].raw_tokens_p50,
                rows[0].raw_tokens_p95,
                rows[0].raw_tokens_max
            ),
            (100, 50_000, 95_000, 100_000)
        );
        assert_eq!((rows[0].returned_tokens_p95, rows[0].spilled), (8000, 92));
        assert_eq!(rows[0].engine_ms_p95, 95.0);
        assert_eq!(
            (rows[1].tool.as_str(), rows[1].calls, rows[1].raw_tokens_p95),
            ("small", 1, 10)
        );
        assert!(table(&rows, None).contains("95,000"));
        let mut csv = Vec::new();
        write_csv(&rows, &mut csv).unwrap();
        assert!(String::from_utf8(csv)
            .unwrap()
            .starts_with("server,tool,calls,errors,spilled,raw_tokens_p50"));
    }
}
