//! What the pump says in the server's place when it cannot pass a message on (too large, or
//! nested deeper than serde_json reads): an error answer to the request, found by the id at
//! either end of the dropped bytes, so the request fails now instead of at the timeout.

use std::sync::{Arc, LazyLock};

use regex::Regex;
use tokio::io::{AsyncWriteExt, DuplexStream};

use super::Wire;
use crate::config::Redactor;

/// The `data` of an error the pump answers in the server's place (the server's message was
/// dropped): such a failure is mcp-budget's finding, not a JSON-RPC error of the server.
const DROPPED_DATA: &str = r#"{"mcp_budget":"dropped"}"#;

/// Whether an error's `data` says the pump answered in the server's place.
pub(super) fn answered_for_the_server(data: &Option<serde_json::Value>) -> bool {
    data.as_ref()
        .is_some_and(|d| d["mcp_budget"].as_str() == Some("dropped"))
}

/// Answer the request a dropped response was for (when its id can be found at either end), so
/// it fails now with `what` instead of waiting for the timeout. False when rmcp has gone.
pub(super) async fn answer_dropped(
    to_rmcp: &mut DuplexStream,
    wire: &Wire,
    head: &[u8],
    tail: &[u8],
    what: &str,
) -> bool {
    let head = &head[..head.len().min(512)];
    let tail = &tail[tail.len().saturating_sub(512)..];
    let Some(id) = id_of_dropped(head, tail) else {
        return true;
    };
    answer_with_error(to_rmcp, wire, &id, what).await
}

/// Answer the request with JSON-RPC id `id` (its JSON text) with an error saying the server
/// sent `what`. False when rmcp has gone.
pub(super) async fn answer_with_error(
    to_rmcp: &mut DuplexStream,
    wire: &Wire,
    id: &str,
    what: &str,
) -> bool {
    let message = serde_json::Value::String(format!("the server sent {what}"));
    let err = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32000,"message":{message},"data":{DROPPED_DATA}}}}}"#
    );
    wire.received(Arc::new(err.clone()));
    to_rmcp.write_all(err.as_bytes()).await.is_ok() && to_rmcp.write_all(b"\n").await.is_ok()
}

/// The `data` of the error rmcp gets in place of a `server/discover` result it could not type.
const NOT_DISCOVER_DATA: &str = r#"{"mcp_budget":"not_a_discover_result"}"#;

/// Whether an error's `data` says the pump stood in for a `server/discover` result that was
/// not one.
pub(super) fn not_a_discover_result(data: &Option<serde_json::Value>) -> bool {
    data.as_ref()
        .is_some_and(|d| d["mcp_budget"].as_str() == Some("not_a_discover_result"))
}

/// What rmcp gets instead of `line`, the response to the `server/discover` with id `id` (its
/// JSON text), when its result is not a 2026-07-28 DiscoverResult (`{}`, `null`, a string, a
/// `supportedVersions` that is not a list): a JSON-RPC error, which is what a server of the
/// handshake era answers a method it does not know. rmcp fails such a result outright, even in
/// `--protocol auto`; an error lets it fall back to `initialize`. `None` for a real one. The
/// wire keeps the server's own line.
pub(super) fn discover_stand_in(id: &str, line: &str, redactor: &Redactor) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Discovered {
        #[allow(dead_code)]
        result: rmcp::model::DiscoverResult,
    }
    if serde_json::from_str::<Discovered>(line).is_ok() {
        return None;
    }
    let result = serde_json::from_str::<serde_json::Value>(line)
        .map(|v| v["result"].to_string())
        .unwrap_or_default();
    let message = serde_json::Value::String(format!(
        "server/discover answered with a result that is not a 2026-07-28 DiscoverResult (which needs resultType, supportedVersions, capabilities, ttlMs and cacheScope): {}",
        redactor.preview(&result, 80)
    ));
    Some(format!(
        r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32601,"message":{message},"data":{NOT_DISCOVER_DATA}}}}}"#
    ))
}

/// The id of a response that was too large to keep, from its first or last bytes: servers
/// put `id` either first (`{"jsonrpc":"2.0","id":7,...`) or last (`...,"id":7}`).
fn id_of_dropped(head: &[u8], tail: &[u8]) -> Option<String> {
    static HEAD: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r#"^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")"#,
        )
        .expect("valid regex")
    });
    static TAIL: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r#""id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$"#,
        )
        .expect("valid regex")
    });
    let head = String::from_utf8_lossy(head);
    let tail = String::from_utf8_lossy(tail);
    HEAD.captures(&head)
        .or_else(|| TAIL.captures(&tail))
        .map(|c| c[1].to_string())
}

/// Nesting that serde_json (and so rmcp) parses; a message nested deeper cannot be read.
pub(super) const MAX_DEPTH: usize = 127;

/// How deep arrays and objects nest in a JSON text (brackets inside strings do not count).
pub(super) fn nesting_depth(json: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for (_, b) in crate::ground::text::json_structure(json) {
        match b {
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// The JSON-RPC id (as JSON text) of a response, however deep its `result` nests (serde_json
/// skips unknown fields without recursion); `None` for a request or a notification.
pub(super) fn response_id(text: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Envelope {
        id: Option<Box<serde_json::value::RawValue>>,
        method: Option<serde::de::IgnoredAny>,
    }
    let envelope: Envelope = serde_json::from_str(text).ok()?;
    if envelope.method.is_some() {
        return None;
    }
    envelope.id.map(|id| id.get().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_id_of_a_dropped_response_at_either_end() {
        assert_eq!(
            id_of_dropped(br#"{"jsonrpc":"2.0","id":7,"result":{"#, b"}}"),
            Some("7".into())
        );
        assert_eq!(
            id_of_dropped(
                br#"{"result":{"content":[{"id":3"#,
                br#"]},"jsonrpc":"2.0","id":"a-1"}"#
            ),
            Some("\"a-1\"".into())
        );
        assert_eq!(
            id_of_dropped(br#"{"result":{"id":3"#, br#"...{"id": 9}]}}"#),
            None
        );
    }

    #[test]
    fn the_depth_limit_is_where_serde_json_stops() {
        for depth in MAX_DEPTH - 2..MAX_DEPTH + 3 {
            let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            let parses = serde_json::from_str::<serde_json::Value>(&text).is_ok();
            assert_eq!(nesting_depth(text.as_bytes()), depth);
            assert_eq!(parses, depth <= MAX_DEPTH, "depth {depth}");
        }
        assert_eq!(nesting_depth(br#"{"a":"[[[\"{{","b":[{}]}"#), 3);
    }

    #[test]
    fn a_deep_responses_id_is_found_at_either_end() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let first = format!(r#"{{"jsonrpc":"2.0","id":7,"result":{{"a":{deep}}}}}"#);
        let last = format!(r#"{{"jsonrpc":"2.0","result":{deep},"id":"x"}}"#);
        let request = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{deep}}}"#);
        assert_eq!(response_id(&first).as_deref(), Some("7"));
        assert_eq!(response_id(&last).as_deref(), Some("\"x\""));
        assert_eq!(response_id(&request), None);
    }
}
