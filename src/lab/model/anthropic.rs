//! Anthropic Messages (`POST /v1/messages`, Claude Code): the decision from `messages` and
//! `tools`, and the reply as one message or as its event stream (`message_start`,
//! `content_block_start`, `content_block_delta`, `content_block_stop`, `message_delta`,
//! `message_stop`). Claude Code defers MCP tools behind `ToolSearch`: a tool it sends with
//! `defer_loading: true` is callable once a `tool_reference` to it came back (or when no
//! ToolSearch is offered, as Copilot CLI sends deferred tools).

use hyper::StatusCode;
use serde_json::{json, Value};

use super::script::{self, list_at, str_at, Offer, Turn, DONE, SEARCH_ID};
use super::sse::{self, Answer, Event};
use super::Script;

/// Claude Code's discovery tool.
const TOOL_SEARCH: &str = "ToolSearch";

/// Whether a `tool_result` for `id` is in `messages`.
fn has_result(messages: &Value, id: &str) -> bool {
    script::objects(messages).iter().any(|m| {
        m.get("type").and_then(Value::as_str) == Some("tool_result")
            && m.get("tool_use_id").and_then(Value::as_str) == Some(id)
    })
}

/// Whether a `tool_reference` to `name` came back in `messages`.
fn referenced(messages: &Value, name: &str) -> bool {
    script::objects(messages).iter().any(|m| {
        m.get("type").and_then(Value::as_str) == Some("tool_reference")
            && m.get("tool_name").and_then(Value::as_str) == Some(name)
    })
}

pub(super) fn decide(script: &Script, req: &Value) -> Turn {
    let messages = req.get("messages").unwrap_or(&Value::Null);
    let Some(k) = script.next_call(|id| has_result(messages, id)) else {
        return Turn::Done { result_seen: true };
    };
    let tools = list_at(req, "tools");
    let search = tools.iter().any(|t| str_at(t, "name") == TOOL_SEARCH);
    let callable = tools.iter().filter(|t| {
        let deferred = t.get("defer_loading").and_then(Value::as_bool) == Some(true);
        !deferred || !search || referenced(messages, str_at(t, "name"))
    });
    let offers = callable.map(|t| Offer {
        name: str_at(t, "name"),
        namespace: None,
    });
    if let Some(offer) = script.best(offers) {
        return script.call(offer, k);
    }
    if search && !has_result(messages, SEARCH_ID) {
        return script.discover(TOOL_SEARCH, script.select_query(), script::Kind::Function);
    }
    Turn::Done { result_seen: false }
}

/// The one content block of the reply, whole; its start (empty) and its delta.
fn block(turn: &Turn) -> (Value, Value, Value, &'static str) {
    match turn {
        Turn::Call(c) => (
            json!({"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}),
            json!({"type": "tool_use", "id": c.id, "name": c.name, "input": {}}),
            json!({"type": "input_json_delta", "partial_json": c.arguments.to_string()}),
            "tool_use",
        ),
        Turn::Done { .. } => (
            json!({"type": "text", "text": DONE}),
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": DONE}),
            "end_turn",
        ),
    }
}

pub(super) fn answer(turn: &Turn, req: &Value, input_tokens: u64) -> Answer {
    let (whole, start, delta, stop) = block(turn);
    let mut message = json!({
        "id": "msg_probe", "type": "message", "role": "assistant", "content": [],
        "model": req.get("model").cloned().unwrap_or_else(|| json!("lab")),
        "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": input_tokens, "output_tokens": 1},
    });
    if req.get("stream").and_then(Value::as_bool) != Some(true) {
        message["content"] = json!([whole]);
        message["stop_reason"] = json!(stop);
        message["usage"]["output_tokens"] = json!(5);
        return sse::json(StatusCode::OK, &message);
    }
    sse::stream(vec![
        Event::named(
            "message_start",
            &json!({"type": "message_start", "message": message}),
        ),
        Event::named(
            "content_block_start",
            &json!({"type": "content_block_start", "index": 0, "content_block": start}),
        ),
        Event::named(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        ),
        Event::named(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": 0}),
        ),
        Event::named(
            "message_delta",
            &json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 5}}),
        ),
        Event::named("message_stop", &json!({"type": "message_stop"})),
    ])
}

/// `POST /v1/messages/count_tokens`: `{"input_tokens": N}`.
pub(super) fn count(input_tokens: u64) -> Answer {
    sse::json(StatusCode::OK, &json!({"input_tokens": input_tokens}))
}
