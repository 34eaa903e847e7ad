//! Remote upstreams as byte streams for the line pump, so remote servers get the same exact
//! capture as local ones. A bridge task turns each JSON-RPC line rmcp writes into an HTTP POST
//! and every message the server sends back (a JSON body, or the `data:` of SSE events) into one
//! line. Streamable HTTP (2025-03-26 and later) POSTs to the URL and keeps `Mcp-Session-Id`;
//! legacy HTTP+SSE (2024-11-05) GETs an event stream, learns the POST endpoint from its first
//! `endpoint` event, and reads every response from that stream. An HTTP failure becomes a
//! JSON-RPC error for the request, so nothing waits for a reply that will not come.

use std::collections::BTreeMap;

use futures::StreamExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use reqwest::Url;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use super::guard::{announced_endpoint, content_type, event_stream, is_json_rpc, redirects};
use super::{SessionOptions, UpstreamError};
use crate::config::redact_url;

/// The certificates of a PEM file (one CA or a bundle), to trust for https upstreams.
pub fn load_ca_file(path: &std::path::Path) -> Result<Vec<reqwest::Certificate>, String> {
    let pem = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let certs = reqwest::Certificate::from_pem_bundle(&pem)
        .map_err(|e| format!("{}: not a PEM certificate file: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!("{}: no PEM certificate in it", path.display()));
    }
    Ok(certs)
}

/// The byte streams the pump reads and writes, and the bridge task behind them.
pub struct Bridge {
    pub server_out: DuplexStream,
    pub server_in: DuplexStream,
    pub task: JoinHandle<()>,
}

/// Which remote protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Remote {
    Streamable,
    LegacySse,
}

/// Start a bridge to `url`.
pub fn start(
    kind: Remote,
    url: &str,
    headers: &BTreeMap<String, String>,
    opts: &SessionOptions,
) -> Result<Bridge, UpstreamError> {
    let max_bytes = opts.max_response_bytes;
    let bad = |message: String| UpstreamError::Initialize { message };
    let url = Url::parse(url).map_err(|e| bad(format!("invalid URL: {e}")))?;
    let mut map = HeaderMap::new();
    for (k, v) in headers {
        let name = HeaderName::from_bytes(k.as_bytes())
            .map_err(|e| bad(format!("invalid header name `{k}`: {e}")))?;
        let value =
            HeaderValue::from_str(v).map_err(|_| bad(format!("invalid value for header `{k}`")))?;
        map.insert(name, value);
    }
    // credentials go to the configured origin only: a redirect elsewhere is refused
    let credentials = !headers.is_empty() || !url.username().is_empty();
    let mut builder = reqwest::Client::builder()
        .default_headers(map)
        .redirect(redirects(&url, credentials));
    for root in &opts.extra_roots {
        builder = builder.add_root_certificate(root.clone());
    }
    let client = builder
        .build()
        .map_err(|e| bad(format!("HTTP client: {e}")))?;
    let (pump_reads, to_pump) = tokio::io::duplex(256 * 1024);
    let (pump_writes, from_pump) = tokio::io::duplex(256 * 1024);
    let (tx, rx) = mpsc::channel::<String>(64);
    let ctx = Ctx {
        client,
        url,
        max_bytes,
        out: tx,
    };
    let task = tokio::spawn(async move {
        let writer = tokio::spawn(write_lines(rx, to_pump));
        match kind {
            Remote::Streamable => streamable(ctx, from_pump).await,
            Remote::LegacySse => legacy(ctx, from_pump).await,
        }
        let _ = writer.await;
    });
    Ok(Bridge {
        server_out: pump_reads,
        server_in: pump_writes,
        task,
    })
}

struct Ctx {
    client: reqwest::Client,
    url: Url,
    max_bytes: usize,
    /// Lines for the pump, as if the server had printed them.
    out: mpsc::Sender<String>,
}

async fn write_lines(mut rx: mpsc::Receiver<String>, mut to_pump: DuplexStream) {
    while let Some(line) = rx.recv().await {
        if to_pump.write_all(line.as_bytes()).await.is_err()
            || to_pump.write_all(b"\n").await.is_err()
        {
            break;
        }
    }
    let _ = to_pump.shutdown().await;
}

