//! The proxy over streamable HTTP (`proxy --listen ADDR`): rmcp's streamable-HTTP server with
//! Host and Origin checked against loopback (DNS rebinding), an optional bearer token, idle
//! sessions closed after `--session-idle-secs` and at most `--max-sessions` open at once.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Full, Limited};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use super::server::Proxy;

/// Where and how to listen.
#[derive(Debug, Clone)]
pub struct ListenOptions {
    pub addr: SocketAddr,
    /// Requests must carry `Authorization: Bearer <token>`.
    pub bearer: Option<String>,
    /// Host names accepted besides the loopback ones (for a non-loopback `addr`).
    pub extra_hosts: Vec<String>,
    /// A session without a message for this long is closed (its id then gets 404).
    pub session_idle: std::time::Duration,
    /// Sessions open at most; a client opening one more gets 503 with a JSON-RPC error.
    pub max_sessions: usize,
}

/// The largest request body read (rmcp is given the same limit, its default).
const MAX_BODY: usize = 4 * 1024 * 1024;

/// Defaults of [`ListenOptions::session_idle`] and [`ListenOptions::max_sessions`].
pub const DEFAULT_SESSION_IDLE_SECS: u64 = 5 * 60;
pub const DEFAULT_MAX_SESSIONS: usize = 1000;

/// The config: loopback hosts (plus `extra`) and loopback browser origins only.
fn config(extra: &[String]) -> StreamableHttpServerConfig {
    let mut c = StreamableHttpServerConfig::default();
    c.max_request_body_bytes = MAX_BODY;
    c.allowed_hosts = ["localhost", "127.0.0.1", "::1", "[::1]"]
        .iter()
        .map(|h| h.to_string())
        .chain(extra.iter().cloned())
        .collect();
    c.allowed_origins = vec![
        "http://localhost:*".into(),
        "http://127.0.0.1:*".into(),
        "http://[::1]:*".into(),
    ];
    c
}

type Reply = Response<BoxBody<Bytes, std::convert::Infallible>>;

/// 503 for a client that would open one session more than `max`, with a JSON-RPC error body.
fn too_many_sessions(max: usize) -> Reply {
    let message = format!(
        "mcp-budget proxy: {max} sessions are open, the most it keeps (--max-sessions); close one (DELETE) or try again when an idle one expires"
    );
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32000, "message": message},
    });
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *r.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    let headers = r.headers_mut();
    headers.insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    headers.insert(
        hyper::header::RETRY_AFTER,
        hyper::header::HeaderValue::from_static("60"),
    );
    r
}

/// Whether `req` may ask for a new session: a POST without `Mcp-Session-Id`. Its body then
/// tells (see [`is_initialize`]).
fn may_open_session<B>(req: &Request<B>) -> bool {
    req.method() == hyper::Method::POST && !req.headers().contains_key("mcp-session-id")
}

/// Whether a session-less POST's body opens a session: an `initialize` (rmcp gives one a
/// session whatever its headers say), or a body that cannot be read as one message (rmcp
/// refuses it; it is counted to be safe). Any other message is a request of the 2026-07-28
/// era, served on its own: neither counted against `--max-sessions` nor made to wait for
/// another.
fn is_initialize(body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Message {
        method: Option<String>,
    }
    serde_json::from_slice::<Message>(body)
        .map_or(true, |m| m.method.as_deref() == Some("initialize"))
}

fn plain(status: StatusCode, text: &'static str) -> Reply {
    let mut r = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *r.status_mut() = status;
    if status == StatusCode::UNAUTHORIZED {
        r.headers_mut().insert(
            hyper::header::WWW_AUTHENTICATE,
            hyper::header::HeaderValue::from_static("Bearer"),
        );
    }
    r
}

/// Whether two byte strings are equal, in time that does not depend on where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The live sessions and their cap.
struct SessionGate {
    sessions: Arc<LocalSessionManager>,
    max: usize,
    opening: tokio::sync::Mutex<()>,
}

/// Bind `opts.addr`; returns the bound address and the serving future.
pub async fn listen(
    proxy: Proxy,
    opts: ListenOptions,
) -> std::io::Result<(SocketAddr, impl std::future::Future<Output = ()>)> {
    let listener = tokio::net::TcpListener::bind(opts.addr).await?;
    let bound = listener.local_addr()?;
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(opts.session_idle);
    let sessions = Arc::new(sessions);
    let service = Arc::new(StreamableHttpService::new(
        move || Ok(proxy.for_new_client()),
        sessions.clone(),
        config(&opts.extra_hosts),
    ));
    let gate = Arc::new(SessionGate {
        sessions,
        max: opts.max_sessions,
        opening: tokio::sync::Mutex::new(()),
    });
    let bearer = opts.bearer.map(|t| format!("Bearer {t}"));
    let serve = async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let (service, bearer, gate) = (service.clone(), bearer.clone(), gate.clone());
            tokio::spawn(async move {
                let handler =
                    hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                        let (service, bearer, gate) =
                            (service.clone(), bearer.clone(), gate.clone());
                        async move {
                            if let Some(want) = &bearer {
                                let given = req
                                    .headers()
                                    .get(hyper::header::AUTHORIZATION)
                                    .map(|v| v.as_bytes())
                                    .unwrap_or_default();
                                if !same(given, want.as_bytes()) {
                                    return Ok::<_, std::convert::Infallible>(plain(
                                        StatusCode::UNAUTHORIZED,
                                        "missing or wrong bearer token\n",
                                    ));
                                }
                            }
                            if !may_open_session(&req) {
                                return Ok(service.handle(req).await);
                            }
                            let (parts, body) = req.into_parts();
                            let Ok(body) = Limited::new(body, MAX_BODY).collect().await else {
                                return Ok(plain(
                                    StatusCode::PAYLOAD_TOO_LARGE,
                                    "request body too large or cut off\n",
                                ));
                            };
                            let body = body.to_bytes();
                            let opens = is_initialize(&body);
                            let req = Request::from_parts(parts, Full::new(body));
                            if !opens {
                                return Ok(service.handle(req).await);
                            }
                            // one session opened at a time, so the count cannot overshoot
                            let _opening = gate.opening.lock().await;
                            if gate.sessions.sessions.read().await.len() >= gate.max {
                                return Ok(too_many_sessions(gate.max));
                            }
                            Ok(service.handle(req).await)
                        }
                    });
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), handler)
                    .await;
            });
        }
    };
    Ok((bound, serve))
}
