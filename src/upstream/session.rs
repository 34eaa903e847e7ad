//! One MCP client session to a server (audited, or behind the proxy): rmcp for the protocol, the
//! capture for the bytes. Every request is matched to its response by id, so any number of tasks
//! can share a session; only `initialize` pairs by method (it is the first request).

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, PaginatedRequestParams, ProgressToken,
    RequestMetaObject,
};
use rmcp::service::{
    PeerRequestOptions, RequestHandle, RoleClient, RunningService, ServiceError, ServiceRole,
};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::ServiceExt;
use tokio::task::JoinHandle;

use super::client::{Downstream, UpstreamClient};
use super::http::{self, Remote};
use super::process::ChildGuard;
use super::{pump, Capture, RawResponse, UpstreamError};
use crate::config::{redactor_for, Probe, Redactor, ServerSpec, TransportSpec};

/// Settings of a session.
#[derive(Clone)]
pub struct SessionOptions {
    /// Largest single message kept; larger ones are dropped and reported.
    pub max_response_bytes: usize,
    /// Keep the whole transcript (for recording).
    pub record: bool,
    /// Certificate authorities trusted for https upstreams besides the built-in web roots.
    pub extra_roots: Vec<reqwest::Certificate>,
    /// Answers the server's sampling, elicitation and roots requests (the proxy's client);
    /// without one the session offers the server none of them.
    pub downstream: Option<Arc<dyn Downstream>>,
    /// Variables removed from the environment a stdio server inherits (the proxy's
    /// `--bearer-token-env`); the server's own configured `env` still applies.
    pub env_remove: Vec<String>,
}

impl std::fmt::Debug for SessionOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionOptions")
            .field("max_response_bytes", &self.max_response_bytes)
            .field("record", &self.record)
            .field("extra_roots", &self.extra_roots.len())
            .field("downstream", &self.downstream.is_some())
            .field("env_remove", &self.env_remove)
            .finish()
    }
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            max_response_bytes: 256 * 1024 * 1024,
            record: false,
            extra_roots: Vec::new(),
            downstream: None,
            env_remove: Vec::new(),
        }
    }
}

/// The answer to a request sent with `handle`, or `None` when `cancelled` completes first: the
/// peer is then sent `notifications/cancelled` with `reason`. (Both directions use it: the
/// proxy's upstream session, and the proxy passing its upstream's requests to its client.)
pub async fn answer_or_cancel<R: ServiceRole>(
    mut handle: RequestHandle<R>,
    cancelled: impl std::future::Future<Output = ()>,
    reason: &str,
) -> Option<Result<R::PeerResp, ServiceError>> {
    let rx = std::mem::replace(&mut handle.rx, tokio::sync::oneshot::channel().1);
    tokio::select! {
        r = rx => Some(r.unwrap_or(Err(ServiceError::TransportClosed))),
        () = cancelled => {
            let _ = handle.cancel(Some(reason.into())).await;
            None
        }
    }
}

/// A list request (`tools/list`, `prompts/list`, `resources/list`) for one page.
fn list_request(method: &str, cursor: Option<String>) -> Result<ClientRequest, UpstreamError> {
    let params = PaginatedRequestParams::default().with_cursor(cursor);
    Ok(match method {
        "tools/list" => {
            ClientRequest::ListToolsRequest(rmcp::model::ListToolsRequest::with_param(params))
        }
        "prompts/list" => {
            ClientRequest::ListPromptsRequest(rmcp::model::ListPromptsRequest::with_param(params))
        }
        "resources/list" => ClientRequest::ListResourcesRequest(
            rmcp::model::ListResourcesRequest::with_param(params),
        ),
        other => {
            return Err(UpstreamError::Request {
                method: other.into(),
                message: "not a list method".into(),
            })
        }
    })
}

/// What a call made for a client carries besides the tool and its arguments.
pub struct Forwarded<C, S> {
    /// The client's `_meta`; its progress token is replaced by this session's own.
    pub meta: Option<RequestMetaObject>,
    /// Completes when the client cancels the call.
    pub cancelled: C,
    /// Told the progress token the server sees, before any progress can arrive.
    pub on_sent: S,
}

impl Default for Forwarded<std::future::Pending<()>, fn(&ProgressToken)> {
    fn default() -> Self {
        Forwarded {
            meta: None,
            cancelled: std::future::pending(),
            on_sent: |_| {},
        }
    }
}

