//! Claude Code's turns on Anthropic Messages: ToolSearch, the deferred tool, "done".

use serde_json::{json, Value};

use super::{model, names, post};
use crate::lab::model::{Api, ScriptReply};

/// Claude Code 2.1.332's first request, cut down: built-ins, ToolSearch, the placeholder.
fn first() -> Value {
    json!({
        "model": "claude-opus-5-5", "max_tokens": 128000, "stream": true,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Call the demo tool scrape_as_markdown."}]}],
        "tools": [
            {"name": "Bash", "description": "Run a command", "input_schema": {"type": "object"}},
            {"name": "ToolSearch", "description": "Fetches full schema definitions for deferred tools", "input_schema": {"type": "object"}},
            {"name": "DeferredToolPlaceholder", "description": "never call", "input_schema": {"type": "object", "properties": {}}, "defer_loading": true}
        ]
    })
}

/// The second: ToolSearch's `tool_reference` came back, the MCP tool is in `tools`, deferred.
fn second() -> Value {
    let mut req = first();
    let messages = req["messages"].as_array_mut().unwrap();
    messages.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": "call_probe_search", "name": "ToolSearch",
        "input": {"query": "select:mcp__demo__scrape_as_markdown", "max_results": 5}}]}));
    messages.push(json!({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "call_probe_search", "content": [{"type": "tool_reference", "tool_name": "mcp__demo__scrape_as_markdown"}]},
        {"type": "text", "text": "Tool loaded."}]}));
    req["tools"].as_array_mut().unwrap().push(json!({"name": "mcp__demo__scrape_as_markdown", "description": "Scrape",
        "input_schema": {"type": "object", "properties": {"url": {"type": "string"}}}, "defer_loading": true}));
    req
}

/// The event stream's one tool_use: (id, name, input parsed from its partial JSON).
fn tool_use(events: &[(Option<String>, Value)]) -> (String, String, Value) {
    let start = &events[1].1["content_block"];
    assert_eq!(start["input"], json!({}));
    let partial = events[2].1["delta"]["partial_json"].as_str().unwrap();
    assert_eq!(events[2].1["delta"]["type"], "input_json_delta");
    (
        start["id"].as_str().unwrap().into(),
        start["name"].as_str().unwrap().into(),
        serde_json::from_str(partial).unwrap(),
    )
}

const EVENTS: [&str; 6] = [
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
];

