//! One MCP client session to a server (audited, or behind the proxy): rmcp for the protocol, the
//! wire record for the bytes. Every request is matched to its response by id, so any number of tasks
//! can share a session; only the handshake (`initialize`, or `server/discover` in the 2026-07-28
//! era) pairs by method (it is the first request).

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::ProtocolVersion;
use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest, ProgressToken};
use rmcp::service::{
    ClientServiceExt, PeerRequestOptions, RoleClient, RunningService, ServiceError,
};
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::task::JoinHandle;

use super::client::UpstreamClient;
use super::handshake::{self, Chosen, Failed};
use super::process::ChildGuard;
use super::request::list_request;
use super::{
    answer_or_cancel, dropped, pump, CallOutcome, Forwarded, RawResponse, ServerIo, SessionOptions,
    UpstreamError, Wire,
};
use crate::config::{Probe, Redactor};

/// A live session.
pub struct Session {
    service: RunningService<RoleClient, UpstreamClient>,
    wire: Wire,
    child: Option<ChildGuard>,
    tasks: Vec<JoinHandle<()>>,
    init: RawResponse,
    /// The handshake that opened the session: `initialize` or `server/discover`.
    handshake: &'static str,
    /// Set when the server ended its stream on `server/discover` and was started again.
    discover_ended: Option<String>,
    pub init_latency_ms: f64,
    id: u64,
    /// Every error and warning of this session passes through it.
    redactor: Arc<Redactor>,
}

