//! What a remote server sends back, as lines for the pump: a JSON body (one message or a
//! batch) or the `message` events of an SSE stream, each held to `--max-response-bytes`, and
//! reqwest's errors told without the URL (which may carry a token).

use futures::StreamExt;
use reqwest::Url;
use tokio::sync::{mpsc, watch};

use super::guard::{announced_endpoint, content_type, is_json_rpc};
use crate::config::{redact_url, Redactor};

/// The endpoint a legacy server announced, or why it cannot be used.
pub(super) type Endpoint = Option<Result<Url, String>>;

/// A bridge's connection to its server.
pub(super) struct Ctx {
    pub client: reqwest::Client,
    pub url: Url,
    pub max_bytes: usize,
    /// Lines for the pump, as if the server had printed them.
    pub out: mpsc::Sender<String>,
    /// The server's secrets: a body quoted in a message is redacted before it is cut.
    pub redactor: std::sync::Arc<Redactor>,
}

/// A JSON body: one message or a batch. Returns the protocol version of an initialize result.
/// A body that is not JSON-RPC (an HTML page answered with 200) is an error at once.
pub(super) async fn read_json(
    ctx: &Ctx,
    resp: reqwest::Response,
    status: reqwest::StatusCode,
) -> Result<Option<String>, String> {
    let ct = content_type(&resp);
    let body = read_capped(resp, ctx.max_bytes).await?;
    let text = String::from_utf8_lossy(&body);
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Ok(None);
    }
    let not_mcp = || {
        format!(
            "{} did not answer as an MCP endpoint (HTTP {status}, content-type `{ct}`: {})",
            redact_url(ctx.url.as_str()),
            preview(ctx, trimmed)
        )
    };
    if !is_json_rpc(trimmed) {
        return Err(not_mcp());
    }
    let mut version = None;
    if trimmed.starts_with('[') {
        let batch: Vec<&serde_json::value::RawValue> =
            serde_json::from_str(trimmed).map_err(|_| not_mcp())?;
        for m in batch {
            version = version.or(protocol_of(m.get()));
            let _ = ctx.out.send(m.get().to_string()).await;
        }
    } else {
        version = protocol_of(trimmed);
        let _ = ctx.out.send(trimmed.to_string()).await;
    }
    Ok(version)
}

async fn read_capped(resp: reqwest::Response, max: usize) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    let mut stream = resp.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk =
            chunk.map_err(|e| format!("reading the response failed: {}", without_url(&e)))?;
        if body.len() + chunk.len() > max {
            return Err(format!(
                "the response is over {max} bytes (--max-response-bytes)"
            ));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// An SSE stream: every `message` event's data is one line for the pump; an `endpoint` event
/// (legacy servers) is resolved against the URL and announced.
pub(super) async fn read_sse(
    ctx: &Ctx,
    resp: reqwest::Response,
    endpoint: Option<watch::Sender<Endpoint>>,
) -> Result<Option<String>, String> {
    let mut stream = resp.bytes_stream();
    let mut buf: Vec<u8> = Vec::new();
    let (mut event, mut data) = (String::new(), String::new());
    let mut version = None;
    while let Some(chunk) = stream.next().await {
        let chunk =
            chunk.map_err(|e| format!("reading the event stream failed: {}", without_url(&e)))?;
        buf.extend_from_slice(&chunk);
        while let Some(nl) = buf.iter().position(|b| *b == b'\n') {
            let raw: Vec<u8> = buf.drain(..=nl).collect();
            let line = String::from_utf8(raw)
                .map_err(|_| "the event stream is not valid UTF-8".to_string())?;
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                let done = dispatch(ctx, &event, &data, &endpoint, &mut version).await;
                event.clear();
                data.clear();
                if done && endpoint.is_none() {
                    return Ok(version);
                }
                continue;
            }
            if let Some(v) = line.strip_prefix("data:") {
                if !data.is_empty() {
                    data.push('\n');
                }
                data.push_str(v.strip_prefix(' ').unwrap_or(v));
                if data.len() > ctx.max_bytes {
                    return Err(format!(
                        "an event is over {} bytes (--max-response-bytes)",
                        ctx.max_bytes
                    ));
                }
            } else if let Some(v) = line.strip_prefix("event:") {
                event = v.trim().to_string();
            }
        }
    }
    Ok(version)
}

/// Handle one complete event; true when it was a response (the end of a POST's stream).
async fn dispatch(
    ctx: &Ctx,
    event: &str,
    data: &str,
    endpoint: &Option<watch::Sender<Endpoint>>,
    version: &mut Option<String>,
) -> bool {
    if event == "endpoint" {
        if let Some(tx) = endpoint {
            let _ = tx.send(Some(announced_endpoint(&ctx.url, data.trim())));
        }
        return false;
    }
    if data.is_empty() || !(event.is_empty() || event == "message") {
        return false;
    }
    *version = version.take().or(protocol_of(data));
    let is_response = serde_json::from_str::<serde_json::Value>(data).is_ok_and(|v| {
        v.get("id").is_some() && (v.get("result").is_some() || v.get("error").is_some())
    });
    let _ = ctx.out.send(data.to_string()).await;
    is_response
}

/// The `protocolVersion` of an initialize result line.
fn protocol_of(line: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    v.get("result")?
        .get("protocolVersion")?
        .as_str()
        .map(String::from)
}

/// reqwest's error as its causes (the top line names the URL, which may carry a token).
pub(super) fn without_url(e: &reqwest::Error) -> String {
    let causes = crate::ground::text::error_causes(e);
    let what = if e.is_connect() {
        "could not connect"
    } else if e.is_timeout() {
        "timed out"
    } else {
        "the request failed"
    };
    let hint = if causes.iter().any(|c| c.contains("certificate")) {
        " (for a private CA, pass --ca-cert FILE or set SSL_CERT_FILE)"
    } else {
        ""
    };
    if causes.is_empty() {
        what.to_string()
    } else {
        format!("{what}: {}{hint}", causes.join(": "))
    }
}

/// The first 200 characters of a body, on one line, redacted whole before the cut.
pub(super) fn preview(ctx: &Ctx, body: &str) -> String {
    ctx.redactor.preview_words(body, 200)
}
