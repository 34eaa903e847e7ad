//! What of a list reached the model: the budget engine's count of whole items kept.

use serde::{Deserialize, Serialize};

/// The largest list the budget engine cut, and how much of it reached the model: its first
/// `whole` items whole, then `inside` items cut inside, of `total`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ItemsKept {
    /// Where the list is in the JSON (`items`, `data[].rows`; empty: the top level).
    pub path: String,
    pub whole: usize,
    pub inside: usize,
    pub total: usize,
}
