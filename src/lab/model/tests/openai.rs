//! Chat Completions (opencode, Qwen Code) and Responses (Codex: namespace, tool_search, exec).

use serde_json::{json, Value};

use super::{model, names, post};
use crate::lab::model::{Api, ScriptReply};

fn function(name: &str) -> Value {
    json!({"type": "function", "function": {"name": name, "description": "d", "parameters": {"type": "object"}}})
}

/// opencode 1.18.33's turn request, cut down.
fn opencode(messages: Value) -> Value {
    json!({"model": "m", "max_tokens": 8192, "stream": true, "stream_options": {"include_usage": true}, "tool_choice": "auto",
           "messages": messages, "tools": [function("bash"), function("read"), function("demo_read_file"), function("demo_scrape_as_markdown")]})
}

#[tokio::test]
async fn opencode_gets_streamed_tool_call_chunks_then_done_and_its_title_request_done() {
    let m = model("read_file").await;
    let title = json!({"model": "m", "stream": true, "stream_options": {"include_usage": true},
                       "messages": [{"role": "system", "content": "You are a title generator."}, {"role": "user", "content": "hi"}]});
    let events = post(&m, "/v1/chat/completions", &title).await.events();
    assert_eq!(
        events[0].1["choices"][0]["delta"],
        json!({"role": "assistant", "content": "done"})
    );
    assert_eq!(events[1].1["choices"][0]["finish_reason"], "stop");

    let user = json!([{"role": "user", "content": "Call the demo tool read_file."}]);
    let events = post(&m, "/v1/chat/completions", &opencode(user.clone()))
        .await
        .events();
    assert_eq!(names(&events), ["-"; 4]);
    assert_eq!(events[3].1, json!("[DONE]"));
    let call = &events[0].1["choices"][0]["delta"]["tool_calls"][0];
    assert_eq!(call["index"], 0);
    assert_eq!(call["id"], "call_probe_target");
    assert_eq!(
        call["function"]["name"], "demo_read_file",
        "the server's tool, not the built-in"
    );
    let arguments: Value =
        serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, json!({"url": "demo://x"}));
    assert_eq!(events[1].1["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(events[2].1["choices"], json!([]));
    assert!(events[2].1["usage"]["prompt_tokens"].as_u64().unwrap() > 0);
    assert!(events
        .iter()
        .take(3)
        .all(|(_, e)| e["object"] == "chat.completion.chunk" && e["model"] == "m"));

    let mut done = user.as_array().unwrap().clone();
    done.push(json!({"role": "assistant", "content": "", "tool_calls": [{"id": "call_probe_target", "type": "function",
                     "function": {"name": "demo_read_file", "arguments": "{}"}}]}));
    done.push(json!({"role": "tool", "tool_call_id": "call_probe_target", "content": "the file"}));
    assert!(!m.called());
    let events = post(&m, "/chat/completions", &opencode(json!(done)))
        .await
        .events();
    assert_eq!(events[0].1["choices"][0]["delta"]["content"], "done");
    assert!(m.called());
    let replies: Vec<_> = m.requests().into_iter().map(|r| (r.api, r.reply)).collect();
    let chat = Some(Api::ChatCompletions);
    let target = ScriptReply::CallTool {
        call_id: "call_probe_target".into(),
        name: "demo_read_file".into(),
        namespace: None,
    };
    assert_eq!(
        replies,
        [
            (chat, ScriptReply::Text),
            (chat, target),
            (chat, ScriptReply::Text)
        ]
    );
}

#[tokio::test]
async fn chat_without_include_usage_sends_no_usage_chunk_and_without_stream_one_completion() {
    let m = model("scrape_as_markdown").await;
    let mut req = opencode(json!([{"role": "user", "content": "go"}]));
    req.as_object_mut().unwrap().remove("stream_options");
    let events = post(&m, "/v1/chat/completions", &req).await.events();
    assert_eq!(events.len(), 3);
    assert!(events.iter().all(|(_, e)| e.get("usage").is_none()));
    req["stream"] = json!(false);
    // a model of its own: each model calls the probe once
    let m = model("scrape_as_markdown").await;
    let body = post(&m, "/v1/chat/completions", &req).await.json();
    assert_eq!(body["object"], "chat.completion");
    let choice = &body["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    assert_eq!(
        choice["message"]["tool_calls"][0]["function"]["name"],
        "demo_scrape_as_markdown"
    );
    assert_eq!(
        choice["message"]["tool_calls"][0]["id"],
        "call_probe_target"
    );
}

/// Qwen Code's tools: its own `read_file`, its search and its bridge.
fn qwen_tools() -> Value {
    json!([
        function("read_file"),
        function("tool_search"),
        function("tool_call")
    ])
}

/// Issue 39: Qwen Code's own `read_file` is in its tools beside the server's deferred one; the
/// probe of the server's `read_file` searches for the server's and calls it through the bridge,
/// not the client's (the lab measured "never called `read_file`").
#[tokio::test]
async fn a_clients_own_tool_of_the_probes_name_does_not_shadow_the_servers_deferred_one() {
    let m = model("read_file").await;
    let tools = qwen_tools();
    let messages = vec![json!({"role": "user", "content": "Call the demo tool read_file."})];
    let req =
        json!({"model": "qwen3-coder-plus", "stream": true, "messages": messages, "tools": tools});
    let events = post(&m, "/v1/chat/completions", &req).await.events();
    let call = &events[0].1["choices"][0]["delta"]["tool_calls"][0];
    assert_eq!(call["function"]["name"], "tool_search", "{call}");
    // a client with no bridge calls the bare name (it may be the server's)
    let m = model("read_file").await;
    let req = json!({"model": "m", "stream": true, "messages": messages, "tools": [function("read_file")]});
    let events = post(&m, "/v1/chat/completions", &req).await.events();
    let call = &events[0].1["choices"][0]["delta"]["tool_calls"][0];
    assert_eq!(call["function"]["name"], "read_file", "{call}");
}

#[tokio::test]
async fn qwen_code_searches_then_calls_the_tool_through_its_bridge() {
    let m = model("scrape_as_markdown").await;
    let tools = qwen_tools();
    let mut messages =
        vec![json!({"role": "user", "content": "Call the demo tool scrape_as_markdown."})];
    let req = |messages: &Vec<Value>| json!({"model": "qwen3-coder-plus", "stream": true, "messages": messages, "tools": tools});
    let events = post(&m, "/v1/chat/completions", &req(&messages))
        .await
        .events();
    let call = &events[0].1["choices"][0]["delta"]["tool_calls"][0];
    assert_eq!(
        (call["id"].as_str(), call["function"]["name"].as_str()),
        (Some("call_probe_search"), Some("tool_search"))
    );
    let arguments: Value =
        serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(
        arguments,
        json!({"query": "select:mcp__demo__scrape_as_markdown", "max_results": 5})
    );

    messages.push(json!({"role": "assistant", "tool_calls": [call]}));
    let found = r#"<functions>
<function>{"name":"mcp__demo__scrape_as_markdown","description":"Scrape \u003cpages\u003e","parametersJsonSchema":{"type":"object"}}</function>
</functions>"#;
    messages.push(json!({"role": "tool", "tool_call_id": "call_probe_search", "content": found}));
    let events = post(&m, "/v1/chat/completions", &req(&messages))
        .await
        .events();
    let call = &events[0].1["choices"][0]["delta"]["tool_calls"][0];
    assert_eq!(
        (call["id"].as_str(), call["function"]["name"].as_str()),
        (Some("call_probe_target"), Some("tool_call"))
    );
    let arguments: Value =
        serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(
        arguments,
        json!({"name": "mcp__demo__scrape_as_markdown", "arguments": {"url": "demo://x"}})
    );

    messages.push(json!({"role": "assistant", "tool_calls": [call]}));
    messages.push(json!({"role": "tool", "tool_call_id": "call_probe_target", "content": [{"type": "text", "text": "page"}]}));
    let events = post(&m, "/v1/chat/completions", &req(&messages))
        .await
        .events();
    assert_eq!(events[0].1["choices"][0]["delta"]["content"], "done");
    assert!(m.called());
    assert_eq!(
        m.requests()[0].reply,
        ScriptReply::Discover {
            tool: "tool_search".into()
        }
    );
}

/// Codex 0.171.0's request, cut down, with `tools` and extra `input` items.
fn codex(tools: Value, items: Vec<Value>) -> Value {
    let mut input = vec![
        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Call the demo tool scrape_as_markdown."}]}),
    ];
    input.extend(items);
    json!({"model": "lab-model-x", "stream": true, "input": input, "tools": tools, "tool_choice": "auto", "store": false})
}

const RESPONSE_EVENTS: [&str; 4] = [
    "response.created",
    "response.output_item.added",
    "response.output_item.done",
    "response.completed",
];

/// The events' one output item, checked the same in `added`, `done` and `completed`.
fn item(events: &[(Option<String>, Value)]) -> Value {
    for (n, (name, data)) in events.iter().enumerate() {
        assert_eq!(data["type"], name.as_deref().unwrap());
        assert_eq!(data["sequence_number"], n);
    }
    assert_eq!(events[0].1["response"]["status"], "in_progress");
    let last = &events.last().unwrap().1["response"];
    assert_eq!(last["status"], "completed");
    assert_eq!(last["output"][0], events[1].1["item"]);
    assert_eq!(events[1].1["item"], events[events.len() - 2].1["item"]);
    events[1].1["item"].clone()
}

#[tokio::test]
async fn codex_calls_a_namespaced_tool_with_its_namespace_then_gets_done() {
    let m = model("scrape_as_markdown").await;
    let ns = json!({"type": "namespace", "name": "mcp__demo", "description": "Demo server",
                    "tools": [{"type": "function", "name": "list_docs"}, {"type": "function", "name": "scrape_as_markdown", "strict": false}]});
    let tools = json!([{"type": "function", "name": "exec_command"}, {"type": "namespace", "name": "multi_agent_v1", "tools": []}, ns, {"type": "web_search"}]);
    let got = post(&m, "/v1/responses", &codex(tools.clone(), vec![])).await;
    let events = got.events();
    assert_eq!(names(&events), RESPONSE_EVENTS);
    let item = item(&events);
    assert_eq!(item["type"], "function_call");
    assert_eq!(
        (
            item["call_id"].as_str(),
            item["name"].as_str(),
            item["namespace"].as_str()
        ),
        (
            Some("call_probe_target"),
            Some("scrape_as_markdown"),
            Some("mcp__demo")
        )
    );
    assert_eq!(
        serde_json::from_str::<Value>(item["arguments"].as_str().unwrap()).unwrap(),
        json!({"url": "demo://x"})
    );
    assert_eq!(
        m.requests()[0].reply,
        ScriptReply::CallTool {
            call_id: "call_probe_target".into(),
            name: "scrape_as_markdown".into(),
            namespace: Some("mcp__demo".into())
        }
    );

    let back = vec![
        item.clone(),
        json!({"type": "function_call_output", "call_id": "call_probe_target",
                    "output": [{"type": "input_text", "text": "Wall time: 0.07 seconds\nOutput:"}]}),
    ];
    let mut req = codex(tools, back);
    req["stream"] = json!(false);
    let body = post(&m, "/responses", &req).await.json();
    assert_eq!(body["status"], "completed");
    assert_eq!(
        body["output"][0]["content"][0],
        json!({"type": "output_text", "text": "done", "annotations": []})
    );
    assert!(m.called());
}

#[tokio::test]
async fn codex_hosted_tool_search_is_driven_then_the_found_tool_is_called() {
    let m = model("scrape_as_markdown").await;
    let tools = json!([{"type": "function", "name": "exec_command"}, {"type": "tool_search", "execution": "client", "parameters": {"type": "object"}}]);
    let events = post(&m, "/v1/responses", &codex(tools.clone(), vec![]))
        .await
        .events();
    let search = item(&events);
    assert_eq!(
        search,
        json!({"type": "tool_search_call", "id": "ts_probe", "call_id": "call_probe_search", "execution": "client",
                              "status": "completed", "arguments": {"query": "scrape_as_markdown", "limit": 5}})
    );
    let found = json!({"type": "tool_search_output", "call_id": "call_probe_search", "status": "completed", "execution": "client",
                       "tools": [{"type": "namespace", "name": "mcp__demo", "tools": [{"type": "function", "name": "scrape_as_markdown", "defer_loading": true}]}]});
    let events = post(
        &m,
        "/v1/responses",
        &codex(tools.clone(), vec![search.clone(), found.clone()]),
    )
    .await
    .events();
    let call = item(&events);
    assert_eq!(
        (call["name"].as_str(), call["namespace"].as_str()),
        (Some("scrape_as_markdown"), Some("mcp__demo"))
    );
    // the search came back empty: no second search
    let empty = json!({"type": "tool_search_output", "call_id": "call_probe_search", "tools": []});
    let events = post(&m, "/v1/responses", &codex(tools, vec![search, empty]))
        .await
        .events();
    assert_eq!(
        names(&events),
        [
            "response.created",
            "response.output_item.added",
            "response.output_text.delta",
            "response.output_item.done",
            "response.completed"
        ]
    );
    assert_eq!(events[2].1["delta"], "done");
    assert_eq!(
        m.requests()[0].reply,
        ScriptReply::Discover {
            tool: "tool_search".into()
        }
    );
    assert!(!m.called());
}

#[tokio::test]
async fn codex_code_mode_gets_an_exec_call_running_the_tool() {
    let m = model("scrape_as_markdown").await;
    let extra = json!({"type": "additional_tools", "role": "developer", "tools": [
        {"type": "namespace", "name": "functions", "tools": [{"type": "custom", "name": "exec", "format": {"type": "grammar"}}, {"type": "function", "name": "wait"}]},
        {"type": "namespace", "name": "clock", "tools": [{"type": "function", "name": "sleep"}]}]});
    let mut req = codex(json!(null), vec![extra.clone()]);
    req.as_object_mut().unwrap().remove("tools");
    let events = post(&m, "/v1/responses", &req).await.events();
    let exec = item(&events);
    assert_eq!(exec["type"], "custom_tool_call");
    assert_eq!(
        (exec["call_id"].as_str(), exec["name"].as_str()),
        (Some("call_probe_target"), Some("exec"))
    );
    let code = "const r = await tools.mcp__demo__scrape_as_markdown({\"url\":\"demo://x\"});\ntext(typeof r === 'string' ? r : JSON.stringify(r));\n";
    assert_eq!(exec["input"], code);
    let output = json!({"type": "custom_tool_call_output", "call_id": "call_probe_target", "output": "Script completed"});
    let mut req = codex(json!([]), vec![extra, exec, output]);
    req.as_object_mut().unwrap().remove("tools");
    let events = post(&m, "/v1/responses", &req).await.events();
    assert_eq!(events[2].1["delta"], "done");
    assert!(m.called());
    let api: Vec<_> = m.requests().iter().map(|r| r.api).collect();
    assert_eq!(api, [Some(Api::Responses); 2]);
}

/// Copilot CLI 1.0.102's turn request, cut down: MCP tools named `SERVER-TOOL`.
#[tokio::test]
async fn copilot_cli_gets_its_dash_named_tool_called() {
    let m = model("get_forecast").await;
    let req = json!({"model": "gpt-4.1", "stream": true, "messages": [{"role": "user", "content": "go"}],
                     "tools": [function("bash"), function("view"), function("demo-get_forecast")]});
    let events = post(&m, "/v1/chat/completions", &req).await.events();
    let call = &events[0].1["choices"][0]["delta"]["tool_calls"][0];
    assert_eq!(call["function"]["name"], "demo-get_forecast");
    assert_eq!(call["id"], "call_probe_target");
}

/// Continue CLI 1.5.47: a result over its context is compacted away, and the next requests ask
/// for a summary without it; the probe is called once, then "done".
#[tokio::test]
async fn a_client_that_drops_the_result_gets_done_not_the_call_again() {
    let m = model("scrape_as_markdown").await;
    let tools = json!([function("Read"), function("scrape_as_markdown")]);
    let first = json!({"model": "gpt-4.1", "stream": true, "tools": tools,
                       "messages": [{"role": "user", "content": "Call the demo tool scrape_as_markdown."}]});
    let events = post(&m, "/v1/chat/completions", &first).await.events();
    assert_eq!(
        events[0].1["choices"][0]["delta"]["tool_calls"][0]["id"],
        "call_probe_target"
    );
    let summary = json!({"model": "gpt-4.1", "stream": true, "tools": tools,
                         "messages": [{"role": "user", "content": "Please provide a concise summary of our conversation so far"}]});
    let events = post(&m, "/v1/chat/completions", &summary).await.events();
    assert_eq!(events[0].1["choices"][0]["delta"]["content"], "done");
    assert!(!m.called());
    let replies: Vec<_> = m.requests().into_iter().map(|r| r.reply).collect();
    assert!(
        matches!(
            &replies[..],
            [ScriptReply::CallTool { .. }, ScriptReply::Text]
        ),
        "{replies:?}"
    );
}
