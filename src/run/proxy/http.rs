//! The proxy over streamable HTTP (`proxy --listen ADDR`): rmcp's streamable-HTTP server with
//! Host and Origin checked against loopback (DNS rebinding), an optional bearer token, idle
//! sessions closed after `--session-idle-secs` and at most `--max-sessions` open at once;
//! against slow and many clients, the limits of [`super::guard`]. HTTP/1.1 only.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Full};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use super::guard::{BodyPool, ConnectionLimits, ACCEPT_PAUSE, MAX_BODY};
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
    /// Connections, header and body time limits.
    pub limits: ConnectionLimits,
}

/// The most a connection buffers of what it reads or writes (a request's headers must fit).
const MAX_CONNECTION_BUFFER: usize = 64 * 1024;

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
    if status == StatusCode::SERVICE_UNAVAILABLE {
        r.headers_mut().insert(
            hyper::header::RETRY_AFTER,
            hyper::header::HeaderValue::from_static("1"),
        );
    }
    r
}

/// The live sessions and their cap.
struct SessionGate {
    sessions: Arc<LocalSessionManager>,
    max: usize,
    opening: tokio::sync::Mutex<()>,
}

type Service = StreamableHttpService<Proxy, LocalSessionManager>;

/// What every connection shares.
struct Listener {
    service: Service,
    /// `/metrics` is answered from here, behind the same token.
    telemetry: Arc<crate::output::telemetry::Telemetry>,
    /// The whole `Authorization` header wanted, `Bearer TOKEN`.
    bearer: Option<String>,
    gate: SessionGate,
    bodies: BodyPool,
    limits: ConnectionLimits,
}

/// Bind `opts.addr`; returns the bound address and the serving future.
pub async fn listen(
    proxy: Proxy,
    opts: ListenOptions,
) -> std::io::Result<(SocketAddr, impl std::future::Future<Output = ()>)> {
    let listener = tokio::net::TcpListener::bind(opts.addr).await?;
    let bound = listener.local_addr()?;
    let shared = proxy.shared.clone();
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(opts.session_idle);
    let sessions = Arc::new(sessions);
    let service = StreamableHttpService::new(
        move || Ok(proxy.for_new_client()),
        sessions.clone(),
        config(&opts.extra_hosts),
    );
    let state = Arc::new(Listener {
        service,
        telemetry: shared.opts.telemetry.clone(),
        bearer: super::metrics::bearer_header(opts.bearer),
        gate: SessionGate {
            sessions,
            max: opts.max_sessions,
            opening: tokio::sync::Mutex::new(()),
        },
        bodies: BodyPool::default(),
        limits: opts.limits,
    });
    let open = Arc::new(tokio::sync::Semaphore::new(opts.limits.max_connections));
    let serve = async move {
        loop {
            let Ok(slot) = open.clone().acquire_owned().await else {
                return;
            };
            let stream = match listener.accept().await {
                Ok((stream, _)) => {
                    // an answer goes out at once: with Nagle's algorithm a response written in
                    // two parts waits for the client's delayed ACK (40 ms on Linux loopback)
                    let _ = stream.set_nodelay(true);
                    stream
                }
                Err(e) => {
                    // at the open-file limit accept fails at once, again and again: pause
                    shared.warn(format!(
                        "--listen: cannot accept a connection ({e}); pausing {} ms between tries",
                        ACCEPT_PAUSE.as_millis()
                    ));
                    tokio::time::sleep(ACCEPT_PAUSE).await;
                    continue;
                }
            };
            tokio::spawn(serve_connection(state.clone(), stream, slot));
        }
    };
    Ok((bound, serve))
}

/// Serve one connection (HTTP/1.1) while it holds its slot.
async fn serve_connection(
    state: Arc<Listener>,
    stream: tokio::net::TcpStream,
    _slot: tokio::sync::OwnedSemaphorePermit,
) {
    let header_timeout = state.limits.header_timeout;
    let handler = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
        let state = state.clone();
        async move { Ok::<_, std::convert::Infallible>(answer(&state, req).await) }
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .max_buf_size(MAX_CONNECTION_BUFFER)
        .serve_connection(TokioIo::new(stream), handler)
        .await;
}

/// One request: the bearer token checked, its body read within the limits, and a request that
/// would open a session one over `--max-sessions` refused; the rest is rmcp's.
async fn answer(state: &Listener, req: Request<hyper::body::Incoming>) -> Reply {
    if !super::metrics::authorized(&req, state.bearer.as_deref()) {
        return plain(StatusCode::UNAUTHORIZED, "missing or wrong bearer token\n");
    }
    if super::metrics::is_metrics(&req) {
        return super::metrics::metrics_reply(&state.telemetry);
    }
    let opening = may_open_session(&req);
    let (parts, body) = req.into_parts();
    // the body's share of the pool is held until the request is answered
    let (body, _share) = match state.bodies.read(body, state.limits.body_timeout).await {
        Ok(read) => read,
        Err(refused) => return plain(refused.status(), refused.text()),
    };
    let opens = opening && is_initialize(&body);
    let req = Request::from_parts(parts, Full::new(body));
    if !opens {
        return state.service.handle(req).await;
    }
    // one session opened at a time, so the count cannot overshoot
    let _opening = state.gate.opening.lock().await;
    if state.gate.sessions.sessions.read().await.len() >= state.gate.max {
        return too_many_sessions(state.gate.max);
    }
    state.service.handle(req).await
}
