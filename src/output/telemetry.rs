//! Fleet telemetry: every MCP request the proxy serves as an OpenTelemetry span and metrics,
//! exported over OTLP/HTTP (`config.rs`, `otel.rs`, through the bounded queue of `queue.rs`),
//! and the same metrics as OpenMetrics text for Prometheus (`prom.rs`). Names follow the MCP
//! semantic conventions where they have one, and `mcp_budget.*` where they lack one
//! (`names.rs`); the client's name and version are what the client says of itself. The audit's
//! numbers go out as OTLP metrics too (`audit.rs`). Exporting never holds up a call: it runs on
//! threads of its own, and what is lost is counted and said once.

#[cfg(feature = "telemetry")]
mod audit;
mod config;
#[cfg(feature = "telemetry")]
mod http;
mod labels;
pub mod names;
#[cfg(feature = "telemetry")]
mod otel;
#[cfg(feature = "telemetry")]
mod prom;
#[cfg(feature = "telemetry")]
mod queue;
mod span;

#[cfg(feature = "telemetry")]
use std::sync::Arc;
use std::time::{Duration, SystemTime};

#[cfg(feature = "telemetry")]
use opentelemetry::KeyValue;

#[cfg(feature = "telemetry")]
pub use audit::export_audit;
pub use config::{OtlpConfig, TelemetryError, DEFAULT_ENDPOINT};
pub use labels::{Fold, MAX_CLIENT_NAMES, MAX_SERIES};
#[cfg(feature = "telemetry")]
pub use queue::QUEUE_SPANS;
pub use span::{Request, RequestSpan};

#[cfg(feature = "telemetry")]
use labels::Asked;
use labels::Labels;
#[cfg(feature = "telemetry")]
use names::*;
#[cfg(feature = "telemetry")]
use otel::Otel;
#[cfg(feature = "telemetry")]
use prom::Prom;
#[cfg(feature = "telemetry")]
use queue::Losses;

/// `audit --otlp` in a build without the `telemetry` feature: an error that says so.
#[cfg(not(feature = "telemetry"))]
pub fn export_audit(
    _report: &crate::measure::facts::Report,
    _config: &OtlpConfig,
    _var: &dyn Fn(&str) -> Option<String>,
    _within: Duration,
) -> Result<usize, TelemetryError> {
    Err(TelemetryError::NotBuilt)
}

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

/// One request as the metrics count it (labels bounded, `labels.rs`).
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
    /// Why labels of this request were folded (`unknown`, `other`), for the fold counter.
    pub folded: Vec<Fold>,
}

/// How a request ended.
#[derive(Debug, Clone, Default)]
pub struct RequestEnd {
    /// `error.type`: a JSON-RPC error code as text, or `tool_error` for a result with
    /// `isError`; and the message.
    pub error: Option<(String, String)>,
    pub result: Option<ResultMeasure>,
    /// When the client had its answer (`None`: now).
    pub answered: Option<SystemTime>,
}

/// Where the proxy's telemetry goes: OTLP (when configured) and Prometheus (when served).
/// A build without the `telemetry` feature has neither: it never starts with either asked for.
pub struct Telemetry {
    #[cfg(feature = "telemetry")]
    server: String,
    #[cfg(feature = "telemetry")]
    tokenizer: String,
    #[cfg(feature = "telemetry")]
    otel: Option<Otel>,
    #[cfg(feature = "telemetry")]
    prom: Option<Prom>,
    #[cfg(feature = "telemetry")]
    losses: Arc<Losses>,
    otlp: Option<OtlpConfig>,
    labels: Labels,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry")
            .field("otlp", &self.otlp)
            .field("on", &self.is_on())
            .finish()
    }
}

impl Telemetry {
    /// No telemetry at all (the default).
    pub fn off() -> Telemetry {
        Telemetry {
            #[cfg(feature = "telemetry")]
            server: String::new(),
            #[cfg(feature = "telemetry")]
            tokenizer: String::new(),
            #[cfg(feature = "telemetry")]
            otel: None,
            #[cfg(feature = "telemetry")]
            prom: None,
            #[cfg(feature = "telemetry")]
            losses: Arc::new(Losses::new(Box::new(|_| {}))),
            otlp: None,
            labels: Labels::default(),
        }
    }

