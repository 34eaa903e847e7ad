//! Gemini CLI's turns: a function call streamed, "done" after the functionResponse.

use serde_json::{json, Value};

use super::{model, names, post};
use crate::lab::model::{Api, ScriptReply};

const STREAM: &str = "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse";

/// Gemini CLI 0.61.0's request, cut down: a built-in `read_file` and the server's.
fn gemini(contents: Value) -> Value {
    json!({"contents": contents, "systemInstruction": {"parts": [{"text": "You are Gemini CLI"}]},
           "tools": [{"functionDeclarations": [{"name": "read_file"}, {"name": "mcp_demo_read_file", "parametersJsonSchema": {"type": "object"}}]}],
           "generationConfig": {"temperature": 1, "thinkingConfig": {"includeThoughts": true}}})
}

#[tokio::test]
async fn gemini_cli_gets_a_streamed_function_call_then_done() {
    let m = model("read_file").await;
    let user = json!({"role": "user", "parts": [{"text": "Call the demo tool read_file."}]});
    let events = post(&m, STREAM, &gemini(json!([user]))).await.events();
    assert_eq!(names(&events), ["-"]);
    let candidate = &events[0].1["candidates"][0];
    assert_eq!(candidate["finishReason"], "STOP");
    let call = json!({"functionCall": {"name": "mcp_demo_read_file", "args": {"url": "demo://x"}, "id": "call_probe_target"}});
    assert_eq!(
        candidate["content"],
        json!({"role": "model", "parts": [call]})
    );
    assert!(
        events[0].1["usageMetadata"]["promptTokenCount"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert!(!m.called());

    // Gemini CLI sends the response back with the name only, no id
    let call_turn = json!({"role": "model", "parts": [call]});
    let response = json!({"role": "user", "parts": [{"functionResponse": {"name": "mcp_demo_read_file", "response": {"output": "x"}}}]});
    let events = post(&m, STREAM, &gemini(json!([user, call_turn, response])))
        .await
        .events();
    assert_eq!(
        events[0].1["candidates"][0]["content"]["parts"],
        json!([{"text": "done"}])
    );
    assert!(m.called());
    let r = &m.requests()[0];
    assert_eq!((r.api, r.path.as_str()), (Some(Api::Gemini), STREAM));
    assert_eq!(
        r.reply,
        ScriptReply::CallTool {
            call_id: "call_probe_target".into(),
            name: "mcp_demo_read_file".into(),
            namespace: None
        }
    );
}

#[tokio::test]
async fn generate_content_json_mode_array_stream_and_count_tokens() {
    let m = model("read_file").await;
    let user = json!([{"role": "user", "parts": [{"text": "hi"}]}]);
    let got = post(
        &m,
        "/v1beta/models/gemini-2.5-pro:generateContent",
        &gemini(user.clone()),
    )
    .await;
    assert_eq!(got.content_type, "application/json");
    assert_eq!(
        got.json()["candidates"][0]["content"]["parts"][0]["functionCall"]["name"],
        "mcp_demo_read_file"
    );
    // the next-speaker check asks for JSON: it gets JSON text
    let check = json!({"contents": user, "generationConfig": {"responseMimeType": "application/json", "responseJsonSchema": {}}});
    let got = post(
        &m,
        "/v1beta/models/gemini-2.5-flash:generateContent",
        &check,
    )
    .await;
    let text = got.json()["candidates"][0]["content"]["parts"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap()["next_speaker"],
        "user"
    );
    // streaming without alt=sse: a JSON array of chunks
    let got = post(
        &m,
        "/v1beta/models/gemini-2.5-pro:streamGenerateContent",
        &gemini(user.clone()),
    )
    .await;
    assert_eq!(got.json().as_array().map(Vec::len), Some(1));
    let got = post(
        &m,
        "/v1beta/models/gemini-2.5-pro:countTokens",
        &json!({"contents": user}),
    )
    .await;
    assert!(got.json()["totalTokens"].as_u64().is_some());
    assert_eq!(m.requests()[3].reply, ScriptReply::CountTokens);
}
