//! Remote upstreams as byte streams for the line pump, so remote servers get the same exact
//! capture as local ones. A bridge task turns each JSON-RPC line rmcp writes into an HTTP POST
//! and every message the server sends back (a JSON body, or the `data:` of SSE events) into one
//! line. Streamable HTTP (2025-03-26 and later) POSTs to the URL and keeps `Mcp-Session-Id`;
//! legacy HTTP+SSE (2024-11-05) GETs an event stream, learns the POST endpoint from its first
//! `endpoint` event, and reads every response from that stream. An HTTP failure becomes a
//! JSON-RPC error for the request, so nothing waits for a reply that will not come.

use std::collections::BTreeMap;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use reqwest::{StatusCode, Url};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use super::guard::{content_type, event_stream, redirects};
use super::reauth::{self, Renewal, Signin};
use super::replies::{preview, read_json, read_sse, without_url, Ctx, Endpoint};
use super::{SessionOptions, UpstreamError};
use crate::config::Redactor;

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
    redactor: std::sync::Arc<Redactor>,
) -> Result<Bridge, UpstreamError> {
    let max_bytes = opts.max_response_bytes;
    let bad = |message: String| UpstreamError::Initialize { message };
    let url = Url::parse(url).map_err(|e| bad(format!("invalid URL: {e}")))?;
    let login = !url.username().is_empty() || url.password().is_some();
    if login
        && headers
            .keys()
            .any(|k| k.eq_ignore_ascii_case("authorization"))
    {
        // the client would send the URL's `Authorization: Basic`, and the header not at all
        return Err(bad(
            "both an Authorization header and credentials in the URL (user:password@, sent as \
             Authorization: Basic): give one of them"
                .to_string(),
        ));
    }
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
    let mut builder = crate::wire::tls::client()
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
        redactor,
    };
    let ended = Ended::default();
    let why = ended.clone();
    let signin = Signin {
        renewal: opts.signed_in.clone().map(Renewal::new),
        login: opts.login_name.clone(),
    };
    let task = tokio::spawn(async move {
        let writer = tokio::spawn(write_lines(rx, to_pump));
        match kind {
            Remote::Streamable => streamable(ctx, from_pump, why, signin).await,
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

/// How long the `server/discover` that opens a session waits for an HTTP answer before it is
/// answered with an error in the endpoint's place, so that `--protocol auto` goes on with
/// `initialize` (the official Python SDK's client waits as long, then does the same).
const OPENING_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Streamable HTTP: one POST per message. A `server/discover` sent before the endpoint answered
/// anything that gets no HTTP answer (refused, reset, a redirect not followed) ends the stream,
/// with the reason in `ended`: an endpoint that cannot be reached says nothing of the protocol
/// era it speaks, so it is not answered with a JSON-RPC error, which would make the session
/// fall back to `initialize` (the official Python SDK's client draws the same line). One that
/// is reached but says nothing within [`OPENING_WAIT`] is answered with an error: a server that
/// holds a method it does not know is a server of the handshake era.
async fn streamable(mut ctx: Ctx, from_pump: DuplexStream, ended: Ended, mut signin: Signin) {
    let mut lines = BufReader::new(from_pump).lines();
    let mut session: Option<HeaderValue> = None;
    let mut protocol: Option<HeaderValue> = None;
    // the endpoint has answered something: from then on a failed request fails alone
    let mut answered = false;
    // apart from `ctx`, whose redactor a renewed token joins
    let (client, url) = (ctx.client.clone(), ctx.url.clone());
    while let Ok(Some(line)) = lines.next_line().await {
        let Outgoing {
            id,
            discover,
            headers: modern,
        } = outgoing(&line);
        let opening = !answered && discover;
        let token = match signin.renewal.as_mut() {
            Some(r) => r.before(&mut ctx.redactor).await,
            None => None,
        };
        let post = |token: Option<&HeaderValue>| {
            let mut req = client
                .post(url.clone())
                .header(CONTENT_TYPE, "application/json")
                .header(ACCEPT, "application/json, text/event-stream")
                .body(line.clone());
            if let Some(s) = session.as_ref().filter(|_| modern.is_empty()) {
                req = req.header("mcp-session-id", s.clone());
            }
            if modern.is_empty() {
                if let Some(p) = &protocol {
                    req = req.header("mcp-protocol-version", p.clone());
                }
            }
            for (name, value) in &modern {
                req = req.header(*name, value.clone());
            }
            match token {
                Some(t) => req.header(AUTHORIZATION, t.clone()),
                None => req,
            }
        };
        let req = post(token.as_ref());
        let sent = if opening {
            match tokio::time::timeout(OPENING_WAIT, req.send()).await {
                Ok(sent) => sent.map_err(|e| without_url(&e)),
                Err(_) => {
                    let e = format!(
                        "server/discover got no HTTP answer within {} s",
                        OPENING_WAIT.as_secs()
                    );
                    fail(&ctx, id, &e).await;
                    answered = true;
                    continue;
                }
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
        // a refused token is renewed once and the request sent again with the new one
        let resp = match (resp.status(), signin.renewal.as_mut()) {
            (StatusCode::UNAUTHORIZED, Some(r)) => match r.refused(&mut ctx.redactor).await {
                Ok(again) => match post(Some(&again)).send().await {
                    Ok(resp) => resp,
                    Err(e) => {
                        fail(&ctx, id, &without_url(&e)).await;
                        continue;
                    }
                },
                Err(why) => {
                    fail(&ctx, id, &why).await;
                    continue;
                }
            },
            _ => resp,
        };
        if resp.status() == StatusCode::FORBIDDEN {
            if let Some(scope) = reauth::scope_wanted(resp.headers()) {
                fail(&ctx, id, &reauth::step_up(&scope, signin.login.as_deref())).await;
                continue;
            }
        }
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
                _ => {
                    fail(
                        &ctx,
                        id,
                        &format!("HTTP {status}: {}", preview(&ctx, &body)),
                    )
                    .await
                }
            }
            continue;
        }
        let is_sse = content_type(&resp).starts_with("text/event-stream");
        // a request's answer is a body: a 202 (or 200) with none leaves it waiting for good
        // (a handshake-era server's answer to a `server/discover` it does not know, at times)
        if id.is_some() && !is_sse && resp.content_length() == Some(0) {
            let e = format!("HTTP {status} with an empty body: no response to the request");
            fail(&ctx, id, &e).await;
            continue;
        }
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
        redactor: ctx.redactor.clone(),
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

/// What the bridge needs of a line it sends, read from it once: the request's id (none for a
/// notification or a response), whether it is `server/discover`, and the headers a 2026-07-28
/// request carries over streamable HTTP (no session: the version, the method and, for a call,
/// the name it concerns, read from the request's own `_meta`; none in the handshake era).
#[derive(Default)]
struct Outgoing {
    id: Option<serde_json::Value>,
    discover: bool,
    headers: Vec<(&'static str, HeaderValue)>,
}

fn outgoing(line: &str) -> Outgoing {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
        return Outgoing::default();
    };
    let method = v["method"].as_str();
    let id = method.and(v.get("id").cloned());
    let discover = method == Some("server/discover") && id.is_some();
    let mut headers = Vec::new();
    if let Some(version) = v["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"].as_str()
    {
        headers.extend(HeaderValue::from_str(version).map(|h| ("mcp-protocol-version", h)));
        headers.extend(
            method
                .and_then(|m| HeaderValue::from_str(m).ok())
                .map(|h| ("mcp-method", h)),
        );
        let name = match method {
            Some("tools/call" | "prompts/get") => v["params"]["name"].as_str(),
            Some("resources/read") => v["params"]["uri"].as_str(),
            _ => None,
        };
        headers.extend(name.map(|n| ("mcp-name", header_text(n))));
    }
    Outgoing {
        id,
        discover,
        headers,
    }
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

/// The `id` of a request line, if it is a request.
fn request_id(line: &str) -> Option<serde_json::Value> {
    outgoing(line).id
}

/// Answer request `id` with a JSON-RPC error carrying `message`.
async fn fail(ctx: &Ctx, id: Option<serde_json::Value>, message: &str) {
    if let Some(id) = id {
        let err = serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32000, "message": message}});
        let _ = ctx.out.send(err.to_string()).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(line: &str) -> Vec<(&'static str, String)> {
        outgoing(line)
            .headers
            .into_iter()
            .map(|(k, v)| (k, v.to_str().unwrap().to_string()))
            .collect()
    }

    const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#;

    #[test]
    fn a_2026_request_carries_its_version_method_and_name_as_headers() {
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"rows","arguments":{{}},{META}}}}}"#
        );
        assert_eq!(
            headers(&call),
            [
                ("mcp-protocol-version", "2026-07-28".into()),
                ("mcp-method", "tools/call".into()),
                ("mcp-name", "rows".into()),
            ]
        );
        assert_eq!(outgoing(&call).id, Some(serde_json::json!(7)));
        assert!(!outgoing(&call).discover);
        // a name that is not plain ASCII goes in the transport's base64 form
        let read = format!(
            r#"{{"jsonrpc":"2.0","id":8,"method":"resources/read","params":{{"uri":"file:///é ","{}}}}}"#,
            &META[1..]
        );
        assert_eq!(
            headers(&read)[2],
            ("mcp-name", "=?base64?ZmlsZTovLy/DqSA=?=".into())
        );
        let discover =
            format!(r#"{{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{{{META}}}}}"#);
        assert!(outgoing(&discover).discover);
    }

    #[test]
    fn the_handshake_era_and_responses_carry_none() {
        let legacy = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#;
        assert!(headers(legacy).is_empty());
        assert_eq!(outgoing(legacy).id, Some(serde_json::json!(1)));
        let response = r#"{"jsonrpc":"2.0","id":3,"result":{}}"#;
        assert_eq!(outgoing(response).id, None);
        assert_eq!(outgoing("not json").id, None);
    }
}
