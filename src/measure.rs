//! Turning raw JSON-RPC results into token numbers, exactly as docs/design.md's accounting rules say.
//! Synchronous and pure: it reads the bytes a server sent and returns report values.

mod arguments;
mod code_spans;
mod compact;
mod description_cut;
mod duplicate;
mod era;
pub mod facts;
mod init;
mod json_eq;
mod lean;
mod lints;
mod list_limit;
mod pagination;
mod read;
mod result;
mod scalars;
mod schema_check;
mod shared;
mod tools;

pub use arguments::{edit_distance, near_names, schema_errors};
pub use code_spans::{code_spans, inside};
pub use compact::compact_json;
pub use description_cut::description_cut;
pub use duplicate::{is_json_text, json_text, looks_like_json, structured_duplicate, TextView};
pub use era::{capped_eras, era_marks, marked_complete, EraMarks, MAX_ERAS};
pub use init::{measure_initialize, InitInfo, SERVER_INFO_META_KEY};
pub use json_eq::{json_text_holds, json_text_wraps, Holds};
pub use lean::{apply_transform, factor_repeats, lean_tool, LeanTransform};
pub use lints::{
    lint_tool, lint_tool_with, Counted, LintLimits, ToolLints, LONG_DESCRIPTION_TOKENS,
};
pub use list_limit::{bound, limit_named, list_shaped, unbounded_message, Bound};
pub use pagination::is_paginated;
pub use read::read_json;
pub use result::{measure_parsed_result, measure_result, text_stats, tool_error_text};
pub(crate) use scalars::json_scalar_visits;
pub use shared::{
    hide_parameters, shared_parameters, statement, suggested_hidden_tokens, without_parameter,
    RequiredHidden, SHARED_PARAMETER_TOOLS,
};
pub use tools::{
    description_head, measure_list, measure_tool, measure_tools_pages, model_view, ToolsMeasure,
};

/// A result that is not the JSON its method promises.
#[derive(Debug, thiserror::Error)]
#[error("{what} is not valid: {message}")]
pub struct MeasureError {
    pub what: String,
    pub message: String,
}

impl MeasureError {
    pub fn new(what: &str, message: impl ToString) -> Self {
        MeasureError {
            what: what.to_string(),
            message: message.to_string(),
        }
    }
}