/// What a tool call gave back.
#[derive(Debug)]
pub struct CallOutcome {
    pub response: RawResponse,
    pub latency_ms: f64,
}

/// A live session.
pub struct Session {
    service: RunningService<RoleClient, UpstreamClient>,
    capture: Capture,
    child: Option<ChildGuard>,
    tasks: Vec<JoinHandle<()>>,
    init: RawResponse,
    pub init_latency_ms: f64,
    id: u64,
    /// Every error and warning of this session passes through it.
    redactor: Arc<Redactor>,
}

/// Sessions started by this process so far (each gets the next number as its id).
static SESSIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Session {
    /// Start or reach the server and run the `initialize` handshake. Errors never carry a
    /// secret of the spec or of the inherited environment (a server's stderr can print them).
    pub async fn connect(
        spec: &ServerSpec,
        opts: &SessionOptions,
    ) -> Result<Session, UpstreamError> {
        let redactor = Arc::new(redactor_for(spec));
        Session::start(spec, opts, redactor.clone())
            .await
            .map_err(|e| e.redacted(&redactor))
    }

    async fn start(
        spec: &ServerSpec,
        opts: &SessionOptions,
        redactor: Arc<Redactor>,
    ) -> Result<Session, UpstreamError> {
        let capture = Capture::new(opts.record);
        let started = Instant::now();
        let (mut child, mut tasks, pumps) = match &spec.transport {
            TransportSpec::Builtin { name } => {
                let (client_end, server_end) = tokio::io::duplex(256 * 1024);
                let (server_read, server_write) = tokio::io::split(server_end);
                let server = crate::demo::DemoServer::new(name);
                let task = tokio::spawn(async move {
                    if let Ok(running) = server.serve((server_read, server_write)).await {
                        let _ = running.waiting().await;
                    }
                });
                let (out, inp) = tokio::io::split(client_end);
                (
                    None,
                    vec![task],
                    pump::start(out, inp, capture.clone(), opts.max_response_bytes),
                )
            }
            TransportSpec::Capture { dir, server } => {
                let mut replay =
                    crate::capture::Replay::load(dir, server.as_deref()).map_err(|e| {
                        UpstreamError::Initialize {
                            message: e.to_string(),
                        }
                    })?;
                let (client_end, server_end) = tokio::io::duplex(256 * 1024);
                let (server_read, server_write) = tokio::io::split(server_end);
                let task = tokio::spawn(async move {
                    let _ = crate::capture::serve(&mut replay, server_read, server_write).await;
                });
                let (out, inp) = tokio::io::split(client_end);
                (
                    None,
                    vec![task],
                    pump::start(out, inp, capture.clone(), opts.max_response_bytes),
                )
            }
            TransportSpec::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let (child, out, inp) =
                    ChildGuard::spawn(command, args, env, &opts.env_remove, cwd.as_ref()).await?;
                (
                    Some(child),
                    Vec::new(),
                    pump::start(out, inp, capture.clone(), opts.max_response_bytes),
                )
            }
            TransportSpec::Http { url, headers } | TransportSpec::Sse { url, headers } => {
                let kind = match &spec.transport {
                    TransportSpec::Sse { .. } => Remote::LegacySse,
                    _ => Remote::Streamable,
                };
                let bridge = http::start(kind, url, headers, opts)?;
                let pumps = pump::start(
                    bridge.server_out,
                    bridge.server_in,
                    capture.clone(),
                    opts.max_response_bytes,
                );
                (None, vec![bridge.task], pumps)
            }
        };
        tasks.extend(pumps.tasks);
        let served = UpstreamClient::new(opts.downstream.clone())
            // the pump already bounds message size (--max-response-bytes); rmcp's own 16 MiB
            // default would drop a larger line silently and leave its request waiting
            .serve(
                AsyncRwTransport::<RoleClient, _, _>::new(pumps.rmcp_read, pumps.rmcp_write)
                    .with_max_line_length(usize::MAX),
            )
            .await;
        let service = match served {
            Ok(s) => s,
            Err(e) => {
                let message = explain(&e.to_string(), child.as_mut(), &capture).await;
                if let Some(c) = child {
                    c.shutdown().await;
                }
                return Err(UpstreamError::Initialize { message });
            }
        };
        let init =
            capture
                .take_response("initialize")
                .ok_or_else(|| UpstreamError::Initialize {
                    message: "no initialize response was captured".into(),
                })?;
        Ok(Session {
            service,
            capture,
            child,
            tasks,
            init,
            init_latency_ms: ms(started),
            id: SESSIONS.fetch_add(1, std::sync::atomic::Ordering::SeqCst),
            redactor,
        })
    }

    /// This session's number, unique in the process (a restarted server is a new session).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The `initialize` response as the server sent it.
    pub fn initialize_response(&self) -> &RawResponse {
        &self.init
    }

    /// Lines the server printed that were not JSON-RPC, and similar oddities.
    pub fn warnings(&self) -> Vec<String> {
        let warnings = self.capture.warnings();
        warnings.iter().map(|w| self.redactor.redact(w)).collect()
    }

    pub fn capture(&self) -> &Capture {
        &self.capture
    }

    /// One page of `tools/list`, `prompts/list` or `resources/list`, as the server sent it.
    /// (Sent as a plain request: rmcp's typed list methods may answer from a cache, or with a
    /// stale page when the server fails, and an audit must see what the server says now.)
    pub async fn list_page(
        &mut self,
        method: &str,
        cursor: Option<String>,
    ) -> Result<(RawResponse, f64), UpstreamError> {
        let request = list_request(method, cursor)?;
        let answer = self
            .request_raw(method, request, |_| {}, std::future::pending())
            .await;
        self.explained(answer).await
    }

    /// A failed request's message, with what a dead server printed on stderr.
    async fn explained<T>(&mut self, answer: Result<T, UpstreamError>) -> Result<T, UpstreamError> {
        match answer {
            Err(UpstreamError::Request { method, message }) => {
                let message = explain(&message, self.child.as_mut(), &self.capture).await;
                Err(UpstreamError::Request { method, message }.redacted(&self.redactor))
            }
            other => other,
        }
    }

    /// Call a tool on behalf of a client (the proxy; `audit` passes `Forwarded::default()`),
    /// from any number of tasks at once: the response is matched to its request by id, and a
    /// result with `isError: true` is a success here. The request carries the client's
    /// `_meta` (with a progress token of this session in place of the client's, told to
    /// `forwarded.on_sent` as soon as the request is out), and is given up when
    /// `forwarded.cancelled` completes: the server is then sent `notifications/cancelled`.
    pub async fn call_forwarded<C, S>(
        &self,
        name: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        forwarded: Forwarded<C, S>,
    ) -> Result<CallOutcome, UpstreamError>
    where
        C: std::future::Future<Output = ()>,
        S: FnOnce(&ProgressToken),
    {
        let mut params = CallToolRequestParams::new(name.to_string()).with_arguments(arguments);
        if let Some(meta) = forwarded.meta {
            params.meta = Some(meta);
        }
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let (response, latency_ms) = self
            .request_raw(
                "tools/call",
                request,
                forwarded.on_sent,
                forwarded.cancelled,
            )
            .await?;
        Ok(CallOutcome {
            response,
            latency_ms,
        })
    }

    /// Any request (`method` and its `params` as JSON) from any number of tasks at once (the
    /// proxy forwards its client's requests this way): the exact result, matched by request id,
    /// so nothing is left behind in the capture and no answer comes from rmcp's list cache.
    /// Given up when `cancelled` completes (the server is then sent `notifications/cancelled`).
    pub async fn request_json(
        &self,
        method: &str,
        params: serde_json::Value,
        cancelled: impl std::future::Future<Output = ()>,
    ) -> Result<RawResponse, UpstreamError> {
        let mut message = serde_json::json!({"method": method});
        if !params.is_null() {
            message["params"] = params;
        }
        let request: ClientRequest =
            serde_json::from_value(message).map_err(|e| UpstreamError::Request {
                method: method.into(),
                message: format!("not a request mcp-budget can forward: {e}"),
            })?;
        let (response, _) = self.request_raw(method, request, |_| {}, cancelled).await?;
        Ok(response)
    }

    /// One page of `tools/list` from any number of tasks at once (the proxy): the exact result
    /// as the server sent it, matched by request id.
    pub async fn tools_page(&self, cursor: Option<String>) -> Result<RawResponse, UpstreamError> {
        let request = list_request("tools/list", cursor)?;
        let (response, _) = self
            .request_raw("tools/list", request, |_| {}, std::future::pending())
            .await?;
        Ok(response)
    }

    /// Send `request`, wait for its response (or `cancelled`, which sends the server
    /// `notifications/cancelled`), and take the exact response from the capture by its id.
    /// An error's message has the secrets redacted (a server can echo its URL or its env).
    async fn request_raw(
        &self,
        method: &str,
        request: ClientRequest,
        on_sent: impl FnOnce(&ProgressToken),
        cancelled: impl std::future::Future<Output = ()>,
    ) -> Result<(RawResponse, f64), UpstreamError> {
        self.request_unredacted(method, request, on_sent, cancelled)
            .await
            .map_err(|e| e.redacted(&self.redactor))
    }

    async fn request_unredacted(
        &self,
        method: &str,
        request: ClientRequest,
        on_sent: impl FnOnce(&ProgressToken),
        cancelled: impl std::future::Future<Output = ()>,
    ) -> Result<(RawResponse, f64), UpstreamError> {
        let failed = |message: String| UpstreamError::Request {
            method: method.into(),
            message,
        };
        let started = Instant::now();
        let handle = self
            .service
            .peer()
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| failed(e.to_string()))?;
        let id = serde_json::to_string(&handle.id).map_err(|e| failed(e.to_string()))?;
        on_sent(&handle.progress_token);
        let Some(answer) = answer_or_cancel(handle, cancelled, "cancelled by the client").await
        else {
            self.capture.forget(&id);
            return Err(failed("cancelled by the client".into()));
        };
        let latency_ms = ms(started);
        // rmcp fails a request on its own (a closed transport) without a response: stop waiting
        let raw = self.capture.take_response_by_id(&id);
        if raw.is_none() {
            self.capture.forget(&id);
        }
        match (answer, raw) {
            (_, Some(raw)) if raw.error.is_none() => Ok((raw, latency_ms)),
            // the pump answered in the server's place: the server's own message was dropped
            (Err(ServiceError::McpError(e)), _) if pump::answered_for_the_server(&e.data) => {
                Err(failed(e.message.to_string()))
            }
            (Err(ServiceError::McpError(e)), _) => Err(UpstreamError::Rpc {
                method: method.into(),
                code: e.code.0 as i64,
                message: e.message.to_string(),
            }),
            (_, Some(raw)) => {
                let error = raw.error.unwrap_or_default();
                Err(UpstreamError::Rpc {
                    method: method.into(),
                    code: error["code"].as_i64().unwrap_or(0),
                    message: error["message"].as_str().unwrap_or("error").to_string(),
                })
            }
            (Err(e), None) => Err(failed(e.to_string())),
            (Ok(_), None) => Err(failed("the response was not captured".into())),
        }
    }

    /// The rmcp peer, for notifications to the server (requests go by id through
    /// [`Self::request_json`] and the other raw methods).
    pub fn peer(&self) -> &rmcp::service::Peer<RoleClient> {
        self.service.peer()
    }

    /// Whether the server process (or connection) has ended.
    pub fn is_closed(&self) -> bool {
        self.service.is_closed()
    }

    /// Call a tool. A result with `isError: true` is a success here; the caller reads it.
    pub async fn call_tool(&mut self, probe: &Probe) -> Result<CallOutcome, UpstreamError> {
        let answer = self
            .call_forwarded(&probe.tool, probe.arguments.clone(), Forwarded::default())
            .await;
        self.explained(answer).await
    }

    /// End the session and stop the server.
    pub async fn close(self) {
        let _ = tokio::time::timeout(Duration::from_secs(2), self.service.cancel()).await;
        if let Some(child) = self.child {
            child.shutdown().await;
        }
        for t in self.tasks {
            t.abort();
        }
    }
}

/// Turn a transport error into a message that says why: the exit status and stderr tail of a
/// server that died, or what it printed instead of JSON-RPC.
async fn explain(error: &str, child: Option<&mut ChildGuard>, capture: &Capture) -> String {
    let mut parts = vec![error.to_string()];
    if let Some(child) = child {
        // give a dying process a moment to be reaped so its status is known
        for _ in 0..10 {
            if child.exit_status().is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        if let Some(status) = child.exit_status() {
            parts.push(format!("server exited with {status}"));
            // what it printed last may still be in the pipe
            child.stderr_drained(Duration::from_millis(500)).await;
        }
        let tail = child.stderr_tail(300);
        if !tail.is_empty() {
            parts.push(format!("stderr: {tail}"));
        }
    }
    if let Some(w) = capture.warnings().last() {
        parts.push(w.clone());
    }
    parts.join("; ")
}

fn ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}
