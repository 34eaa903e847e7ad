//! Gemini (`POST /v1beta/models/MODEL:generateContent`, `:streamGenerateContent?alt=sse`,
//! `:countTokens`; Gemini CLI): the decision from `contents` and `tools[].functionDeclarations`,
//! and the reply as one `GenerateContentResponse`, a one-chunk SSE stream (`alt=sse`) or a JSON
//! array of chunks (streaming without `alt=sse`). A side request that asks for JSON output
//! (Gemini CLI's next-speaker check and model router) gets a JSON text answering both.

use hyper::StatusCode;
use serde_json::{json, Value};

use super::script::{self, list_at, str_at, Offer, Turn, DONE};
use super::sse::{self, Answer, Event};
use super::Script;

/// How a Gemini reply is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// `:generateContent`: one JSON object.
    Whole,
    /// `:streamGenerateContent?alt=sse`: server-sent events.
    Sse,
    /// `:streamGenerateContent` without `alt=sse`: a JSON array of chunks.
    Array,
}

/// How many of the probe's calls `contents` answer: a `functionResponse` with a call's id (or
/// `TOOL__ID`), or (Gemini CLI sends no id back) one named as the tool after a `functionCall`
/// with a call's id.
fn answered(script: &Script, contents: &Value) -> usize {
    let objects = script::objects(contents);
    let part = |key: &'static str| objects.iter().filter_map(move |m| m.get(key));
    let ours = |id: &str| {
        script::is_target(id)
            || id
                .rsplit_once("__")
                .is_some_and(|(_, tail)| script::is_target(tail))
    };
    let called = part("functionCall").any(|c| ours(str_at(c, "id")));
    part("functionResponse")
        .filter(|r| {
            ours(str_at(r, "id"))
                || (called
                    && script
                        .rank(Offer {
                            name: str_at(r, "name"),
                            namespace: None,
                        })
                        .is_some())
        })
        .count()
}

pub(super) fn decide(script: &Script, req: &Value) -> Turn {
    let k = answered(script, req.get("contents").unwrap_or(&Value::Null));
    if k >= script.calls() {
        return Turn::Done { result_seen: true };
    }
    let declarations = list_at(req, "tools").iter().flat_map(|t| {
        let camel = list_at(t, "functionDeclarations");
        camel.iter().chain(list_at(t, "function_declarations"))
    });
    let offers = declarations.map(|d| Offer {
        name: str_at(d, "name"),
        namespace: None,
    });
    match script.best(offers) {
        Some(offer) => script.call(offer, k),
        None => Turn::Done { result_seen: false },
    }
}

/// Whether the request asks for JSON output.
fn wants_json(req: &Value) -> bool {
    let config = req
        .get("generationConfig")
        .or_else(|| req.get("generation_config"))
        .unwrap_or(&Value::Null);
    str_at(config, "responseMimeType") == "application/json"
        || config.get("responseJsonSchema").is_some()
        || config.get("responseSchema").is_some()
}

pub(super) fn answer(turn: &Turn, req: &Value, input_tokens: u64, mode: Mode) -> Answer {
    let part = match turn {
        Turn::Call(c) => json!({"functionCall": {"name": c.name, "args": c.arguments, "id": c.id}}),
        Turn::Done { .. } if wants_json(req) => {
            json!({"text": json!({"next_speaker": "user", "reasoning": DONE, "model_choice": "pro"}).to_string()})
        }
        Turn::Done { .. } => json!({"text": DONE}),
    };
    let chunk = json!({
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": input_tokens, "candidatesTokenCount": 5,
                          "totalTokenCount": input_tokens + 5},
        "modelVersion": "lab",
    });
    match mode {
        Mode::Whole => sse::json(StatusCode::OK, &chunk),
        Mode::Array => sse::json(StatusCode::OK, &json!([chunk])),
        Mode::Sse => sse::stream(vec![Event::data(chunk.to_string())]),
    }
}

/// `:countTokens`: `{"totalTokens": N}`.
pub(super) fn count(input_tokens: u64) -> Answer {
    sse::json(StatusCode::OK, &json!({"totalTokens": input_tokens}))
}
