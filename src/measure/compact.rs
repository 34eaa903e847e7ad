//! Compact JSON text with key order kept: the canonical form a client sends a model.

use serde_json::Value;

/// `value` as compact JSON (no spaces, keys in received order, non-ASCII kept as is).
pub fn compact_json(value: &Value) -> String {
    serde_json::to_string(value).expect("a serde_json::Value always serialises")
}
