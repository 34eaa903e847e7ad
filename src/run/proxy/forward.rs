//! The call path: a client's request forwarded to the upstream, a tool result run through
//! the budget engine, and the call written to the log.

use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime};

use rmcp::model::{CallToolResult, RequestMetaObject};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::clients::{route_key, InFlight, Route};
use super::locked::lock;
use super::reply::from_json;
use super::server::Proxy;
use super::trace;
use super::upstream::session_key;
use crate::budget::{Budgeted, CallInfo, Strategy};
use crate::ground::calllog::CallRecord;
use crate::output::telemetry::RequestSpan;
use crate::wire::upstream::{CallOutcome, Forwarded, Session, UpstreamError};

/// The largest `data` of an upstream's JSON-RPC error passed on to the client (as JSON text).
const MAX_ERROR_DATA_BYTES: usize = 4096;

impl Proxy {
    /// An upstream failure as the client's error: the upstream's own JSON-RPC error as it
    /// sent it, anything else naming the upstream; a stopped upstream is restarted.
    pub(super) fn upstream_failure(&self, session: &Session, e: UpstreamError) -> ErrorData {
        let server = &self.shared.opts.server;
        if let UpstreamError::Rpc {
            code,
            message,
            data,
            ..
        } = e
        {
            // the error's `data` too, unless it is large: an error is outside the budget (and
            // its message is cut as large, for a server that quotes back a 400 KB name)
            let data = data.filter(|d| d.to_string().len() <= MAX_ERROR_DATA_BYTES);
            return ErrorData::new(
                rmcp::model::ErrorCode(code as i32),
                cut_message(message),
                data.map(|d| *d),
            );
        }
        // rmcp reports a dead transport before `is_closed` turns true
        let message = if session.is_closed() || e.to_string().contains("closed") {
            self.shared.upstream.restart();
            format!(
                "the upstream server `{server}` has stopped (mcp-budget is restarting it; try again): {e}"
            )
        } else {
            format!("the upstream server `{server}` failed: {e}")
        };
        ErrorData::internal_error(message, None)
    }

    /// Forward a client's request to the upstream as it is, and read the upstream's result;
    /// the client cancelling (`ct`) cancels it upstream.
    pub(super) async fn ask<T: DeserializeOwned>(
        &self,
        method: &str,
        params: impl serde::Serialize,
        ct: &tokio_util::sync::CancellationToken,
    ) -> Result<T, ErrorData> {
        let params = serde_json::to_value(params)
            .map_err(|e| ErrorData::internal_error(format!("{method}: {e}"), None))?;
        let session = self.shared.upstream.get();
        let raw = session
            .request_json(method, params, ct.cancelled())
            .await
            .map_err(|e| self.upstream_failure(&session, e))?;
        serde_json::from_str(raw.result_text())
            .map(crate::measure::marked_complete)
            .and_then(serde_json::from_value)
            .map_err(|e| {
            ErrorData::internal_error(
                format!(
                    "the upstream server `{}` answered {method} with a result mcp-budget cannot read: {e}",
                    self.shared.opts.server
                ),
                None,
            )
        })
    }

    /// [`Self::ask`] for a request whose result is empty.
    pub(super) async fn tell(
        &self,
        method: &str,
        params: impl serde::Serialize,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let _: Value = self.ask(method, params, &context.ct).await?;
        Ok(())
    }

    /// Forward one call to the upstream and budget its result (`via`: the proxy's tool the
    /// client called for it, for the log).
    pub(super) async fn forward(
        &self,
        name: &str,
        args: Map<String, Value>,
        context: RequestContext<RoleServer>,
        via: Option<&str>,
    ) -> Result<CallToolResult, ErrorData> {
        let client = trace::caller(&context);
        // what the policy supplies (`fixed_arguments`, for the parameters it hides), where the
        // client gave nothing
        let mut args = args;
        let policy = self.shared.opts.engine.policy();
        for (k, v) in policy.fixed_arguments(name).unwrap_or_default() {
            args.entry(k).or_insert(v);
        }
        // this call's span ends with what the engine measured (the handler's, if it started one)
        let span = trace::claim(&context);
        let trace_meta = span.as_ref().map(|s| s.trace_meta()).unwrap_or_default();
        let _running = InFlight::new(&self.shared.clients, self.client_id);
        let session = self.shared.upstream.get();
        // the progress route lives until the call has ended here, however it ends
        let (answer, _route) = self
            .call_upstream(&session, name, args, &context, trace_meta)
            .await;
        let outcome = match answer {
            Ok(o) => o,
            Err(e) => {
                // the upstream's own JSON-RPC error is the client's business; anything else
                // (a message that could not be read, a dead upstream) the operator hears of
                let own = matches!(e, UpstreamError::Rpc { .. });
                let error = self.upstream_failure(&session, e);
                if !own {
                    self.shared
                        .warn(format!("tool `{name}`: {}", error.message));
                }
                self.log_failure(name, client, &error.message);
                if let Some(span) = span {
                    let kind = Some(trace::rpc_error(&error));
                    trace::end_call(&self.shared, span, SystemTime::now(), kind, None);
                }
                return Err(error);
            }
        };
        let (raw_bytes, upstream_ms) = (outcome.response.result_text().len(), outcome.latency_ms);
        let (budgeted, engine_ms, raw) = self.budget(name, outcome).await?;
        if let Some(e) = &budgeted.spill_error {
            self.shared.warn(format!(
                "`{}`/{name}: the full original of a {} result could not be saved: {e}",
                self.shared.opts.server,
                budgeted.strategy.name()
            ));
        }
        if self.shared.opts.log.is_some() || span.is_some() {
            let record = CallRecord {
                raw_bytes,
                returned_tokens: budgeted.tokens_after,
                items_kept: budgeted.list.as_ref().map(|l| l.whole),
                items_total: budgeted.list.as_ref().map(|l| l.total),
                strategy: budgeted.strategy.name().to_string(),
                spill_id: budgeted.spill.as_ref().map(|s| s.id.clone()),
                spill_error: budgeted.spill_error.clone(),
                upstream_ms,
                engine_ms,
                is_error: budgeted.result["isError"].as_bool() == Some(true),
                via: via.map(String::from),
                ..self.log_line(name, client)
            };
            self.log_answered(record, &budgeted, raw, span);
        }
        from_json(budgeted.result)
    }

