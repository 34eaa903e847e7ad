//! The handshake's result (`initialize`, or `server/discover` in the 2026-07-28 era): protocol
//! version, server info, and what the instructions cost.

use serde_json::Value;

use super::MeasureError;
use crate::ground::tokens::{Counts, TokenizerSet};

/// What the initialize result says.
#[derive(Debug, Clone, Default)]
pub struct InitInfo {
    pub protocol_version: Option<String>,
    pub server_info: Option<Value>,
    pub instructions_tokens: Counts,
    pub has_prompts: bool,
    pub has_resources: bool,
    /// The versions a `server/discover` result names (empty for `initialize`).
    pub supported_versions: Vec<String>,
}

/// Where a 2026-07-28 server puts its name and version in a `server/discover` result.
pub const SERVER_INFO_META_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// Read a handshake result's raw text (an `initialize` or a `server/discover` result).
pub fn measure_initialize(raw: &str, set: &TokenizerSet) -> Result<InitInfo, MeasureError> {
    let v: Value =
        serde_json::from_str(raw).map_err(|e| MeasureError::new("initialize result", e))?;
    let caps = &v["capabilities"];
    Ok(InitInfo {
        protocol_version: v["protocolVersion"].as_str().map(String::from),
        server_info: v
            .get("serverInfo")
            .or_else(|| v["_meta"].get(SERVER_INFO_META_KEY))
            .cloned(),
        instructions_tokens: v["instructions"]
            .as_str()
            .map(|s| set.count(s))
            .unwrap_or_else(|| set.uniform(0)),
        has_prompts: caps.get("prompts").is_some_and(|p| !p.is_null()),
        has_resources: caps.get("resources").is_some_and(|p| !p.is_null()),
        supported_versions: v["supportedVersions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(String::from))
            .collect(),
    })
}
