//! Fleet telemetry: every MCP request the proxy serves as an OpenTelemetry span and metrics,
//! exported over OTLP/HTTP (`config.rs`, `otel.rs`, through the bounded queue of `queue.rs`),
//! and the same metrics as OpenMetrics text for Prometheus (`prom.rs`). Names follow the MCP
//! semantic conventions where they have one, and `mcp_budget.*` where they lack one
//! (`names.rs`); the client's name and version are what the client says of itself. The audit's
//! numbers go out as OTLP metrics too (`audit.rs`). Exporting never holds up a call: it runs on
//! threads of its own, and what is lost is counted and said once.

mod audit;
mod config;
pub mod names;
mod otel;
mod prom;
mod queue;
mod span;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use opentelemetry::KeyValue;

pub use audit::export_audit;
pub use config::{OtlpConfig, TelemetryError, DEFAULT_ENDPOINT};
pub use queue::QUEUE_SPANS;
pub use span::{Request, RequestSpan};

use names::*;
use otel::Otel;
use prom::Prom;
use queue::Losses;

/// Distinct client names and tool names kept as labels at most; the rest count as `other` (a
/// client names itself, and a name per request must not grow the metrics without end).
const MAX_CLIENT_NAMES: usize = 64;
const MAX_TOOL_NAMES: usize = 2_000;
/// A label's characters at most.
const MAX_LABEL_CHARS: usize = 64;

/// What a tool call's result measured, for its span and metrics.
#[derive(Debug, Clone, Default)]
pub struct ResultMeasure {
    pub raw_tokens: usize,
    pub budgeted_tokens: usize,
    pub raw_bytes: usize,
    pub strategy: String,
    pub engine_s: f64,
    pub spilled: bool,
    /// The `--client` profiles whose own limit the raw result breaks.
    pub over_limit: Vec<String>,
}

/// One request as the metrics count it (labels bounded).
#[derive(Debug, Clone)]
pub struct CallMeasure {
    pub method: &'static str,
    pub server: String,
    pub tool: Option<String>,
    pub client_name: String,
    pub network_transport: &'static str,
    pub error_type: Option<String>,
    pub duration_s: f64,
    pub result: Option<ResultMeasure>,
}

/// How a request ended.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// `error.type`: a JSON-RPC error code as text, or `tool_error` for a result with
    /// `isError`; and the message.
    pub error: Option<(String, String)>,
    pub result: Option<ResultMeasure>,
    /// When the client had its answer (`None`: now).
    pub answered: Option<SystemTime>,
}

/// Where the proxy's telemetry goes: OTLP (when configured) and Prometheus (when served).
pub struct Telemetry {
    server: String,
    tokenizer: String,
    otel: Option<Otel>,
    prom: Option<Prom>,
    losses: Arc<Losses>,
    otlp: Option<OtlpConfig>,
    clients_seen: Mutex<HashSet<String>>,
    tools_seen: Mutex<HashSet<String>>,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry")
            .field("otlp", &self.otlp)
            .field("prometheus", &self.prom.is_some())
            .finish()
    }
}

impl Telemetry {
    /// No telemetry at all (the default).
    pub fn off() -> Telemetry {
        Telemetry {
            server: String::new(),
            tokenizer: String::new(),
            otel: None,
            prom: None,
            losses: Arc::new(Losses::new(Box::new(|_| {}))),
            otlp: None,
            clients_seen: Mutex::new(HashSet::new()),
            tools_seen: Mutex::new(HashSet::new()),
        }
    }

    /// Telemetry for the proxy of `server`: OTLP to `otlp` when given, Prometheus text when
    /// `prometheus`; `say` hears of lost data, once (header values already redacted).
    pub fn start(
        server: &str,
        tokenizer: &str,
        otlp: Option<OtlpConfig>,
        prometheus: bool,
        var: &dyn Fn(&str) -> Option<String>,
        say: Box<dyn Fn(String) + Send + Sync>,
    ) -> Result<Telemetry, TelemetryError> {
        let redactor = otlp.clone();
        let losses = Arc::new(Losses::new(Box::new(move |m: String| {
            say(match &redactor {
                Some(c) => c.redact(&m),
                None => m,
            })
        })));
        let otel = match &otlp {
            Some(c) => Some(Otel::start(c, var, losses.clone())?),
            None => None,
        };
        Ok(Telemetry {
            server: server.to_string(),
            tokenizer: tokenizer.to_string(),
            otel,
            prom: prometheus.then(Prom::new),
            losses,
            otlp,
            clients_seen: Mutex::new(HashSet::new()),
            tools_seen: Mutex::new(HashSet::new()),
        })
    }

    /// Whether anything is recorded (else requests cost nothing here).
    pub fn is_on(&self) -> bool {
        self.otel.is_some() || self.prom.is_some()
    }

    /// What the OTLP export is set to, in words (header values redacted).
    pub fn describe(&self) -> Option<String> {
        self.otlp.as_ref().map(OtlpConfig::describe)
    }

    /// A request arrives: its span starts (a child of the `_meta` trace, if any).
    pub fn request(&self, request: Request) -> RequestSpan {
        match &self.otel {
            Some(o) => RequestSpan::start(&o.tracer, &self.server, request),
            None => RequestSpan::unexported(request),
        }
    }