/// Sessions started by this process so far (each gets the next number as its id).
static SESSIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Session {
    /// Open a session over `io`, the stream to a server (see [`crate::wire::connect::connect`],
    /// which opens it), in the era `opts.protocol` names, recording into `wire`. Errors and
    /// warnings never carry a secret `redactor` knows (the spec's and the inherited
    /// environment's: a server's stderr can print them), and what they quote of the server was
    /// redacted before it was cut.
    pub async fn connect_io(
        io: ServerIo,
        opts: &SessionOptions,
        redactor: Arc<Redactor>,
        wire: Wire,
    ) -> Result<Session, UpstreamError> {
        Session::start(io, opts, redactor.clone(), wire)
            .await
            .map_err(|e| e.redacted(&redactor))
    }

    async fn start(
        io: ServerIo,
        opts: &SessionOptions,
        redactor: Arc<Redactor>,
        wire: Wire,
    ) -> Result<Session, UpstreamError> {
        let ServerIo {
            server_out,
            server_in,
            mut child,
            mut tasks,
            started,
            ended,
        } = io;
        let mut pumps = pump::start(
            server_out,
            server_in,
            wire.clone(),
            opts.max_response_bytes,
            redactor.clone(),
        );
        tasks.extend(std::mem::take(&mut pumps.tasks));
        let client = UpstreamClient::new(opts.downstream.clone());
        let local = ended.is_none();
        let chosen = match handshake::choose(opts, &mut pumps, &client, local, &redactor).await {
            Ok(chosen) => chosen,
            Err(failed) => {
                let why = ended.as_ref().and_then(|why| why.get().cloned());
                let (reason, ended_on_discover) = match failed {
                    Failed::Ended => (
                        why.unwrap_or_else(|| {
                            "the server ended its stream after `server/discover`, unanswered".into()
                        }),
                        local,
                    ),
                    Failed::Said(reason) => (reason, false),
                };
                let message = explain(&reason, child.as_mut(), &wire, &redactor).await;
                if let Some(c) = child {
                    c.shutdown().await;
                }
                return Err(if ended_on_discover {
                    UpstreamError::EndedOnDiscover { message }
                } else {
                    UpstreamError::Initialize { message }
                });
            }
        };
        let Chosen {
            lifecycle,
            first_answer,
            fallback_why,
        } = chosen;
        let rmcp_read = handshake::rmcp_input(first_answer.as_deref(), &mut pumps);
        let served = client
            // the pump already bounds message size (--max-response-bytes); rmcp's own 16 MiB
            // default would drop a larger line silently and leave its request waiting
            .serve_with_lifecycle(
                AsyncRwTransport::<RoleClient, _, _>::new(rmcp_read, pumps.rmcp_write)
                    .with_max_line_length(usize::MAX),
                lifecycle.clone(),
            )
            .await;
        let service = match served {
            Ok(s) => s,
            Err(e) => {
                let ended = ended.as_ref().and_then(|why| why.get().cloned());
                let reason =
                    handshake::failure(&e, ended, fallback_why.as_deref(), &lifecycle, opts);
                let message = explain(&reason, child.as_mut(), &wire, &redactor).await;
                if let Some(c) = child {
                    c.shutdown().await;
                }
                let refused = matches!(&e, rmcp::service::ClientInitializeError::JsonRpcError(d)
                    if d.code == rmcp::model::ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
                return Err(if refused {
                    UpstreamError::HandshakeRefused { message }
                } else {
                    UpstreamError::Initialize { message }
                });
            }
        };
        let (handshake, init) = handshake::captured(&lifecycle, first_answer.as_deref(), &wire)?;
        Ok(Session {
            service,
            wire,
            child,
            tasks,
            init,
            handshake,
            discover_ended: None,
            init_latency_ms: ms(started),
            id: SESSIONS.fetch_add(1, std::sync::atomic::Ordering::SeqCst),
            redactor,
        })
    }

    /// Why this session is in the handshake era although `--protocol auto` asked
    /// `server/discover` first: the server ended its stream on it, and was started again.
    pub fn discover_ended(&self) -> Option<&str> {
        self.discover_ended.as_deref()
    }

    /// Say that the server ended its stream on `server/discover` (see [`Self::discover_ended`]).
    pub fn set_discover_ended(&mut self, why: String) {
        self.discover_ended = Some(why);
    }

    /// This session's number, unique in the process (a restarted server is a new session).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The protocol version both sides speak: the one the server's `initialize` result names,
    /// or the one chosen from its `server/discover` result.
    pub fn protocol_version(&self) -> Option<String> {
        self.service
            .peer()
            .peer_info()
            .map(|i| i.protocol_version.to_string())
    }

    /// Whether the session speaks the 2026-07-28 era or a later one (whichever handshake
    /// opened it).
    pub fn is_modern(&self) -> bool {
        self.protocol_version()
            .is_some_and(|v| v.as_str() >= super::MODERN_VERSION)
    }

    /// The handshake that opened the session: `initialize` or `server/discover`.
    pub fn handshake(&self) -> &'static str {
        self.handshake
    }

    /// The handshake's response (`initialize`, or `server/discover` in the 2026-07-28 era) as
    /// the server sent it.
    pub fn initialize_response(&self) -> &RawResponse {
        &self.init
    }

    /// Lines the server printed that were not JSON-RPC, and similar oddities.
    pub fn warnings(&self) -> Vec<String> {
        let warnings = self.wire.warnings();
        warnings.iter().map(|w| self.redactor.redact(w)).collect()
    }

    /// The secrets of this session's server: what quotes the server is redacted by it, whole,
    /// before it is cut ([`Redactor::preview`]).
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// The record of this session's traffic (its transcript, its notifications).
    pub fn wire(&self) -> &Wire {
        &self.wire
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
                let message =
                    explain(&message, self.child.as_mut(), &self.wire, &self.redactor).await;
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
    /// so nothing is left behind in the wire record and no answer comes from rmcp's list cache.
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
    /// `notifications/cancelled`), and take the exact response from the wire record by its id.
    /// An error's message has the secrets redacted (a server can echo its URL or its env).
    async fn request_raw(
        &self,
        method: &str,
        request: ClientRequest,
        on_sent: impl FnOnce(&ProgressToken),
        cancelled: impl std::future::Future<Output = ()>,
    ) -> Result<(RawResponse, f64), UpstreamError> {
        let options = PeerRequestOptions::no_options();
        self.request_unredacted(method, request, options, on_sent, cancelled)
            .await
            .map_err(|e| e.redacted(&self.redactor))
    }

    /// `server/discover` asked again, naming protocol `version` in its `_meta` (a version the
    /// server may not speak: a server of the 2026-07-28 era answers one it does not know with
    /// -32022 and the versions it does).
    pub async fn discover_at(&self, version: &str) -> Result<RawResponse, UpstreamError> {
        let version: ProtocolVersion =
            serde_json::from_value(version.into()).map_err(|e| UpstreamError::Request {
                method: "server/discover".into(),
                message: e.to_string(),
            })?;
        let mut meta = rmcp::model::RequestMetaObject::default();
        meta.set_protocol_version(version);
        let request = ClientRequest::DiscoverRequest(rmcp::model::DiscoverRequest::new(
            rmcp::model::DiscoverRequestParams {},
        ));
        let options = PeerRequestOptions::no_options().with_meta(meta);
        let pending = std::future::pending();
        self.request_unredacted("server/discover", request, options, |_| {}, pending)
            .await
            .map(|(raw, _)| raw)
            .map_err(|e| e.redacted(&self.redactor))
    }

    async fn request_unredacted(
        &self,
        method: &str,
        request: ClientRequest,
        options: PeerRequestOptions,
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
            .send_request_with_option(request, options)
            .await
            .map_err(|e| failed(e.to_string()))?;
        let id = serde_json::to_string(&handle.id).map_err(|e| failed(e.to_string()))?;
        on_sent(&handle.progress_token);
        let Some(answer) = answer_or_cancel(handle, cancelled, "cancelled by the client").await
        else {
            self.wire.forget(&id);
            return Err(failed("cancelled by the client".into()));
        };
        let latency_ms = ms(started);
        // rmcp fails a request on its own (a closed transport) without a response: stop waiting
        let raw = self.wire.take_response_by_id(&id);
        if raw.is_none() {
            self.wire.forget(&id);
        }
        match (answer, raw) {
            (_, Some(raw)) if raw.error.is_none() => Ok((raw, latency_ms)),
            // the pump answered in the server's place: the server's own message was dropped
            (Err(ServiceError::McpError(e)), _) if dropped::answered_for_the_server(&e.data) => {
                Err(failed(e.message.to_string()))
            }
            (Err(ServiceError::McpError(e)), _) => Err(UpstreamError::Rpc {
                method: method.into(),
                code: e.code.0 as i64,
                message: e.message.to_string(),
                data: e.data.map(Box::new),
            }),
            (_, Some(raw)) => {
                let error = raw.error.unwrap_or_default();
                Err(UpstreamError::Rpc {
                    method: method.into(),
                    code: error["code"].as_i64().unwrap_or(0),
                    message: error["message"].as_str().unwrap_or("error").to_string(),
                    data: error.get("data").cloned().map(Box::new),
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
async fn explain(
    error: &str,
    child: Option<&mut ChildGuard>,
    wire: &Wire,
    redactor: &Redactor,
) -> String {
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
        let tail = child.stderr_tail(300, redactor);
        if !tail.is_empty() {
            parts.push(format!("stderr: {tail}"));
        }
    }
    if let Some(w) = wire.warnings().last() {
        parts.push(w.clone());
    }
    parts.join("; ")
}

fn ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}
