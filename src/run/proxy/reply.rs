//! How the proxy words what it answers itself: a result with one text block, what a client sent
//! quoted back (capped: a 400 KB tool name must cost neither seconds of CPU nor a result), and a
//! result read into rmcp's type.

use rmcp::ErrorData;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

/// Characters of a query, name or handle a client sent that are matched or quoted back.
pub const MAX_ECHO_CHARS: usize = 256;

/// The first [`MAX_ECHO_CHARS`] characters of `s`, and whether that is all of it.
pub(super) fn capped(s: &str) -> (&str, bool) {
    match s.char_indices().nth(MAX_ECHO_CHARS) {
        Some((at, _)) => (&s[..at], false),
        None => (s, true),
    }
}

/// `s` as quoted back to a client: capped, with how long it was when it was longer.
pub(super) fn quoted(s: &str) -> String {
    match capped(s) {
        (all, true) => all.to_string(),
        (head, false) => format!(
            "{head}... (the first {MAX_ECHO_CHARS} of {} characters)",
            crate::ground::units::thousands(s.chars().count())
        ),
    }
}

/// A result of the proxy's own with one text block.
pub(super) fn text_json(text: &str, is_error: bool) -> Value {
    let mut v = json!({"content": [{"type": "text", "text": text}]});
    if is_error {
        v["isError"] = json!(true);
    }
    v
}

/// A result for the client, read into rmcp's type. A result without `resultType` is marked
/// `"complete"` (what an absent field means): 2026-07-28 clients require the field, and rmcp
/// takes it off again for a client of an earlier version.
pub(super) fn from_json<T: DeserializeOwned>(v: Value) -> Result<T, ErrorData> {
    serde_json::from_value(crate::measure::marked_complete(v))
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_client_sent_is_capped_before_it_is_quoted() {
        assert_eq!(capped("short"), ("short", true));
        let long = "é".repeat(400_000);
        let (head, whole) = capped(&long);
        assert!(!whole);
        assert_eq!(head.chars().count(), MAX_ECHO_CHARS);
        let q = quoted(&long);
        assert!(q.len() < 1000, "{}", q.len());
        assert!(q.ends_with("(the first 256 of 400,000 characters)"), "{q}");
        assert_eq!(quoted("get_isue"), "get_isue");
    }
}
