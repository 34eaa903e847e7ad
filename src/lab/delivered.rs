//! What reached the model of one tool call: the tool-result item a client put in its next
//! request, read per wire API (Anthropic `tool_result`, Chat Completions `tool` message,
//! Responses `*_call_output`, Gemini `functionResponse`), as the texts and images it holds.

use serde_json::Value;

use super::model::Api;

/// The tool result as a client sent it to its model.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Delivered {
    /// The text parts, in order (a bare string is one part).
    pub texts: Vec<String>,
    /// Image parts.
    pub images: usize,
    /// The client marked the result an error (`is_error` on Anthropic's wire).
    pub is_error: bool,
}

impl Delivered {
    /// A delivery of one text (what most clients send).
    pub fn of_text(text: impl Into<String>) -> Delivered {
        Delivered {
            texts: vec![text.into()],
            ..Delivered::default()
        }
    }

    /// The texts as one, joined by newlines (what the model reads).
    pub fn text(&self) -> String {
        self.texts.join("\n")
    }
}

/// The result of call `call_id` (or, on Gemini's wire, of the `k`-th function named `name` when the
/// response carries no id) in a request body, if it holds one.
pub fn find(api: Api, body: &Value, call_id: &str, name: &str, k: usize) -> Option<Delivered> {
    match api {
        Api::AnthropicMessages => anthropic(body, call_id),
        Api::ChatCompletions => chat(body, call_id),
        Api::Responses => responses(body, call_id),
        Api::Gemini => gemini(body, call_id, name, k),
    }
}

fn anthropic(body: &Value, call_id: &str) -> Option<Delivered> {
    let block = items(&body["messages"])
        .flat_map(|m| items(&m["content"]))
        .find(|b| b["type"] == "tool_result" && b["tool_use_id"] == call_id)?;
    let mut d = parts(&block["content"]);
    d.is_error = block["is_error"] == true;
    Some(d)
}

fn chat(body: &Value, call_id: &str) -> Option<Delivered> {
    let msg =
        items(&body["messages"]).find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)?;
    Some(parts(&msg["content"]))
}

fn responses(body: &Value, call_id: &str) -> Option<Delivered> {
    let item = items(&body["input"]).find(|i| {
        i["call_id"] == call_id
            && i["type"]
                .as_str()
                .is_some_and(|t| t.ends_with("_call_output"))
    })?;
    Some(parts(&item["output"]))
}

fn gemini(body: &Value, call_id: &str, name: &str, k: usize) -> Option<Delivered> {
    // each content's parts, with the function responses among them
    let contents: Vec<Vec<&Value>> = items(&body["contents"])
        .map(|c| items(&c["parts"]).collect())
        .collect();
    let responses = || {
        contents.iter().flat_map(|parts| {
            parts
                .iter()
                .enumerate()
                .filter_map(move |(i, p)| p.get("functionResponse").map(|r| (parts, i, r)))
        })
    };
    // Gemini CLI 0.61.0 answers an image call with the id `TOOL__CALL`
    // (`mcp_lab_lab_result__call_probe_target`)
    let ours = |id: &Value| {
        id == call_id
            || id
                .as_str()
                .is_some_and(|i| i.strip_suffix(call_id).is_some_and(|t| t.ends_with("__")))
    };
    let (parts, at, response) = responses().find(|(_, _, r)| ours(&r["id"])).or_else(|| {
        responses()
            .filter(|(_, _, r)| {
                r["id"].is_null() && r["name"].as_str().is_some_and(|n| n.ends_with(name))
            })
            .nth(k)
    })?;
    let inner = &response["response"];
    let text = match inner.get("output").or_else(|| inner.get("content")) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => inner.to_string(),
    };
    let mut d = Delivered::of_text(text);
    // Gemini CLI sends an image as an `inlineData` part beside the function response (with a
    // text part naming it), or inside it (`functionResponse.parts`): both reach the model
    let siblings = parts[at + 1..]
        .iter()
        .take_while(|p| p.get("functionResponse").is_none());
    for part in items(&response["parts"]).chain(siblings.copied()) {
        if let Some(data) = part.get("inlineData") {
            let image = data["mimeType"]
                .as_str()
                .is_some_and(|m| m.starts_with("image/"));
            match image {
                true => d.images += 1,
                false => d.texts.push(data.to_string()),
            }
        } else if let Some(t) = part["text"].as_str() {
            d.texts.push(t.to_string());
        }
    }
    Some(d)
}

