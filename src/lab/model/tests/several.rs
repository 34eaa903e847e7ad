//! A script of several calls (a derive's sizes in one client run): each call made once the
//! previous one's result came back, with its own id and arguments, on every wire API.

use serde_json::{json, Value};

use super::{model_of, post};
use crate::lab::model::{Script, ScriptReply};

fn tool(name: &str) -> Value {
    json!({"type": "function", "function": {"name": name, "parameters": {"type": "object"}}})
}

/// Kilo CLI's (and opencode's) request, not streamed, with `messages`.
fn chat(messages: &[Value]) -> Value {
    json!({"model": "m", "messages": messages, "tools": [tool("bash"), tool("lab_lab_result")]})
}

/// The call a chat completion makes: its id and arguments.
fn chat_call(reply: &Value) -> (String, Value) {
    let call = &reply["choices"][0]["message"]["tool_calls"][0];
    let arguments = call["function"]["arguments"].as_str().unwrap();
    (
        call["id"].as_str().unwrap().to_string(),
        serde_json::from_str(arguments).unwrap(),
    )
}

#[tokio::test]
async fn chat_completions_get_each_call_after_the_previous_result_then_done() {
    let sizes = [json!({"chars": 2}), json!({"chars": 3})];
    let m = model_of("lab_result", sizes.to_vec()).await;
    let mut messages = vec![json!({"role": "user", "content": "Call the lab tool lab_result."})];
    let mut calls = Vec::new();
    for _ in 0..3 {
        let reply = post(&m, "/v1/chat/completions", &chat(&messages))
            .await
            .json();
        let (id, arguments) = chat_call(&reply);
        assert!(!m.called(), "not done before the last result");
        messages.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function",
                             "function": {"name": "lab_lab_result", "arguments": arguments.to_string()}}]}));
        messages.push(json!({"role": "tool", "tool_call_id": id, "content": "r"}));
        calls.push((id, arguments));
    }
    assert_eq!(
        calls,
        [
            ("call_probe_target".to_string(), json!({"url": "demo://x"})),
            ("call_probe_target_2".to_string(), sizes[0].clone()),
            ("call_probe_target_3".to_string(), sizes[1].clone()),
        ]
    );
    let reply = post(&m, "/v1/chat/completions", &chat(&messages))
        .await
        .json();
    assert_eq!(reply["choices"][0]["message"]["content"], "done");
    assert!(m.called());
    let ids: Vec<String> = m
        .requests()
        .into_iter()
        .filter_map(|r| match r.reply {
            ScriptReply::CallTool { call_id, .. } => Some(call_id),
            _ => None,
        })
        .collect();
    assert_eq!(
        ids,
        [
            "call_probe_target",
            "call_probe_target_2",
            "call_probe_target_3"
        ]
    );
}

#[tokio::test]
async fn a_call_whose_result_the_client_dropped_is_not_made_again() {
    let m = model_of("lab_result", vec![json!({"chars": 2})]).await;
    let user = json!({"role": "user", "content": "go"});
    let first = post(
        &m,
        "/v1/chat/completions",
        &chat(std::slice::from_ref(&user)),
    )
    .await
    .json();
    let (id, _) = chat_call(&first);
    let answered = vec![
        user,
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function",
               "function": {"name": "lab_lab_result", "arguments": "{}"}}]}),
        json!({"role": "tool", "tool_call_id": id, "content": "r"}),
    ];
    let second = post(&m, "/v1/chat/completions", &chat(&answered))
        .await
        .json();
    assert_eq!(chat_call(&second).0, "call_probe_target_2");
    // the same request again (the second result never came back): "done", not the call again
    let again = post(&m, "/v1/chat/completions", &chat(&answered))
        .await
        .json();
    assert_eq!(again["choices"][0]["message"]["content"], "done");
    assert!(!m.called());
}

#[tokio::test]
async fn gemini_cli_without_ids_is_counted_by_its_responses() {
    let m = model_of("read_file", vec![json!({"chars": 9})]).await;
    let path = "/v1beta/models/gemini-2.5-pro:generateContent";
    let req = |contents: &[Value]| {
        json!({"contents": contents,
               "tools": [{"functionDeclarations": [{"name": "mcp_demo_read_file"}]}]})
    };
    let mut contents = vec![json!({"role": "user", "parts": [{"text": "go"}]})];
    for (id, args) in [
        ("call_probe_target", json!({"url": "demo://x"})),
        ("call_probe_target_2", json!({"chars": 9})),
    ] {
        let reply = post(&m, path, &req(&contents)).await.json();
        let call = &reply["candidates"][0]["content"]["parts"][0]["functionCall"];
        assert_eq!((call["id"].as_str(), &call["args"]), (Some(id), &args));
        contents.push(json!({"role": "model", "parts": [{"functionCall": call}]}));
        // Gemini CLI answers with the name only
        contents.push(json!({"role": "user", "parts": [{"functionResponse":
            {"name": "mcp_demo_read_file", "response": {"output": "x"}}}]}));
    }
    let reply = post(&m, path, &req(&contents)).await.json();
    assert_eq!(
        reply["candidates"][0]["content"]["parts"][0]["text"],
        "done"
    );
    assert!(m.called());
}

#[tokio::test]
async fn codex_exec_runs_each_call_with_its_own_arguments_and_item_id() {
    let m = model_of("get_forecast", vec![json!({"city": "Oslo"})]).await;
    let exec = json!({"type": "custom", "name": "exec", "format": {"type": "grammar"}});
    let req = |input: &[Value]| json!({"model": "m", "input": input, "tools": [exec]});
    let mut input = vec![json!({"type": "message", "role": "user", "content": "go"})];
    let mut seen = Vec::new();
    for _ in 0..2 {
        let reply = post(&m, "/v1/responses", &req(&input)).await.json();
        let item = reply["output"][0].clone();
        assert_eq!(item["type"], "custom_tool_call");
        seen.push((
            item["id"].clone(),
            item["call_id"].clone(),
            item["input"].clone(),
        ));
        input.push(item.clone());
        input.push(
            json!({"type": "custom_tool_call_output", "call_id": item["call_id"], "output": "r"}),
        );
    }
    assert_eq!(seen[0].0, "ctc_probe");
    assert_eq!(seen[1].0, "ctc_probe_2");
    assert_eq!(seen[1].1, "call_probe_target_2");
    assert!(seen[0]
        .2
        .as_str()
        .unwrap()
        .contains(r#"{"url":"demo://x"}"#));
    assert!(seen[1].2.as_str().unwrap().contains(r#"{"city":"Oslo"}"#));
    let reply = post(&m, "/v1/responses", &req(&input)).await.json();
    assert_eq!(reply["output"][0]["type"], "message");
    assert!(m.called());
}

#[test]
fn a_script_of_one_call_reads_as_before() {
    // `more` is left out of a script that has none
    let script = Script {
        tool: "t".into(),
        server: "s".into(),
        arguments: json!({}),
        more: Vec::new(),
    };
    let text = serde_json::to_string(&script).unwrap();
    assert!(!text.contains("more"), "{text}");
    let back: Script = serde_json::from_str(r#"{"tool":"t","server":"s","arguments":{}}"#).unwrap();
    assert_eq!(back, script);
}
