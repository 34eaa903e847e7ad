//! The proxy's call log: one JSON line per proxied tool call, and the statistics over it that
//! `mcp-budget stats` shows. Synchronous; both the proxy and `stats` use it.

mod record;
pub(crate) mod stats;

pub use record::{read_log, scan_log, CallLog, CallRecord, LogScan};
pub use stats::{stats_rows, StatsRow};
