//! OpenAI Chat Completions (`POST /v1/chat/completions`: opencode, Qwen Code, Copilot CLI, ...):
//! the decision from `messages` and `tools`, and the reply as one completion or as chunks
//! (`data: {...}`, a usage chunk when `stream_options.include_usage`, `data: [DONE]`). Qwen
//! Code hides MCP tools behind a `tool_search` function and calls them through a `tool_call`
//! bridge (`{name, arguments}`): the script searches once, then calls the bridge.

use hyper::StatusCode;
use serde_json::{json, Value};

use super::script::{self, list_at, str_at, Offer, Turn, DONE, SEARCH_ID};
use super::sse::{self, Answer, Event};
use super::Script;

/// Qwen Code's discovery function.
const TOOL_SEARCH: &str = "tool_search";
/// Qwen Code's bridge to deferred tools (`deferred_tool_call` in some versions).
const BRIDGES: &[&str] = &["tool_call", "deferred_tool_call"];

/// The content of the `tool` message answering call `id`, if there is one.
fn result<'a>(messages: &'a [Value], id: &str) -> Option<&'a Value> {
    messages
        .iter()
        .find(|m| str_at(m, "role") == "tool" && str_at(m, "tool_call_id") == id)
        .map(|m| m.get("content").unwrap_or(&Value::Null))
}

/// The name a tool search result gives the probe's tool: Qwen returns each found declaration
/// as `<function>{JSON}</function>`; else Qwen's own form, `mcp__SERVER__TOOL`.
fn found_name(script: &Script, content: &Value) -> String {
    let text = match content {
        Value::String(s) => s.clone(),
        other => script::objects(other)
            .iter()
            .filter_map(|m| m.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
    };
    let declarations: Vec<Value> = text
        .split("<function>")
        .skip(1)
        .filter_map(|s| s.split("</function>").next())
        .filter_map(|s| serde_json::from_str(s).ok())
        .collect();
    let offers = declarations.iter().map(|d| Offer {
        name: str_at(d, "name"),
        namespace: None,
    });
    script
        .best(offers)
        .map_or_else(|| script.mcp_name(), |o| o.name.to_string())
}

pub(super) fn decide(script: &Script, req: &Value) -> Turn {
    let messages = list_at(req, "messages");
    let Some(k) = script.next_call(|id| result(messages, id).is_some()) else {
        return Turn::Done { result_seen: true };
    };
    let names: Vec<&str> = list_at(req, "tools")
        .iter()
        .map(|t| str_at(t.get("function").unwrap_or(t), "name"))
        .collect();
    let offers = names.iter().map(|name| Offer {
        name,
        namespace: None,
    });
    // a bare name may be the client's own tool (Qwen Code's read_file beside the server's
    // deferred one): a client with a search and a bridge is asked for the server's first
    let bridged = names.contains(&TOOL_SEARCH) && BRIDGES.iter().any(|b| names.contains(b));
    if let Some(offer) = script.best(offers) {
        if !bridged || script.rank(offer) >= Some(2) {
            return script.call(offer, k);
        }
    }
    if !names.contains(&TOOL_SEARCH) {
        return Turn::Done { result_seen: false };
    }
    let Some(searched) = result(messages, SEARCH_ID) else {
        return script.discover(TOOL_SEARCH, script.select_query(), script::Kind::Function);
    };
    match BRIDGES.iter().find(|b| names.contains(b)) {
        Some(bridge) => bridge_call(script, bridge, found_name(script, searched), k),
        None => Turn::Done { result_seen: false },
    }
}

/// The probe's call number `k` through Qwen's bridge.
fn bridge_call(script: &Script, bridge: &str, name: String, k: usize) -> Turn {
    Turn::Call(script::Call {
        id: script::target_id(k),
        name: bridge.to_string(),
        namespace: None,
        arguments: script.bridged(name, k),
        kind: script::Kind::Function,
    })
}

/// The assistant's message (whole) and its first delta, and the finish reason.
fn message(turn: &Turn) -> (Value, Value, &'static str) {
    match turn {
        Turn::Call(c) => {
            let function = json!({"name": c.name, "arguments": c.arguments.to_string()});
            (
                json!({"role": "assistant", "content": null,
                       "tool_calls": [{"id": c.id, "type": "function", "function": function}]}),
                json!({"role": "assistant", "content": null,
                       "tool_calls": [{"index": 0, "id": c.id, "type": "function", "function": function}]}),
                "tool_calls",
            )
        }
        Turn::Done { .. } => (
            json!({"role": "assistant", "content": DONE}),
            json!({"role": "assistant", "content": DONE}),
            "stop",
        ),
    }
}

pub(super) fn answer(turn: &Turn, req: &Value, input_tokens: u64) -> Answer {
    let (whole, delta, finish) = message(turn);
    let usage = json!({"prompt_tokens": input_tokens, "completion_tokens": 5, "total_tokens": input_tokens + 5});
    let model = req.get("model").cloned().unwrap_or_else(|| json!("lab"));
    let base = |object: &str| json!({"id": "chatcmpl-probe", "object": object, "created": sse::now_secs(), "model": model});
    if req.get("stream").and_then(Value::as_bool) != Some(true) {
        let mut done = base("chat.completion");
        done["choices"] = json!([{"index": 0, "message": whole, "finish_reason": finish}]);
        done["usage"] = usage;
        return sse::json(StatusCode::OK, &done);
    }
    let chunk = |choices: Value| {
        let mut c = base("chat.completion.chunk");
        c["choices"] = choices;
        Event::data(c.to_string())
    };
    let mut events = vec![
        chunk(json!([{"index": 0, "delta": delta, "finish_reason": null}])),
        chunk(json!([{"index": 0, "delta": {}, "finish_reason": finish}])),
    ];
    let include_usage = req
        .pointer("/stream_options/include_usage")
        .and_then(Value::as_bool);
    if include_usage == Some(true) {
        let mut last = base("chat.completion.chunk");
        last["choices"] = json!([]);
        last["usage"] = usage;
        events.push(Event::data(last.to_string()));
    }
    events.push(Event::data("[DONE]"));
    sse::stream(events)
}
