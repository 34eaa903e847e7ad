//! The writers: one renderer per output format over the report's facts (`crate::measure::facts`), the
//! page model the markup formats share (`page/`), the charts and the report folder (`bundle.rs`).

pub mod bundle;
pub mod charts;
mod compare;
mod count;
mod csv;
pub(crate) mod fit;
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
pub use compare::{render_compare, CompareRow};
pub use count::{render_count, render_count_plain};
pub use render::{render, Format, Listing};
pub use replay::{render_replay, ReplayRow};
pub use server_list::{render_servers, untrusted_notice, ServerListJson, SignIns};
pub use stats::{render_stats, stats_rows, StatsRow};
