//! OpenAI Responses (`POST /v1/responses`, Codex CLI): the decision from `input` and `tools`,
//! and the reply as one response or its events (`response.created`,
//! `response.output_item.added`, `response.output_text.delta` for text,
//! `response.output_item.done`, `response.completed`). Codex offers MCP tools inside a
//! `namespace` tool (the call then carries `namespace`), behind a client-executed hosted
//! `tool_search` (found tools come back in a `tool_search_output` input item), or, in code
//! mode, only through a custom `exec` tool (in an `additional_tools` input item) that runs
//! JavaScript calling `tools.mcp__SERVER__TOOL(...)`.

use hyper::StatusCode;
use serde_json::{json, Value};

use super::script::{self, list_at, str_at, Kind, Offer, Turn, DONE, SEARCH_ID};
use super::sse::{self, Answer, Event};
use super::Script;

/// Input item types that answer a call.
const OUTPUTS: &[&str] = &[
    "function_call_output",
    "custom_tool_call_output",
    "tool_search_output",
];

/// Whether an input item answers call `id`.
fn has_output(input: &[Value], id: &str) -> bool {
    input
        .iter()
        .any(|i| OUTPUTS.contains(&str_at(i, "type")) && str_at(i, "call_id") == id)
}

/// Every tool offered: `tools`, and the tools of `additional_tools` and `tool_search_output`
/// input items.
fn offered(req: &Value) -> Vec<&Value> {
    let mut tools: Vec<&Value> = list_at(req, "tools").iter().collect();
    for item in list_at(req, "input") {
        if matches!(
            str_at(item, "type"),
            "additional_tools" | "tool_search_output"
        ) {
            tools.extend(list_at(item, "tools"));
        }
    }
    tools
}

/// Each tool with its namespace's name (namespaces opened, one level).
fn flatten<'a>(tools: &[&'a Value]) -> Vec<(&'a Value, Option<&'a str>)> {
    let mut out = Vec::new();
    for tool in tools {
        if str_at(tool, "type") == "namespace" {
            let ns = str_at(tool, "name");
            out.extend(list_at(tool, "tools").iter().map(|t| (t, Some(ns))));
        } else {
            out.push((*tool, None));
        }
    }
    out
}

pub(super) fn decide(script: &Script, req: &Value) -> Turn {
    let input = list_at(req, "input");
    let Some(k) = script.next_call(|id| has_output(input, id)) else {
        return Turn::Done { result_seen: true };
    };
    let tools = offered(req);
    let flat = flatten(&tools);
    let offers = flat
        .iter()
        .filter(|(t, _)| str_at(t, "type") != "custom")
        .map(|(t, ns)| Offer {
            name: str_at(t, "name"),
            namespace: *ns,
        });
    if let Some(offer) = script.best(offers) {
        return script.call(offer, k);
    }
    let searched = input.iter().any(|i| str_at(i, "call_id") == SEARCH_ID);
    if !searched && tools.iter().any(|t| str_at(t, "type") == "tool_search") {
        let arguments = json!({"query": script.tool, "limit": 5});
        return script.discover("tool_search", arguments, Kind::ToolSearch);
    }
    let exec = flat
        .iter()
        .any(|(t, _)| str_at(t, "type") == "custom" && str_at(t, "name") == "exec");
    if exec {
        return Turn::Call(script::Call {
            id: script::target_id(k),
            name: "exec".into(),
            namespace: None,
            arguments: Value::String(script.exec_code(k)),
            kind: Kind::Custom,
        });
    }
    Turn::Done { result_seen: false }
}

/// The one output item of the reply.
fn item(turn: &Turn) -> Value {
    let Turn::Call(c) = turn else {
        return json!({"type": "message", "id": "msg_probe", "role": "assistant", "status": "completed",
                      "content": [{"type": "output_text", "text": DONE, "annotations": []}]});
    };
    // each call's item its own id (`fc_probe`, `fc_probe_2`, ...)
    let n = c.id.strip_prefix(script::TARGET_ID).unwrap_or_default();
    match c.kind {
        Kind::Custom => {
            json!({"type": "custom_tool_call", "id": format!("ctc_probe{n}"), "call_id": c.id,
                               "name": c.name, "input": c.arguments, "status": "completed"})
        }
        Kind::ToolSearch => json!({"type": "tool_search_call", "id": "ts_probe", "call_id": c.id,
                                   "execution": "client", "status": "completed", "arguments": c.arguments}),
        Kind::Function => {
            let mut item = json!({"type": "function_call", "id": format!("fc_probe{n}"), "call_id": c.id, "name": c.name,
                                  "arguments": c.arguments.to_string(), "status": "completed"});
            if let Some(ns) = &c.namespace {
                item["namespace"] = json!(ns);
            }
            item
        }
    }
}

pub(super) fn answer(turn: &Turn, req: &Value, input_tokens: u64, seq: usize) -> Answer {
    let item = item(turn);
    let usage = json!({"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": 0},
                       "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                       "total_tokens": input_tokens + 5});
    let base = json!({"id": format!("resp_probe_{seq}"), "object": "response", "created_at": sse::now_secs(),
                      "model": req.get("model").cloned().unwrap_or_else(|| json!("lab")),
                      "status": "in_progress", "output": []});
    let mut done = base.clone();
    done["status"] = json!("completed");
    done["output"] = json!([item]);
    done["usage"] = usage;
    if req.get("stream").and_then(Value::as_bool) != Some(true) {
        return sse::json(StatusCode::OK, &done);
    }
    let mut events = vec![
        ("response.created", json!({"response": base})),
        (
            "response.output_item.added",
            json!({"output_index": 0, "item": item}),
        ),
    ];
    if matches!(turn, Turn::Done { .. }) {
        events.push((
            "response.output_text.delta",
            json!({"item_id": "msg_probe", "output_index": 0, "content_index": 0, "delta": DONE}),
        ));
    }
    events.push((
        "response.output_item.done",
        json!({"output_index": 0, "item": item}),
    ));
    events.push(("response.completed", json!({"response": done})));
    let events = events.into_iter().enumerate().map(|(n, (name, mut data))| {
        data["type"] = json!(name);
        data["sequence_number"] = json!(n);
        Event::named(name, &data)
    });
    sse::stream(events.collect())
}
