//! The per-client rows of audit.json: what each client sends per turn of a server's definitions
//! (modelled, and measured by the lab), what reaches its model of each result, and which clients
//! the lab ran.

use serde::{Deserialize, Serialize};

use crate::config::profiles::ClientSeen;

/// What one client sends per turn of one server's tool definitions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ClientSchema {
    pub client: String,
    pub schema_tokens_per_turn: usize,
    /// Definitions are deferred: only names (and instructions) are sent until the model searches.
    pub deferred: bool,
    /// The client's tool limit is broken by this server alone.
    pub tool_limit_exceeded: bool,
    /// Dollars per 1,000 turns for these tokens at the report's price (uncached).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usd_per_1k_turns: Option<f64>,
    /// Every fact this row rests on has a primary source.
    pub confirmed: bool,
    /// The tools the client offers its model, when fewer than the server lists (it reads the
    /// first tools/list page only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_offered: Option<usize>,
    /// The protocol version of the listing this row counts, when the server lists its tools
    /// differently in the two eras (a client of the handshake era gets `tools_list.handshake_era`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listing_era: Option<String>,
    /// The client's model's tokenizer (`[client.model]` in its profile), when not the report's
    /// primary one, and `schema_tokens_per_turn` counted in it (`null` where the audit did not
    /// count that listing in it: another era's listing, an old report).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_tokenizer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_tokens_per_turn: Option<usize>,
    /// What the lab measured the client sending per turn (`audit --client measured`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<MeasuredDefinitions>,
}

/// A server's definitions as a client was measured sending them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct MeasuredDefinitions {
    pub tokens_per_turn: usize,
    pub bytes_per_turn: usize,
    /// `whole`, `namespace`, `partial`, `deferred` or `hidden` (the lab's form).
    pub form: String,
    pub version: String,
}

/// A client `audit --client measured` ran in the lab: its build, and whether it answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct MeasuredClient {
    pub client: String,
    pub name: String,
    /// The version the client reported (`None`: it was not installed, or did not say).
    pub version: Option<String>,
    /// The model name it was told.
    pub model: String,
    /// `measured`, `partial`, `failed` or `not_installed` (the lab's status).
    pub status: String,
    pub measured_at: String,
    /// Why some of it could not be measured, one line per server or probe.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
    /// Where it moved from its profile (a stale profile): another version than the profile was
    /// measured on and what to run, another protocol era, a probe the profile does not predict.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drift: Vec<String>,
}

/// One result in one client: as the server sent it, and after the engine with that client's
/// limits (what `proxy --client` sends it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ClientResult {
    pub client: String,
    /// The tokenizer of `raw.model_tokens` and `budgeted.model_tokens`: the client's model's
    /// (`[client.model]` in its profile), when not the report's primary one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_tokenizer: Option<String>,
    pub raw: ClientSeen,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budgeted: Option<ClientSeen>,
    /// Every fact this row rests on has a primary source.
    pub confirmed: bool,
    /// What reached the client's model of the raw result when the lab ran it
    /// (`audit --client measured`), and the client's version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<ClientSeen>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_version: Option<String>,
    /// The client never offers its model this tool: it is past the first tools/list page,
    /// which is all the client reads (the row says what the client would do with the result).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unlisted: bool,
}
