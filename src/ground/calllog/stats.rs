//! The statistics of a call log: per tool, the count and the p50 / p95 / max of raw and
//! returned tokens and of engine time (nearest-rank percentiles).

use std::collections::BTreeMap;

use serde::Serialize;

use super::record::CallRecord;

/// One tool's calls.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatsRow {
    pub server: String,
    pub tool: String,
    pub calls: usize,
    pub errors: usize,
    pub spilled: usize,
    pub raw_tokens_p50: usize,
    pub raw_tokens_p95: usize,
    pub raw_tokens_max: usize,
    pub returned_tokens_p50: usize,
    pub returned_tokens_p95: usize,
    pub returned_tokens_max: usize,
    pub engine_ms_p50: f64,
    pub engine_ms_p95: f64,
    pub engine_ms_max: f64,
}

/// The nearest-rank percentile `p` (0-100) of sorted values.
fn percentile<T: Copy + Default>(sorted: &[T], p: f64) -> T {
    if sorted.is_empty() {
        return T::default();
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Rows per (server, tool), the tools with the largest raw p95 first.
pub fn stats_rows(records: &[CallRecord]) -> Vec<StatsRow> {
    let mut by: BTreeMap<(&str, &str), Vec<&CallRecord>> = BTreeMap::new();
    for r in records {
        by.entry((&r.server, &r.tool)).or_default().push(r);
    }
    let mut rows: Vec<StatsRow> = by
        .into_iter()
        .map(|((server, tool), calls)| {
            // a call that failed before the engine saw a result measured nothing: it counts
            // as a call and an error, not as a zero in the percentiles
            let measured: Vec<&&CallRecord> = calls.iter().filter(|c| c.error.is_none()).collect();
            let mut raw: Vec<usize> = measured.iter().map(|c| c.raw_tokens).collect();
            let mut ret: Vec<usize> = measured.iter().map(|c| c.returned_tokens).collect();
            let mut eng: Vec<f64> = measured.iter().map(|c| c.engine_ms).collect();
            raw.sort_unstable();
            ret.sort_unstable();
            eng.sort_by(f64::total_cmp);
            StatsRow {
                server: server.to_string(),
                tool: tool.to_string(),
                calls: calls.len(),
                errors: calls.iter().filter(|c| c.is_error).count(),
                spilled: calls.iter().filter(|c| c.spill_id.is_some()).count(),
                raw_tokens_p50: percentile(&raw, 50.0),
                raw_tokens_p95: percentile(&raw, 95.0),
                raw_tokens_max: raw.last().copied().unwrap_or(0),
                returned_tokens_p50: percentile(&ret, 50.0),
                returned_tokens_p95: percentile(&ret, 95.0),
                returned_tokens_max: ret.last().copied().unwrap_or(0),
                engine_ms_p50: percentile(&eng, 50.0),
                engine_ms_p95: percentile(&eng, 95.0),
                engine_ms_max: eng.last().copied().unwrap_or(0.0),
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        b.raw_tokens_p95
            .cmp(&a.raw_tokens_p95)
            .then(a.tool.cmp(&b.tool))
    });
    rows
}

/// A logged call for tests: `raw` tokens in, `ret` returned, `ms` in the engine; spilled when
/// it was cut.
#[cfg(test)]
pub(crate) fn call(tool: &str, raw: usize, ret: usize, ms: f64) -> CallRecord {
    CallRecord {
        ts: String::new(),
        server: "s".into(),
        tool: tool.into(),
        client_name: None,
        client_version: None,
        transport: "stdio".into(),
        raw_bytes: raw * 4,
        raw_tokens: raw,
        returned_tokens: ret,
        strategy: "pass_through".into(),
        error: None,
        spill_id: (raw > ret).then(|| "s/x.md".into()),
        spill_error: None,
        upstream_ms: 1.0,
        engine_ms: ms,
        is_error: false,
        schema_tokens_upstream: None,
        schema_tokens_shown: None,
        via: None,
        ..CallRecord::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A call that failed before the engine (logged with nothing measured) counts as a call
    /// and an error, never as a zero in the percentiles.
    #[test]
    fn failed_calls_do_not_drag_the_percentiles_down() {
        let mut log: Vec<CallRecord> = (1..=10).map(|i| call("t", i * 100, 100, 1.0)).collect();
        for _ in 0..10 {
            log.push(CallRecord {
                strategy: "error".into(),
                is_error: true,
                error: Some("the upstream server `s` failed".into()),
                ..call("t", 0, 0, 0.0)
            });
        }
        let row = &stats_rows(&log)[0];
        assert_eq!((row.calls, row.errors), (20, 10));
        assert_eq!(
            (
                row.raw_tokens_p50,
                row.returned_tokens_p50,
                row.engine_ms_p50
            ),
            (500, 100, 1.0)
        );
    }
}