    /// A request ended: its span ends with what was measured, and its metrics are recorded.
    pub fn finish(&self, mut span: RequestSpan, outcome: Outcome) {
        if !self.is_on() {
            return;
        }
        let answered = outcome.answered.unwrap_or_else(SystemTime::now);
        let duration_s = answered
            .duration_since(span.started)
            .unwrap_or_default()
            .as_secs_f64();
        let mut extra = Vec::new();
        if let Some(r) = &outcome.result {
            extra.extend([
                KeyValue::new(RAW_TOKENS, r.raw_tokens as i64),
                KeyValue::new(BUDGETED_TOKENS, r.budgeted_tokens as i64),
                KeyValue::new(RAW_BYTES, r.raw_bytes as i64),
                KeyValue::new(STRATEGY, r.strategy.clone()),
                KeyValue::new(SPILLED, r.spilled),
                KeyValue::new(ENGINE_MS, r.engine_s * 1000.0),
                KeyValue::new(TOKENIZER, self.tokenizer.clone()),
            ]);
        }
        let error = outcome
            .error
            .as_ref()
            .map(|(k, m)| (k.as_str(), m.as_str()));
        span.end(extra, error, answered);
        let measure = CallMeasure {
            method: span.request.method,
            server: self.server.clone(),
            tool: span
                .request
                .tool
                .as_deref()
                .map(|t| bounded(&self.tools_seen, t, MAX_TOOL_NAMES)),
            client_name: bounded(
                &self.clients_seen,
                span.request.client_name.as_deref().unwrap_or("unknown"),
                MAX_CLIENT_NAMES,
            ),
            network_transport: span.request.network_transport,
            error_type: outcome.error.map(|(k, _)| k),
            duration_s,
            result: outcome.result,
        };
        if let Some(o) = &self.otel {
            o.instruments.record(&measure);
        }
        if let Some(p) = &self.prom {
            p.record(&measure);
        }
    }

    /// The metrics as OpenMetrics text, when Prometheus is served.
    pub fn prometheus_text(&self) -> Option<String> {
        self.prom.as_ref().map(Prom::text)
    }

    /// Flush what is queued and stop the exporters, giving up after `within` (a collector
    /// that hangs must not hold the end of the proxy).
    pub fn shutdown(&self, within: Duration) {
        let Some(o) = &self.otel else {
            return;
        };
        let (tp, mp) = (o.tracer_provider.clone(), o.meter_provider.clone());
        let (done, finished) = std::sync::mpsc::channel();
        let _ = std::thread::Builder::new()
            .name("mcp-budget-otlp-shutdown".into())
            .spawn(move || {
                let _ = tp.shutdown_with_timeout(within);
                let _ = mp.shutdown_with_timeout(within);
                let _ = done.send(());
            });
        let _ = finished.recv_timeout(within);
        self.losses.say_totals();
    }
}

/// `name` as a label: at most [`MAX_LABEL_CHARS`] characters, and one of the first `max`
/// distinct names, else `other`.
fn bounded(seen: &Mutex<HashSet<String>>, name: &str, max: usize) -> String {
    let name: String = name.chars().take(MAX_LABEL_CHARS).collect();
    let mut seen = seen.lock().unwrap_or_else(|p| p.into_inner());
    if seen.contains(&name) {
        return name;
    }
    if seen.len() >= max {
        return "other".into();
    }
    seen.insert(name.clone());
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_capped_in_length_and_in_number() {
        let seen = Mutex::new(HashSet::new());
        assert_eq!(bounded(&seen, "claude-code", 2), "claude-code");
        assert_eq!(bounded(&seen, &"x".repeat(500), 2).len(), MAX_LABEL_CHARS);
        assert_eq!(bounded(&seen, "a-third-name", 2), "other");
        assert_eq!(bounded(&seen, "claude-code", 2), "claude-code");
    }

    #[test]
    fn prometheus_text_counts_what_was_recorded() {
        let t = Telemetry::start(
            "demo",
            "cl100k_base",
            None,
            true,
            &|_| None,
            Box::new(|_| {}),
        )
        .unwrap();
        for raw in [120, 30_000] {
            let span = t.request(Request {
                method: "tools/call",
                tool: Some("search".into()),
                network_transport: "pipe",
                client_name: Some("claude-code".into()),
                ..Request::default()
            });
            t.finish(
                span,
                Outcome {
                    result: Some(ResultMeasure {
                        raw_tokens: raw,
                        budgeted_tokens: raw.min(8_000),
                        strategy: if raw > 8_000 {
                            "spilled"
                        } else {
                            "passthrough"
                        }
                        .into(),
                        spilled: raw > 8_000,
                        ..ResultMeasure::default()
                    }),
                    ..Outcome::default()
                },
            );
        }
        let text = t.prometheus_text().unwrap();
        let line = |prefix: &str| -> f64 {
            text.lines()
                .filter(|l| l.starts_with(prefix))
                .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
                .sum()
        };
        assert_eq!(line("mcp_budget_result_raw_tokens_sum"), 30_120.0);
        assert_eq!(line("mcp_budget_result_raw_tokens_count"), 2.0);
        assert_eq!(line("mcp_budget_result_budgeted_tokens_sum"), 8_120.0);
        assert_eq!(line("mcp_budget_spills_total"), 1.0);
        assert_eq!(line("mcp_server_operation_duration_seconds_count"), 2.0);
        // cumulative buckets: the 120-token result is within 25,000, the 30,000-token one
        // above it and within 50,000
        let bucket = |le: &str| {
            text.lines()
                .filter(|l| {
                    l.starts_with("mcp_budget_result_raw_tokens_bucket{")
                        && l.contains(&format!("le=\"{le}\""))
                })
                .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
                .sum::<f64>()
        };
        assert_eq!(bucket("100.0"), 0.0, "{text}");
        assert_eq!(bucket("25000.0"), 1.0, "{text}");
        assert_eq!(bucket("50000.0"), 2.0, "{text}");
        assert!(text.trim_end().ends_with("# EOF"), "{text}");
    }
}