/// The elements of an array (nothing for anything else).
fn items(v: &Value) -> impl Iterator<Item = &Value> {
    v.as_array().into_iter().flatten()
}

/// A content value: a string, or a list of parts (`text` / `input_text` / `output_text` with a
/// `text`, `image` / `input_image` / `image_url` counted as images).
fn parts(content: &Value) -> Delivered {
    let mut d = Delivered::default();
    match content {
        Value::String(s) => d.texts.push(s.clone()),
        Value::Array(list) => {
            for part in list {
                match part["type"].as_str().unwrap_or("") {
                    t if t.contains("image") => d.images += 1,
                    _ => {
                        if let Some(s) = part["text"].as_str() {
                            d.texts.push(s.to_string());
                        } else if !part.is_null() {
                            d.texts.push(part.to_string());
                        }
                    }
                }
            }
        }
        Value::Null => {}
        other => d.texts.push(other.to_string()),
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_wire_api_gives_the_result_of_the_call_it_names() {
        let anthropic = json!({"messages": [
            {"role": "user", "content": "go"},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "other", "content": "no"},
                {"type": "tool_result", "tool_use_id": "c1", "is_error": true,
                 "content": [{"type": "text", "text": "Error: too big"}, {"type": "image", "source": {}}]}]}]});
        let d = find(Api::AnthropicMessages, &anthropic, "c1", "t", 0).unwrap();
        assert_eq!(
            (d.text(), d.images, d.is_error),
            ("Error: too big".into(), 1, true)
        );

        let chat = json!({"messages": [{"role": "tool", "tool_call_id": "c1", "content": "abc"}]});
        assert_eq!(
            find(Api::ChatCompletions, &chat, "c1", "t", 0)
                .unwrap()
                .text(),
            "abc"
        );
        assert!(find(Api::ChatCompletions, &chat, "c2", "t", 0).is_none());

        let responses = json!({"input": [{"type": "function_call", "call_id": "c1"},
            {"type": "function_call_output", "call_id": "c1",
             "output": [{"type": "input_text", "text": "Wall time: 0.1 seconds\nOutput:"},
                        {"type": "input_text", "text": "body"}]}]});
        let d = find(Api::Responses, &responses, "c1", "t", 0).unwrap();
        assert_eq!(d.text(), "Wall time: 0.1 seconds\nOutput:\nbody");

        let gemini = json!({"contents": [{"role": "user", "parts": [{"functionResponse":
            {"name": "mcp_demo_t", "response": {"output": "<untrusted_context>\nx\n</untrusted_context>"}}}]}]});
        let d = find(Api::Gemini, &gemini, "c1", "t", 0).unwrap();
        assert_eq!(d.text(), "<untrusted_context>\nx\n</untrusted_context>");
        assert!(find(Api::Gemini, &gemini, "c1", "other", 0).is_none());

        // an image beside the function response (Gemini CLI's inlineData part) is delivered,
        // as is one inside it; a later call's parts are not this call's
        let image = json!({"contents": [{"role": "user", "parts": [
            {"functionResponse": {"id": "c1", "name": "mcp_demo_shot", "response": {"output": ""}}},
            {"text": "[Tool 'shot' provided the following image data with mime-type: image/png]"},
            {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
            {"functionResponse": {"id": "c2", "name": "mcp_demo_other", "response": {"output": "x"},
             "parts": [{"inlineData": {"mimeType": "image/jpeg", "data": "/9j/"}}]}},
            {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}]}]});
        let d = find(Api::Gemini, &image, "c1", "shot", 0).unwrap();
        assert_eq!(d.images, 1);
        assert_eq!(
            d.text(),
            "\n[Tool 'shot' provided the following image data with mime-type: image/png]"
        );
        assert_eq!(
            find(Api::Gemini, &image, "c2", "other", 0).unwrap().images,
            2
        );
        // the id Gemini CLI 0.61.0 gives an image call's response: the tool's name, `__`, the id
        let prefixed = json!({"contents": [{"role": "user", "parts": [
            {"functionResponse": {"id": "mcp_lab_lab_result__call_probe_target", "name": "mcp_lab_lab_result",
             "response": {"output": "[Tool 'lab_result' provided the following image data with mime-type: image/png]"}}},
            {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}]}]});
        let d = find(Api::Gemini, &prefixed, "call_probe_target", "lab_result", 0).unwrap();
        assert_eq!(d.images, 1);
        assert!(find(Api::Gemini, &prefixed, "probe_target", "x", 0).is_none());
    }
}
