//! Remote upstreams as byte streams for the line pump, so remote servers get the same exact
//! capture as local ones. A bridge task turns each JSON-RPC line rmcp writes into an HTTP POST
//! and every message the server sends back (a JSON body, or the `data:` of SSE events) into one
//! line. Streamable HTTP (2025-03-26 and later) POSTs to the URL and keeps `Mcp-Session-Id`;
//! legacy HTTP+SSE (2024-11-05) GETs an event stream, learns the POST endpoint from its first
//! `endpoint` event, and reads every response from that stream. An HTTP failure becomes a
//! JSON-RPC error for the request, so nothing waits for a reply that will not come.

use std::collections::BTreeMap;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use reqwest::Url;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use super::guard::{content_type, event_stream, redirects};
use super::replies::{preview, read_json, read_sse, without_url, Ctx, Endpoint};
use super::{SessionOptions, UpstreamError};

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
    pub ended: Ended,
}

/// Why the bridge ended the stream, once it has: set before the stream closes.
pub type Ended = std::sync::Arc<std::sync::OnceLock<String>>;

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
    let ended = Ended::default();
    let why = ended.clone();
    let task = tokio::spawn(async move {
        let writer = tokio::spawn(write_lines(rx, to_pump));
        match kind {
            Remote::Streamable => streamable(ctx, from_pump, why).await,
            Remote::LegacySse => legacy(ctx, from_pump).await,
        }
        let _ = writer.await;
    });
    Ok(Bridge {
        server_out: pump_reads,
        server_in: pump_writes,
        task,
        ended,
    })
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

/// How long the `server/discover` that opens a session waits for an HTTP answer.
const OPENING_WAIT: std::time::Duration = std::time::Duration::from_secs(8);

/// Streamable HTTP: one POST per message. A `server/discover` sent before the endpoint answered
/// anything that gets no HTTP answer (refused, reset, a redirect not followed, nothing within
/// [`OPENING_WAIT`]) ends the stream, with the reason in `ended`: an
/// endpoint that cannot be reached says nothing of the protocol era it speaks, so it is not
/// answered with a JSON-RPC error, which would make the session fall back to `initialize`
/// (the official Python SDK's client draws the same line).
async fn streamable(ctx: Ctx, from_pump: DuplexStream, ended: Ended) {
    let mut lines = BufReader::new(from_pump).lines();
    let mut session: Option<HeaderValue> = None;
    let mut protocol: Option<HeaderValue> = None;
    // the endpoint has answered something: from then on a failed request fails alone
    let mut answered = false;
    while let Ok(Some(line)) = lines.next_line().await {
        let opening = !answered && is_discover(&line);
        let id = request_id(&line);
        let mut req = ctx
            .client
            .post(ctx.url.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .body(line.clone());
        let modern = modern_headers(&line);
        if let Some(s) = session.as_ref().filter(|_| modern.is_empty()) {
            req = req.header("mcp-session-id", s.clone());
        }
        if modern.is_empty() {
            if let Some(p) = &protocol {
                req = req.header("mcp-protocol-version", p.clone());
            }
        }
        for (name, value) in modern {
            req = req.header(name, value);
        }
        let sent = if opening {
            // rmcp gives up on an unanswered discover after 10 s and sends `initialize`, which
            // would queue behind it here: the opening discover gets its own, shorter wait
            match tokio::time::timeout(OPENING_WAIT, req.send()).await {
                Ok(sent) => sent.map_err(|e| without_url(&e)),
                Err(_) => Err(format!(
                    "server/discover got no HTTP answer within {} s",
                    OPENING_WAIT.as_secs()
                )),
            }
        } else {
            req.send().await.map_err(|e| without_url(&e))
        };
        let resp = match sent {
            Ok(r) => r,
            Err(e) if opening => {
                let _ = ended.set(e);
                return;
            }
            Err(e) => {
                fail(&ctx, id, &e).await;
                continue;
            }
        };
        answered = true;
        if let Some(s) = resp.headers().get("mcp-session-id") {
            session = Some(s.clone());
        }
        let status = resp.status();
        if !status.is_success() {
            let body = resp.text().await.unwrap_or_default();
            // the 2026-07-28 transport refuses a request (an unknown version, a header that
            // contradicts the body) with an HTTP error whose body is the JSON-RPC error: that
            // error is the answer
            match (rpc_error(&body), &id) {
                (Some(error), Some(id)) => {
                    let line = serde_json::json!({"jsonrpc": "2.0", "id": id, "error": error});
                    let _ = ctx.out.send(line.to_string()).await;
                }
                _ => fail(&ctx, id, &format!("HTTP {status}: {}", preview(&body))).await,
            }
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

/// The headers a 2026-07-28 request carries over streamable HTTP (no session: the version, the
/// method and, for a call, the name it concerns), read from the request's own `_meta`; none
/// for a message of the handshake era.
fn modern_headers(line: &str) -> Vec<(&'static str, HeaderValue)> {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
        return Vec::new();
    };
    let Some(version) = v["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"].as_str()
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Ok(h) = HeaderValue::from_str(version) {
        out.push(("mcp-protocol-version", h));
    }
    if let Some(h) = v["method"]
        .as_str()
        .and_then(|m| HeaderValue::from_str(m).ok())
    {
        out.push(("mcp-method", h));
    }
    let name = match v["method"].as_str() {
        Some("tools/call" | "prompts/get") => v["params"]["name"].as_str(),
        Some("resources/read") => v["params"]["uri"].as_str(),
        _ => None,
    };
    if let Some(name) = name {
        out.push(("mcp-name", header_text(name)));
    }
    out
}

/// A value as a header: as it is when it is printable ASCII without edge spaces, else in the
/// `=?base64?...?=` form the 2026-07-28 transport defines.
fn header_text(value: &str) -> HeaderValue {
    let plain = value.bytes().all(|b| (0x20..0x7f).contains(&b))
        && value == value.trim()
        && !(value.starts_with("=?base64?") && value.ends_with("?="));
    let text = if plain {
        value.to_string()
    } else {
        use base64::Engine as _;
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(value)
        )
    };
    HeaderValue::from_str(&text).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// The `error` object of a JSON-RPC error response, when `body` is one (with a numeric code).
fn rpc_error(body: &str) -> Option<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    let error = v.get("error")?;
    error.get("code")?.as_i64()?;
    Some(error.clone())
}

/// Whether a line is a `server/discover` request.
fn is_discover(line: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(line)
        .is_ok_and(|v| v["method"] == "server/discover" && v.get("id").is_some())
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