    /// Without the `telemetry` feature: off, or an error when OTLP or Prometheus is asked for.
    #[cfg(not(feature = "telemetry"))]
    pub fn start(
        _server: &str,
        _tokenizer: &str,
        otlp: Option<OtlpConfig>,
        prometheus: bool,
        _var: &dyn Fn(&str) -> Option<String>,
        _say: Box<dyn Fn(String) + Send + Sync>,
    ) -> Result<Telemetry, TelemetryError> {
        match otlp.is_some() || prometheus {
            true => Err(TelemetryError::NotBuilt),
            false => Ok(Telemetry::off()),
        }
    }

    /// Telemetry for the proxy of `server`: OTLP to `otlp` when given, Prometheus text when
    /// `prometheus`; `say` hears of lost data, once (header values already redacted).
    #[cfg(feature = "telemetry")]
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
            labels: Labels::default(),
        })
    }

    /// Whether anything is recorded (else requests cost nothing here).
    pub fn is_on(&self) -> bool {
        #[cfg(feature = "telemetry")]
        return self.otel.is_some() || self.prom.is_some();
        #[cfg(not(feature = "telemetry"))]
        false
    }

    /// What the OTLP export is set to, in words (header values redacted).
    pub fn describe(&self) -> Option<String> {
        self.otlp.as_ref().map(OtlpConfig::describe)
    }

    /// The tools whose calls are labelled by name from now on: the upstream's list (given again
    /// when it changes) and the proxy's own; a call to any other name is labelled `unknown`.
    pub fn list_tools<'a>(&self, names: impl IntoIterator<Item = &'a str>) {
        self.labels.list_tools(names);
    }

    /// A request arrives: its span starts (a child of the `_meta` trace, if any).
    pub fn request(&self, request: Request) -> RequestSpan {
        #[cfg(feature = "telemetry")]
        if let Some(o) = &self.otel {
            return RequestSpan::start(&o.tracer, &self.server, request);
        }
        RequestSpan::unexported(request)
    }

    /// A request ended: nothing is recorded in a build without the `telemetry` feature.
    #[cfg(not(feature = "telemetry"))]
    pub fn finish(&self, _span: RequestSpan, _outcome: RequestEnd) {}

    /// A request ended: its span ends with what was measured, and its metrics are recorded.
    #[cfg(feature = "telemetry")]
    pub fn finish(&self, mut span: RequestSpan, outcome: RequestEnd) {
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
        let measure = self.measure(&span.request, outcome.error, outcome.result, duration_s);
        if let Some(o) = &self.otel {
            o.instruments.record(&measure);
        }
        if let Some(p) = &self.prom {
            p.record(&measure);
        }
    }

    /// A request as the metrics count it: its labels bounded (`labels.rs`).
    #[cfg(feature = "telemetry")]
    fn measure(
        &self,
        request: &Request,
        error: Option<(String, String)>,
        mut result: Option<ResultMeasure>,
        duration_s: f64,
    ) -> CallMeasure {
        let bounded = self.labels.bound(&Asked {
            method: request.method,
            tool: request.tool.as_deref(),
            client: request.client_name.as_deref().unwrap_or("unknown"),
            transport: request.network_transport,
            error: error.as_ref().map(|(k, _)| k.as_str()),
            result: result
                .as_ref()
                .map(|r| (r.strategy.as_str(), r.over_limit.as_slice())),
        });
        if bounded.first_series_fold {
            self.losses.series_capped(MAX_SERIES);
        }
        if let (Some(r), Some(strategy)) = (result.as_mut(), bounded.strategy) {
            r.strategy = strategy;
        }
        CallMeasure {
            method: request.method,
            server: self.server.clone(),
            tool: bounded.tool,
            client_name: bounded.client,
            network_transport: request.network_transport,
            error_type: bounded.error,
            duration_s,
            result,
            folded: bounded.folded,
        }
    }

    /// The metrics as OpenMetrics text, when Prometheus is served.
    pub fn prometheus_text(&self) -> Option<String> {
        #[cfg(feature = "telemetry")]
        return self.prom.as_ref().map(Prom::text);
        #[cfg(not(feature = "telemetry"))]
        None
    }

    /// Flush what is queued and stop the exporters, giving up after `within` (a collector
    /// that hangs must not hold the end of the proxy).
    #[cfg(not(feature = "telemetry"))]
    pub fn shutdown(&self, _within: Duration) {}

    /// Flush what is queued and stop the exporters, giving up after `within` (a collector
    /// that hangs must not hold the end of the proxy).
    #[cfg(feature = "telemetry")]
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

#[cfg(all(test, feature = "telemetry"))]
mod tests {
    use super::*;

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
                RequestEnd {
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
                    ..RequestEnd::default()
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
