//! The proxy's side of telemetry: a request's span starts when the handler takes the request
//! and travels with it (in the request context's extensions) to where the request ends; a
//! forwarded tool call claims it, so its span ends with the tokens the engine measured, after
//! the client has its answer, stamped with the moment it had it.

use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::Value;

use super::state::Shared;
use crate::output::telemetry::{Request, RequestEnd, RequestSpan};

/// A request's span, until one part of the proxy claims it to end it.
#[derive(Clone, Default)]
pub(super) struct Traced(Arc<Mutex<Option<RequestSpan>>>);

impl Traced {
    /// The span, for the one who ends it; `None` when it was claimed already (or telemetry is
    /// off).
    pub(super) fn claim(&self) -> Option<RequestSpan> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// The span of `context`'s request, if the handler started one.
pub(super) fn claim(context: &RequestContext<RoleServer>) -> Option<RequestSpan> {
    context.extensions.get::<Traced>().and_then(Traced::claim)
}

/// Start the span of a request (`tools/call`, `tools/list`, `resources/read`) and put it in
/// the context's extensions; nothing when telemetry is off.
pub(super) fn start(
    shared: &Shared,
    context: &mut RequestContext<RoleServer>,
    method: &'static str,
    tool: Option<&str>,
    resource_uri: Option<&str>,
) -> Traced {
    let telemetry = &shared.opts.telemetry;
    if !telemetry.is_on() {
        return Traced::default();
    }
    let (client_name, client_version) = caller(context);
    let http = context.extensions.get::<hyper::http::request::Parts>();
    let session_id = http
        .and_then(|p| p.headers.get("mcp-session-id"))
        .and_then(|v| v.to_str().ok())
        .map(String::from);
    // only the trace context is read of the `_meta`
    let trace_keys: serde_json::Map<String, Value> = ["traceparent", "tracestate"]
        .iter()
        .filter_map(|k| Some((k.to_string(), context.meta.0 .0.get(*k)?.clone())))
        .collect();
    let meta = (!trace_keys.is_empty()).then_some(trace_keys);
    let request = Request {
        method,
        tool: tool.map(String::from),
        resource_uri: resource_uri.map(String::from),
        request_id: serde_json::to_value(&context.id).ok().map(|v| match v {
            Value::String(s) => s,
            other => other.to_string(),
        }),
        protocol_version: context.protocol_version().map(|v| v.to_string()),
        session_id,
        network_transport: if http.is_some() { "tcp" } else { "pipe" },
        client_name,
        client_version,
        meta,
    };
    let traced = Traced(Arc::new(Mutex::new(Some(telemetry.request(request)))));
    context.extensions.insert(traced.clone());
    traced
}

/// End a request's span, if no one claimed it, with how it ended.
pub(super) fn end<T>(shared: &Shared, traced: &Traced, answer: &Result<T, ErrorData>) {
    let Some(span) = traced.claim() else {
        return;
    };
    let error = answer.as_ref().err().map(rpc_error);
    shared.opts.telemetry.finish(
        span,
        RequestEnd {
            error,
            ..RequestEnd::default()
        },
    );
}

/// A JSON-RPC error's `error.type` (its code, as the conventions say) and message.
pub(super) fn rpc_error(e: &ErrorData) -> (String, String) {
    (e.code.0.to_string(), e.message.to_string())
}

/// A tool result's `error.type`: `tool_error` when it says `isError`.
pub(super) fn tool_error(is_error: bool) -> Option<(String, String)> {
    is_error.then(|| ("tool_error".to_string(), "isError".to_string()))
}

/// The calling client's name and version: the request's own `_meta` names a 2026-07-28
/// client; a session's handshake, the others.
pub(super) fn caller(context: &RequestContext<RoleServer>) -> (Option<String>, Option<String>) {
    context
        .client_info()
        .map(|i| (Some(i.name), Some(i.version)))
        .unwrap_or((None, None))
}

/// End a claimed span of a forwarded call: what the engine measured, at `answered`.
pub(super) fn end_call(
    shared: &Shared,
    span: RequestSpan,
    answered: SystemTime,
    error: Option<(String, String)>,
    result: Option<crate::output::telemetry::ResultMeasure>,
) {
    shared.opts.telemetry.finish(
        span,
        RequestEnd {
            error,
            result,
            answered: Some(answered),
        },
    );
}

/// What a forwarded call's result measured, for its span and metrics: the log line's numbers,
/// and the `--client` profiles whose own limit the raw result breaks (each judged on the raw
/// result as that client would have received it).
pub(super) fn measured(
    shared: &Shared,
    record: &crate::ground::calllog::CallRecord,
    raw: &Value,
) -> crate::output::telemetry::ResultMeasure {
    let over_limit = shared
        .opts
        .clients
        .iter()
        .filter(|p| crate::config::profiles::breaks_limit(p, raw, shared.opts.tokenizer))
        .map(|p| p.id.clone())
        .collect();
    crate::output::telemetry::ResultMeasure {
        raw_tokens: record.raw_tokens,
        budgeted_tokens: record.returned_tokens,
        raw_bytes: record.raw_bytes,
        strategy: record.strategy.clone(),
        engine_s: record.engine_ms / 1000.0,
        spilled: record.spill_id.is_some(),
        over_limit,
    }
}