/// Streamable HTTP: one POST per message.
async fn streamable(ctx: Ctx, from_pump: DuplexStream) {
    let mut lines = BufReader::new(from_pump).lines();
    let mut session: Option<HeaderValue> = None;
    let mut protocol: Option<HeaderValue> = None;
    while let Ok(Some(line)) = lines.next_line().await {
        let id = request_id(&line);
        let mut req = ctx
            .client
            .post(ctx.url.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .body(line.clone());
        if let Some(s) = &session {
            req = req.header("mcp-session-id", s.clone());
        }
        if let Some(p) = &protocol {
            req = req.header("mcp-protocol-version", p.clone());
        }
        let resp = match req.send().await {
            Ok(r) => r,
            Err(e) => {
                fail(&ctx, id, &without_url(&e)).await;
                continue;
            }
        };
        if let Some(s) = resp.headers().get("mcp-session-id") {
            session = Some(s.clone());
        }
        let status = resp.status();
        if !status.is_success() {
            let body = resp.text().await.unwrap_or_default();
            fail(&ctx, id, &format!("HTTP {status}: {}", preview(&body))).await;
            continue;
        }
        let is_sse = content_type(&resp).starts_with("text/event-stream");
        let got = if is_sse {
            read_sse(&ctx, resp, None).await
        } else {
            read_json(&ctx, resp, status).await
        };
        match got {
            Ok(Some(init)) if protocol.is_none() => protocol = HeaderValue::from_str(&init).ok(),
            Ok(_) => {}
            Err(e) => fail(&ctx, id, &e).await,
        }
    }
}

/// The endpoint a legacy server announced, or why it cannot be used.
type Endpoint = Option<Result<Url, String>>;

/// Legacy HTTP+SSE: GET the stream, POST each message to the endpoint it announces.
async fn legacy(ctx: Ctx, from_pump: DuplexStream) {
    let (endpoint_tx, mut endpoint_rx) = watch::channel::<Endpoint>(None);
    let get = ctx
        .client
        .get(ctx.url.clone())
        .header(ACCEPT, "text/event-stream")
        .send()
        .await;
    let stream = get
        .map_err(|e| without_url(&e))
        .and_then(ok_status)
        .and_then(|r| event_stream(&ctx.url, r));
    let resp = match stream {
        Ok(r) => r,
        Err(e) => {
            // answer every request with the reason until the pump gives up
            let mut lines = BufReader::new(from_pump).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                fail(&ctx, request_id(&line), &format!("SSE stream: {e}")).await;
            }
            return;
        }
    };
    let reader_ctx = Ctx {
        client: ctx.client.clone(),
        url: ctx.url.clone(),
        max_bytes: ctx.max_bytes,
        out: ctx.out.clone(),
    };
    let reader = tokio::spawn(async move {
        let _ = read_sse(&reader_ctx, resp, Some(endpoint_tx)).await;
    });
    let mut lines = BufReader::new(from_pump).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let id = request_id(&line);
        if endpoint_rx.borrow().is_none() && endpoint_rx.changed().await.is_err() {
            fail(
                &ctx,
                id,
                "the SSE stream closed before announcing an endpoint",
            )
            .await;
            continue;
        }
        let announced = endpoint_rx.borrow().clone().expect("endpoint announced");
        let endpoint = match announced {
            Ok(url) => url,
            Err(e) => {
                fail(&ctx, id, &e).await;
                continue;
            }
        };
        let sent = ctx
            .client
            .post(endpoint)
            .header(CONTENT_TYPE, "application/json")
            .body(line)
            .send()
            .await;
        match sent.map_err(|e| without_url(&e)).and_then(ok_status) {
            Ok(_) => {}
            Err(e) => fail(&ctx, id, &format!("POST to the SSE endpoint: {e}")).await,
        }
    }
    reader.abort();
}

fn ok_status(r: reqwest::Response) -> Result<reqwest::Response, String> {
    if r.status().is_success() {
        Ok(r)
    } else {
        Err(format!("HTTP {}", r.status()))
    }
}

/// A JSON body: one message or a batch. Returns the protocol version of an initialize result.
/// A body that is not JSON-RPC (an HTML page answered with 200) is an error at once.
async fn read_json(
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
            preview(trimmed)
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
async fn read_sse(
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

/// The `id` of a request line, if it is a request.
fn request_id(line: &str) -> Option<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    v.get("method")?;
    v.get("id").cloned()
}

/// Answer request `id` with a JSON-RPC error carrying `message`.
async fn fail(ctx: &Ctx, id: Option<serde_json::Value>, message: &str) {
    if let Some(id) = id {
        let err = serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32000, "message": message}});
        let _ = ctx.out.send(err.to_string()).await;
    }
}

/// reqwest's error as its causes (the top line names the URL, which may carry a token).
fn without_url(e: &reqwest::Error) -> String {
    let mut causes: Vec<String> = Vec::new();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let text = s.to_string();
        if !causes.iter().any(|c| c.contains(&text)) {
            causes.push(text);
        }
        source = s.source();
    }
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

fn preview(body: &str) -> String {
    crate::text::preview(&body.split_whitespace().collect::<Vec<_>>().join(" "), 200)
}
