//! The report model and one renderer per output format.

pub mod bundle;
pub mod charts;
pub mod clients;
mod count;
mod csv;
pub mod findings;
pub(crate) mod grid;
mod html;
mod json;
pub mod limits;
mod markdown;
mod page;
mod policy_toml;
pub mod pricing;
mod render;
mod replay;
mod server_list;
mod stats;
mod table;

pub use self::csv::CsvKind;
/// Re-exported for callers that format report numbers; the formatters live in `units`.
pub use count::render_count_table;
pub use policy_toml::{suggested_policy, suggested_tax};
pub use render::{render, Format};
pub use replay::{render_replay_table, ReplayRow};
pub use server_list::{render_server_list, server_list_json, untrusted_notice, ServerListJson};
pub use stats::{render_stats_table, stats_rows, write_stats_csv, StatsRow};

/// Price every server and probe, judge them against the client limits, and run the design
/// checks: everything derived from the measured numbers.
pub fn annotate(report: &mut crate::facts::Report, price: crate::facts::PriceInfo) {
    pricing::apply(report, price);
    limits::apply(report);
    clients::apply(report);
    findings::apply(report);
}
