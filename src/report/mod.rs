//! The report model and one renderer per output format.

pub mod charts;
mod count;
mod csv;
mod json;
mod model;
mod replay;
mod server_list;
mod table;

pub use self::csv::{write_csv, write_csv_files, CsvKind};
pub use count::render_count_table;
pub use json::write_json;
pub use model::*;
pub use replay::{render_replay_table, ReplayRow};
pub use server_list::{render_server_list, server_list_json};
pub use table::{render_table, thousands};