    /// Send the call upstream and wait for its answer, and for what the upstream sent before
    /// it. The client's progress token is swapped for the upstream session's own: progress
    /// under that token is routed back to this client, with its token, while the returned guard
    /// lives.
    async fn call_upstream(
        &self,
        session: &Session,
        name: &str,
        args: Map<String, Value>,
        context: &RequestContext<RoleServer>,
        trace_meta: Vec<(String, String)>,
    ) -> (Result<CallOutcome, UpstreamError>, RouteGuard<'_>) {
        let session_id = session_key(session);
        let mut route = RouteGuard {
            routes: &self.shared.clients.routes,
            key: None,
        };
        let wants_progress = context.meta.get_progress_token().map(|t| {
            (
                context.peer.clone(),
                serde_json::to_value(t).unwrap_or_default(),
            )
        });
        // the client's notifications/cancelled cancels `ct`: pass it on to the upstream
        let ct = context.ct.clone();
        // from before the request is sent until its route is written (or the send failed)
        let routing = wants_progress
            .is_some()
            .then(|| Routing::start(&self.shared.clients.routing));
        let forwarded = Forwarded {
            meta: forwarded_meta(&context.meta, trace_meta),
            cancelled: async move { ct.cancelled().await },
            on_sent: |upstream: &rmcp::model::ProgressToken| {
                let _routing = routing;
                if let Some((client, token)) = wants_progress {
                    let upstream = serde_json::to_value(upstream).unwrap_or_default();
                    let key = route_key(session_id, &upstream);
                    lock(&self.shared.clients.routes).insert(key.clone(), Route { client, token });
                    route.key = Some(key);
                }
            },
        };
        let answer = session.call_forwarded(name, args, forwarded).await;
        // what the upstream sent before its answer (the call's progress, a log message) is
        // forwarded before the answer, as a client expects; a stuck client cannot stall this
        let order = session.wire().notification_order();
        let _ = tokio::time::timeout(Duration::from_secs(1), order.wait_for(order.queued())).await;
        // and sent to this client, not only queued for it
        let me = lock(&self.shared.clients.connected)
            .iter()
            .find(|c| c.id == self.client_id)
            .cloned();
        if let Some(me) = me {
            me.drained(Duration::from_secs(1)).await;
        }
        (answer, route)
    }

    /// Run the upstream's result through the engine (on a blocking thread): what the client
    /// gets, the engine's time in ms, and the result as parsed.
    async fn budget(
        &self,
        name: &str,
        outcome: CallOutcome,
    ) -> Result<(Budgeted, f64, Value), ErrorData> {
        let raw: Value = crate::measure::read_json(outcome.response.result_text()).map_err(|e| {
            ErrorData::internal_error(
                format!(
                    "the upstream server `{}` answered tools/call with a result that is not JSON: {e}",
                    self.shared.opts.server
                ),
                None,
            )
        })?;
        // the response moves into the engine's task: its text is borrowed there, not copied
        let response = outcome.response;
        let engine = self.shared.opts.engine.clone();
        let server = self.shared.opts.server.clone();
        let tool = name.to_string();
        // a client validates structuredContent against a declared output schema: keep it
        let output_schema = self
            .shared
            .tools
            .shown()
            .iter()
            .any(|t| t["name"] == name && t.get("outputSchema").is_some_and(|s| !s.is_null()));
        tokio::task::spawn_blocking(move || {
            let started = Instant::now();
            let call = CallInfo {
                server: &server,
                tool: &tool,
                raw: Some(response.result_text()),
                output_schema,
            };
            let out = engine.run(&call, &raw);
            (out, started.elapsed().as_secs_f64() * 1000.0, raw)
        })
        .await
        .map_err(|e| ErrorData::internal_error(format!("the budget engine failed: {e}"), None))
    }

