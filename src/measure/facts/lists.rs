//! The cost of a server's lists: its tools (per era, where a server lists them differently in
//! the two protocol eras) and its prompts and resources.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ToolsList {
    pub pages: usize,
    pub tool_count: usize,
    pub wire_bytes: usize,
    pub wire_tokens: usize,
    /// What a model is sent per turn for these tools: sum of the tools' model views.
    pub model_tokens: usize,
    pub latency_ms: f64,
    /// A page asked for with a cursor came back the same as the page before (pagination stopped).
    #[serde(default)]
    pub cursor_ignored: bool,
    /// A second tools/list gave the same bytes (prompt caching needs it).
    #[serde(default)]
    pub relist_identical: Option<bool>,
    /// A second tools/list gave the tools in the same order.
    #[serde(default)]
    pub relist_same_order: Option<bool>,
    /// The first page (1-based) at which the second tools/list differed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relist_differs_at_page: Option<usize>,
    /// Bytes of the largest page's `result` (an SDK's read limit applies to one message).
    #[serde(default)]
    pub largest_page_bytes: usize,
    /// Tools on the first page, all a client that ignores `nextCursor` offers (0: not counted).
    #[serde(default)]
    pub first_page_tools: usize,
    /// Tools on each page, in order (empty: not counted, an old report).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub page_tools: Vec<usize>,
    /// The listing a client of the handshake era gets, when the server lists its tools
    /// differently in that era than in the 2026-07-28 era the audit spoke (absent: the same,
    /// or only one era asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handshake_era: Option<EraListing>,
}

/// A server's tools as it lists them in another protocol era.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct EraListing {
    /// The version that era's session settled on (`2025-06-18`).
    pub protocol_version: String,
    pub pages: usize,
    pub tool_count: usize,
    /// What a model is sent per turn for these tools (the model views' sum, as `model_tokens`).
    pub model_tokens: usize,
    /// Tools on the first page.
    pub first_page_tools: usize,
    /// The tools' names, in list order.
    pub tools: Vec<String>,
    /// Each tool's model-view tokens, in list order.
    pub tool_tokens: Vec<usize>,
}

/// A prompts or resources list.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ListCost {
    pub pages: usize,
    pub count: usize,
    pub wire_bytes: usize,
    pub wire_tokens: usize,
}
