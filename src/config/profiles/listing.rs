//! How a client offers a server's tools to its model: every definition or names (and what it
//! adds to each), and how much of a paginated `tools/list` it reads.

use serde::{Deserialize, Serialize};

use super::Sourced;

/// What the model is sent of the tool definitions on every turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum SchemaMode {
    Full,
    Deferred,
    DeferredOver,
    Names,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SchemaRule {
    pub mode: SchemaMode,
    /// `deferred_over`: definitions are deferred once all servers have more tools than this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub over_tools: Option<usize>,
    /// A property the client adds to every tool's input schema, as JSON (`{"NAME": {...}}`):
    /// each definition it sends costs that much more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adds_parameter: Option<String>,
    /// Deferred: how each deferred tool is listed to the model every turn, `{name}` (as
    /// `tool_name` spells it) and `{description}` (its first line, at most
    /// `description_chars` characters, as a JSON string) filled in; absent: the name alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deferred_line: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description_chars: Option<usize>,
    /// Deferred: the line that heads each server's tools (`{server}` filled in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deferred_server_line: Option<String>,
    #[serde(flatten)]
    pub sourced: Sourced,
}

/// How a client reads a server's `tools/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ListingRule {
    /// The client reads the first page only (it does not follow `nextCursor`): tools on later
    /// pages are never offered to its model.
    pub first_page_only: bool,
    /// It stops asking for pages once it has this many tools or more (Qwen Code reads 100):
    /// tools on the pages after are never offered to its model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tools: Option<usize>,
    #[serde(flatten)]
    pub sourced: Sourced,
}