    /// Write an answered call's log line and end its span. The raw count is the engine's (the
    /// same units as `returned_tokens`, free for a pass-through); a reduced result is counted in
    /// full, after the client has its answer, and the span is stamped with when it had it.
    fn log_answered(
        &self,
        record: CallRecord,
        budgeted: &Budgeted,
        raw: Value,
        span: Option<RequestSpan>,
    ) {
        let shared = self.shared.clone();
        let (strategy, tokens_after) = (budgeted.strategy, budgeted.tokens_after);
        let budget = budgeted.budget;
        let answered = SystemTime::now();
        let finish = move || {
            let raw_tokens = shared
                .opts
                .engine
                .tokens_before_of(strategy, tokens_after, &raw);
            let record = CallRecord {
                raw_tokens,
                fill: (raw_tokens > budget && budget > 0)
                    .then(|| tokens_after as f64 / budget as f64),
                ..record
            };
            if let Some(log) = &shared.opts.log {
                shared.append_log(log, &record);
            }
            if let Some(span) = span {
                let error = trace::tool_error(record.is_error);
                let measured = trace::measured(&shared, &record, &raw);
                trace::end_call(&shared, span, answered, error, Some(measured));
            }
        };
        // nothing to count or write (a pass-through's count is the engine's, and no client
        // profile judges it): its telemetry costs less than a hop to a blocking thread
        let light = strategy == Strategy::PassThrough
            && self.shared.opts.log.is_none()
            && self.shared.opts.clients.is_empty();
        if light {
            finish();
        } else {
            tokio::task::spawn_blocking(finish);
        }
    }

    /// A call that failed before the engine saw a result, as a line of the call log.
    fn log_failure(&self, tool: &str, client: (Option<String>, Option<String>), error: &str) {
        let Some(log) = &self.shared.opts.log else {
            return;
        };
        let record = CallRecord {
            strategy: "error".into(),
            is_error: true,
            error: Some(error.to_string()),
            ..self.log_line(tool, client)
        };
        self.shared.append_log(log, &record);
    }

    /// A call log line with who called what, and nothing measured yet.
    fn log_line(&self, tool: &str, client: (Option<String>, Option<String>)) -> CallRecord {
        CallRecord {
            ts: crate::ground::units::now_rfc3339(),
            server: self.shared.opts.server.clone(),
            tool: tool.to_string(),
            client_name: client.0,
            client_version: client.1,
            transport: self.shared.opts.transport.clone(),
            schema_tokens_upstream: Some(self.shared.tools.startup.upstream_tokens),
            schema_tokens_shown: Some(self.shared.tools.shown_tokens()),
            ..CallRecord::default()
        }
    }
}

/// The calling client's name and version, for the log.
/// An upstream's error message as passed on: at most [`MAX_ERROR_DATA_BYTES`], saying so
/// when cut.
fn cut_message(message: String) -> String {
    if message.len() <= MAX_ERROR_DATA_BYTES {
        return message;
    }
    let at = crate::ground::text::floor_char_boundary(&message, MAX_ERROR_DATA_BYTES);
    format!(
        "{}... (the upstream's message cut to {MAX_ERROR_DATA_BYTES} of {} bytes)",
        &message[..at],
        crate::ground::units::thousands(message.len())
    )
}

/// A call whose progress route is being written: counted in `Shared::routing` while it
/// lives, so the relay holds a progress note with no route until the count is back to 0.
struct Routing<'a>(&'a tokio::sync::watch::Sender<usize>);

impl<'a> Routing<'a> {
    fn start(count: &'a tokio::sync::watch::Sender<usize>) -> Routing<'a> {
        count.send_modify(|n| *n += 1);
        Routing(count)
    }
}

impl Drop for Routing<'_> {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n -= 1);
    }
}

/// Removes a call's progress route when the call ends, however it ends.
struct RouteGuard<'a> {
    routes: &'a std::sync::Mutex<HashMap<String, Route>>,
    key: Option<String>,
}

impl Drop for RouteGuard<'_> {
    fn drop(&mut self) {
        if let Some(k) = self.key.take() {
            lock(self.routes).remove(&k);
        }
    }
}

/// The client's `_meta` for the upstream: without the keys that describe the client's own
/// session (protocol version, client info and capabilities), which belong to the proxy's; with
/// the proxy's span as the trace context (`traceparent`, `tracestate`) when it exports one.
fn forwarded_meta(
    meta: &RequestMetaObject,
    trace_meta: Vec<(String, String)>,
) -> Option<RequestMetaObject> {
    let mut v = serde_json::to_value(meta).ok()?;
    let map = v.as_object_mut()?;
    for (k, value) in trace_meta {
        map.insert(k, Value::String(value));
    }
    map.retain(|k, _| {
        k != "progressToken"
            && !matches!(
                k.as_str(),
                "io.modelcontextprotocol/protocolVersion"
                    | "io.modelcontextprotocol/clientInfo"
                    | "io.modelcontextprotocol/clientCapabilities"
            )
    });
    if map.is_empty() {
        return None;
    }
    serde_json::from_value(v).ok()
}
