//! The writers: one renderer per output format over the report's facts (`crate::facts`), the
//! page model the markup formats share (`page/`), the charts and the report folder (`bundle.rs`).

pub mod bundle;
pub mod charts;
mod count;
mod csv;
pub(crate) mod grid;
mod html;
mod json;
mod markdown;
mod page;
mod render;
mod replay;
mod server_list;
mod stats;
mod table;

pub use self::csv::CsvKind;
/// Re-exported for callers that format report numbers; the formatters live in `units`.
pub use count::render_count_table;
pub use render::{render, Format};
pub use replay::{render_replay_table, ReplayRow};
pub use server_list::{render_server_list, server_list_json, untrusted_notice, ServerListJson};
pub use stats::{render_stats_table, stats_rows, write_stats_csv, StatsRow};
