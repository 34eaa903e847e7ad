//! A span per MCP request the proxy serves, named and attributed as the MCP semantic
//! conventions say (`{mcp.method.name} {gen_ai.tool.name}`, kind SERVER), continuing the trace
//! whose `traceparent` the request's `_meta` carries, and handing its own context on to the
//! upstream in the forwarded request's `_meta`, so the proxy's span sits between the client's
//! and the server's.

#[cfg(feature = "telemetry")]
use std::collections::HashMap;
use std::time::SystemTime;

#[cfg(feature = "telemetry")]
use opentelemetry::propagation::TextMapPropagator;
#[cfg(feature = "telemetry")]
use opentelemetry::trace::{Span as _, SpanKind, Status, TraceContextExt, Tracer as _};
#[cfg(feature = "telemetry")]
use opentelemetry::{Context, KeyValue};
#[cfg(feature = "telemetry")]
use opentelemetry_sdk::propagation::TraceContextPropagator;
use serde_json::{Map, Value};

#[cfg(feature = "telemetry")]
use super::names::*;

/// What is known of a request when it arrives.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// `tools/call`, `tools/list`, `resources/read`.
    pub method: &'static str,
    pub tool: Option<String>,
    pub resource_uri: Option<String>,
    /// The JSON-RPC id, as text.
    pub request_id: Option<String>,
    pub protocol_version: Option<String>,
    /// The HTTP session's id; never for a request of the 2026-07-28 era (it has no session).
    pub session_id: Option<String>,
    /// `pipe` (stdio) or `tcp` (HTTP), as the conventions name transports.
    pub network_transport: &'static str,
    /// The caller as it names itself: self-reported labels, not an identity.
    pub client_name: Option<String>,
    pub client_version: Option<String>,
    /// The request's `_meta` (`traceparent`, `tracestate`).
    pub meta: Option<Map<String, Value>>,
}

/// A request being served: its span (when spans are exported) and what its metrics need.
pub struct RequestSpan {
    #[cfg(feature = "telemetry")]
    pub(super) span: Option<opentelemetry_sdk::trace::Span>,
    #[cfg_attr(not(feature = "telemetry"), allow(dead_code))]
    pub(super) request: Request,
    #[cfg_attr(not(feature = "telemetry"), allow(dead_code))]
    pub(super) started: SystemTime,
}

impl std::fmt::Debug for RequestSpan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestSpan")
            .field("method", &self.request.method)
            .field("exported", &self.exported())
            .finish()
    }
}

impl RequestSpan {
    /// Whether the span is exported.
    fn exported(&self) -> bool {
        #[cfg(feature = "telemetry")]
        return self.span.is_some();
        #[cfg(not(feature = "telemetry"))]
        false
    }

    /// A request with no span (telemetry off, or metrics only).
    pub(super) fn unexported(request: Request) -> RequestSpan {
        RequestSpan {
            #[cfg(feature = "telemetry")]
            span: None,
            request,
            started: SystemTime::now(),
        }
    }

    /// Start the span as a child of the trace the request's `_meta` carries (if any).
    #[cfg(feature = "telemetry")]
    pub(super) fn start(
        tracer: &opentelemetry_sdk::trace::SdkTracer,
        server: &str,
        request: Request,
    ) -> RequestSpan {
        let parent = request.meta.as_ref().map(extract).unwrap_or_default();
        let name = match &request.tool {
            Some(t) => format!("{} {t}", request.method),
            None => request.method.to_string(),
        };
        let span = tracer
            .span_builder(name)
            .with_kind(SpanKind::Server)
            .with_attributes(attributes(server, &request))
            .start_with_context(tracer, &parent);
        RequestSpan {
            span: Some(span),
            request,
            started: SystemTime::now(),
        }
    }

    /// The `_meta` keys that carry this span's context to the upstream (`traceparent`,
    /// `tracestate`); none when no span is exported.
    #[cfg(not(feature = "telemetry"))]
    pub fn trace_meta(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// The `_meta` keys that carry this span's context to the upstream (`traceparent`,
    /// `tracestate`); none when no span is exported.
    #[cfg(feature = "telemetry")]
    pub fn trace_meta(&self) -> Vec<(String, String)> {
        let Some(span) = &self.span else {
            return Vec::new();
        };
        let cx = Context::new().with_remote_span_context(span.span_context().clone());
        let mut carrier: HashMap<String, String> = HashMap::new();
        TraceContextPropagator::new().inject_context(&cx, &mut carrier);
        let mut out: Vec<(String, String)> =
            carrier.into_iter().filter(|(_, v)| !v.is_empty()).collect();
        out.sort();
        out
    }

    /// End the span: `extra` attributes, the error (if any), at `answered` (the moment the
    /// client had its answer, which may be before a deferred count finished).
    #[cfg(feature = "telemetry")]
    pub(super) fn end(
        &mut self,
        extra: Vec<KeyValue>,
        error: Option<(&str, &str)>,
        answered: SystemTime,
    ) {
        let Some(span) = self.span.as_mut() else {
            return;
        };
        span.set_attributes(extra);
        if let Some((kind, message)) = error {
            span.set_attribute(KeyValue::new(ERROR_TYPE, kind.to_string()));
            span.set_status(Status::error(message.to_string()));
        }
        span.end_with_timestamp(answered);
    }
}

/// The trace context in a request's `_meta`.
#[cfg(feature = "telemetry")]
fn extract(meta: &Map<String, Value>) -> Context {
    let carrier: HashMap<String, String> = meta
        .iter()
        .filter(|(k, _)| *k == "traceparent" || *k == "tracestate")
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
        .collect();
    TraceContextPropagator::new().extract(&carrier)
}

/// The attributes known when a request arrives.
#[cfg(feature = "telemetry")]
fn attributes(server: &str, r: &Request) -> Vec<KeyValue> {
    let mut a = vec![
        KeyValue::new(MCP_METHOD, r.method),
        KeyValue::new(NETWORK_TRANSPORT, r.network_transport),
        KeyValue::new(SERVER, server.to_string()),
        KeyValue::new(
            CLIENT_TRANSPORT,
            if r.network_transport == "tcp" {
                "http"
            } else {
                "stdio"
            },
        ),
    ];
    if r.network_transport == "tcp" {
        a.push(KeyValue::new(NETWORK_PROTOCOL, "http"));
    }
    let mut opt = |key: &'static str, v: &Option<String>| {
        if let Some(v) = v {
            a.push(KeyValue::new(key, v.clone()));
        }
    };
    opt(TOOL_NAME, &r.tool);
    opt(MCP_RESOURCE_URI, &r.resource_uri);
    opt(REQUEST_ID, &r.request_id);
    opt(MCP_PROTOCOL_VERSION, &r.protocol_version);
    opt(CLIENT_NAME, &r.client_name);
    opt(CLIENT_VERSION, &r.client_version);
    // the 2026-07-28 era and later have no session
    let stateless = r
        .protocol_version
        .as_deref()
        .is_some_and(|v| v >= crate::wire::upstream::MODERN_VERSION);
    if !stateless {
        opt(MCP_SESSION_ID, &r.session_id);
    }
    if r.tool.is_some() && r.method == "tools/call" {
        a.push(KeyValue::new(OPERATION_NAME, "execute_tool"));
    }
    a
}