#[tokio::test]
async fn claude_code_is_driven_through_tool_search_then_calls_the_tool_then_gets_done() {
    let m = model("scrape_as_markdown").await;
    let got = post(&m, "/v1/messages?beta=true", &first()).await;
    assert_eq!(got.status, 200);
    let events = got.events();
    assert_eq!(names(&events), EVENTS);
    for (name, data) in &events {
        assert_eq!(data["type"], name.as_deref().unwrap());
    }
    assert_eq!(events[0].1["message"]["model"], "claude-opus-5-5");
    assert_eq!(events[4].1["delta"]["stop_reason"], "tool_use");
    let search = json!({"query": "select:mcp__demo__scrape_as_markdown", "max_results": 5});
    assert_eq!(
        tool_use(&events),
        ("call_probe_search".into(), "ToolSearch".into(), search)
    );

    let events = post(&m, "/v1/messages?beta=true", &second()).await.events();
    assert_eq!(names(&events), EVENTS);
    let call = (
        "call_probe_target".into(),
        "mcp__demo__scrape_as_markdown".into(),
        json!({"url": "demo://x"}),
    );
    assert_eq!(tool_use(&events), call);
    assert!(!m.called(), "no result came back yet");

    let mut third = second();
    let messages = third["messages"].as_array_mut().unwrap();
    messages.push(
        json!({"role": "assistant", "content": [{"type": "tool_use", "id": "call_probe_target",
        "name": "mcp__demo__scrape_as_markdown", "input": {"url": "demo://x"}}]}),
    );
    messages.push(json!({"role": "user", "content": [{"tool_use_id": "call_probe_target", "type": "tool_result", "content": "Error: result exceeds maximum allowed tokens"}]}));
    let events = post(&m, "/v1/messages?beta=true", &third).await.events();
    assert_eq!(names(&events), EVENTS);
    assert_eq!(
        events[1].1["content_block"],
        json!({"type": "text", "text": ""})
    );
    assert_eq!(
        events[2].1["delta"],
        json!({"type": "text_delta", "text": "done"})
    );
    assert_eq!(events[4].1["delta"]["stop_reason"], "end_turn");
    assert!(m.called());

    let replies: Vec<ScriptReply> = m.requests().into_iter().map(|r| r.reply).collect();
    let target = ScriptReply::CallTool {
        call_id: "call_probe_target".into(),
        name: "mcp__demo__scrape_as_markdown".into(),
        namespace: None,
    };
    assert_eq!(
        replies,
        [
            ScriptReply::Discover {
                tool: "ToolSearch".into()
            },
            target,
            ScriptReply::Text
        ]
    );
    let recorded = m.requests();
    assert_eq!(
        recorded.iter().map(|r| r.seq).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert!(recorded
        .iter()
        .all(|r| r.api == Some(Api::AnthropicMessages) && r.path == "/v1/messages?beta=true"));
    assert_eq!(
        serde_json::from_slice::<Value>(&recorded[2].body).unwrap(),
        third
    );
    m.stop().await;
}

#[tokio::test]
async fn a_deferred_tool_waits_for_its_tool_reference_and_discovery_runs_once() {
    let m = model("scrape_as_markdown").await;
    // deferred, but no tool_reference back yet: search first
    let mut req = first();
    req["tools"].as_array_mut().unwrap().push(
        json!({"name": "mcp__demo__scrape_as_markdown", "input_schema": {}, "defer_loading": true}),
    );
    let events = post(&m, "/v1/messages", &req).await.events();
    assert_eq!(tool_use(&events).1, "ToolSearch");
    // the search came back without the tool: no second search, "done"
    let mut after = first();
    let messages = after["messages"].as_array_mut().unwrap();
    messages.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_probe_search", "content": "No matching deferred tools found"}]}));
    let events = post(&m, "/messages", &after).await.events();
    assert_eq!(events[2].1["delta"]["text"], "done");
    // without ToolSearch (Copilot CLI's deferred tools) a deferred tool is called directly
    let mut copilot = req.clone();
    copilot["tools"]
        .as_array_mut()
        .unwrap()
        .retain(|t| t["name"] != "ToolSearch");
    let events = post(&m, "/v1/messages", &copilot).await.events();
    assert_eq!(tool_use(&events).1, "mcp__demo__scrape_as_markdown");
    assert!(!m.called());
    assert_eq!(
        m.requests()[1].path,
        "/messages",
        "the path without /v1 is served"
    );
}

#[tokio::test]
async fn without_stream_one_message_and_count_tokens_answer_json() {
    let m = model("scrape_as_markdown").await;
    let mut req = second();
    req["stream"] = json!(false);
    let got = post(&m, "/v1/messages", &req).await;
    assert_eq!(
        (got.status, got.content_type.as_str()),
        (200, "application/json")
    );
    let body = got.json();
    assert_eq!(body["type"], "message");
    assert_eq!(body["stop_reason"], "tool_use");
    assert_eq!(
        body["content"],
        json!([{"type": "tool_use", "id": "call_probe_target", "name": "mcp__demo__scrape_as_markdown", "input": {"url": "demo://x"}}])
    );
    let count =
        json!({"model": "claude-opus-5-5", "messages": [{"role": "user", "content": "hi"}]});
    let got = post(&m, "/v1/messages/count_tokens?beta=true", &count).await;
    // the strings' cl100k_base counts, each alone: "claude-opus-5-5" is 7, "user" 1, "hi" 1
    let expected: usize = ["claude-opus-5-5", "user", "hi"]
        .iter()
        .map(|t| crate::ground::tokens::Tokenizer::Cl100k.count(t))
        .sum();
    assert_eq!(got.json(), json!({"input_tokens": expected}));
    assert_eq!(m.requests()[1].reply, ScriptReply::CountTokens);
    assert_eq!(m.requests()[1].api, Some(Api::AnthropicMessages));
}
