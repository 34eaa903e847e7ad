//! How a server kept the 2026-07-28 era's rules in one audit: what its results carried and how
//! it refused a version it does not speak. Present only for a server measured in that era.

use serde::{Deserialize, Serialize};

/// The 2026-07-28 era's rules, as this audit saw them kept.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct EraConformance {
    /// `ttlMs` of each tools/list page, in order (`null`: not sent, or not a number).
    pub tools_list_ttl_ms: Vec<Option<u64>>,
    /// `cacheScope` of each tools/list page, in order (`null`: not sent).
    pub tools_list_cache_scope: Vec<Option<String>>,
    /// Results that came without `resultType` (`server/discover`, `tools/list page 2`,
    /// `tools/call get_time`).
    pub without_result_type: Vec<String>,
    /// How `server/discover` naming a version no server speaks was answered.
    pub unknown_version: Option<VersionRefusal>,
}

/// The answer to a request in a protocol version the server does not speak.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct VersionRefusal {
    /// The version asked in.
    pub asked: String,
    /// The error code (`null`: the server answered with a result).
    pub code: Option<i64>,
    /// The error listed the versions the server speaks (`data.supported`).
    pub lists_supported: bool,
}

impl EraConformance {
    /// The tools/list pages whose `ttlMs` is missing or 0, and whose `cacheScope` is missing
    /// (1-based page numbers).
    pub fn pages_without_ttl(&self) -> Vec<usize> {
        pages_where(&self.tools_list_ttl_ms, |t| t.unwrap_or(0) == 0)
    }

    pub fn pages_without_scope(&self) -> Vec<usize> {
        pages_where(&self.tools_list_cache_scope, Option::is_none)
    }
}

fn pages_where<T>(pages: &[T], f: impl Fn(&T) -> bool) -> Vec<usize> {
    pages
        .iter()
        .enumerate()
        .filter(|(_, p)| f(p))
        .map(|(i, _)| i + 1)
        .collect()
}
