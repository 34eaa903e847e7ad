//! What `replay` reads: a JSON-RPC response line (as `--record` and the shared corpus store
//! them), a bare tool result, or any text file (taken as one text block).

use std::path::Path;

use serde_json::{json, Value};

/// A tool result read from a file, with the names it is spilled under.
#[derive(Debug, Clone)]
pub struct Payload {
    pub server: String,
    pub tool: String,
    pub result: Value,
    /// The result's JSON text exactly as the file holds it (a JSON-RPC line's `result` member
    /// or a bare result), so a spilled whole result keeps its bytes; none for a plain text file.
    pub raw: Option<String>,
}

/// A file that could not be read as a payload.
#[derive(Debug, thiserror::Error)]
#[error("failed to read {path}: {message}")]
pub struct PayloadError {
    pub path: String,
    pub message: String,
}

/// Read `path`; `tool` overrides the tool name, which otherwise comes from a
/// `<server>__<tool>.jsonl` file name (the corpus's convention) or the file stem.
pub fn load_payload(path: &Path, tool: Option<&str>) -> Result<Payload, PayloadError> {
    let err = |message: String| PayloadError {
        path: path.display().to_string(),
        message,
    };
    let bytes = std::fs::read(path).map_err(|e| err(e.to_string()))?;
    let text = String::from_utf8(bytes).map_err(|e| err(format!("not UTF-8 text ({e})")))?;
    let result = parse_result(&text).map_err(err)?;
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("payload");
    let (server, file_tool) = match stem.split_once("__") {
        Some((s, t)) => (s.to_string(), t.to_string()),
        None => ("replay".to_string(), stem.to_string()),
    };
    Ok(Payload {
        server,
        tool: tool.map(String::from).unwrap_or(file_tool),
        raw: raw_result(&text),
        result,
    })
}

/// The exact text of the tool result in a JSON-RPC line or a bare result file.
fn raw_result(text: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Line<'a> {
        #[serde(borrow)]
        result: Option<&'a serde_json::value::RawValue>,
        content: Option<serde::de::IgnoredAny>,
    }
    let trimmed = text.trim();
    let line: Line = serde_json::from_str(trimmed).ok()?;
    match (line.result, line.content) {
        (Some(r), _) => Some(r.get().to_string()),
        (None, Some(_)) => Some(trimmed.to_string()),
        (None, None) => None,
    }
}

/// The tool result in a file's text.
pub fn parse_result(text: &str) -> Result<Value, String> {
    let trimmed = text.trim();
    if trimmed.starts_with('{') {
        if let Ok(mut v) = serde_json::from_str::<Value>(trimmed) {
            if let Some(e) = v.get("error").filter(|_| v.get("result").is_none()) {
                return Err(format!("the response is a JSON-RPC error: {e}"));
            }
            // taken out of the line, not copied (a 26 MB result is held once)
            if let Some(r) = v.get_mut("result").map(Value::take) {
                return match r.get("content") {
                    Some(_) => Ok(r),
                    None => Err("the JSON-RPC result is not a tool result (no `content`)".into()),
                };
            }
            if v.get("content").is_some_and(Value::is_array) {
                return Ok(v);
            }
        }
    }
    Ok(json!({"content": [{"type": "text", "text": text}]}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_exact_text_of_the_result() {
        let rpc = "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\": {\"content\" : [], \"x\":1.0e0}}\n";
        assert_eq!(
            raw_result(rpc).as_deref(),
            Some("{\"content\" : [], \"x\":1.0e0}")
        );
        let bare = " {\"content\":[],\"b\":\"\\u00e9\"}\n";
        assert_eq!(raw_result(bare).as_deref(), Some(bare.trim()));
        assert_eq!(raw_result("# Title"), None);
    }

    #[test]
    fn reads_rpc_lines_bare_results_and_text() {
        let rpc = r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hi"}]}}"#;
        assert_eq!(parse_result(rpc).unwrap()["content"][0]["text"], "hi");
        let bare = r#"{"content":[{"type":"text","text":"yo"}],"isError":true}"#;
        assert_eq!(parse_result(bare).unwrap()["isError"], true);
        assert_eq!(
            parse_result("# Title\n").unwrap()["content"][0]["text"],
            "# Title\n"
        );
        assert_eq!(
            parse_result("{\"a\": 1}").unwrap()["content"][0]["text"],
            "{\"a\": 1}"
        );
        assert!(
            parse_result(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}}"#).is_err()
        );
    }
}
