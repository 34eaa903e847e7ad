//! The OTLP side: a tracer whose ended spans go through the bounded queue (`queue.rs`) to the
//! OTLP/HTTP span exporter, and a meter whose instruments a periodic reader exports with the
//! OTLP/HTTP metric exporter (cumulative, every 10 s, on its own thread). Both exporters are the
//! OpenTelemetry SDK's, sending with our blocking client (`http.rs`); a failed metric export is
//! counted and said once.

use std::sync::Arc;
use std::time::Duration;

use opentelemetry::metrics::{Counter, Histogram, Meter, MeterProvider as _};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry::KeyValue;
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider, Temporality};
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider, SpanExporter as _};
use opentelemetry_sdk::Resource;

use super::config::{OtlpConfig, TelemetryError};
use super::http::{Blocking, Cause};
use super::names::*;
use super::queue::{Losses, QueueProcessor};
use super::CallMeasure;

/// How often the metrics are exported.
const METRICS_EVERY: Duration = Duration::from_secs(10);

/// The resource every span and metric carries: `service.name` from `OTEL_SERVICE_NAME` or
/// `OTEL_RESOURCE_ATTRIBUTES` (the SDK's detectors), else `mcp-budget`; and the version.
pub fn resource(var: &dyn Fn(&str) -> Option<String>) -> Resource {
    let named = var("OTEL_SERVICE_NAME").is_some_and(|v| !v.trim().is_empty())
        || var("OTEL_RESOURCE_ATTRIBUTES").is_some_and(|v| v.contains("service.name="));
    let mut b = Resource::builder();
    if !named {
        b = b.with_service_name("mcp-budget");
    }
    b.with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
        .build()
}

fn headers(config: &OtlpConfig) -> std::collections::HashMap<String, String> {
    config.headers.iter().cloned().collect()
}

/// The tracer provider: spans through the bounded queue to `config.traces_endpoint`.
pub fn tracer_provider(
    config: &OtlpConfig,
    resource: &Resource,
    losses: Arc<Losses>,
) -> Result<SdkTracerProvider, TelemetryError> {
    let client = Blocking::new(config.timeout).map_err(|message| TelemetryError::Build {
        signal: "span",
        message,
    })?;
    let cause = client.cause();
    let mut exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(client)
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(&config.traces_endpoint)
        .with_timeout(config.timeout)
        .with_headers(headers(config))
        .build()
        .map_err(|e| TelemetryError::Build {
            signal: "span",
            message: config.redact(&e.to_string()),
        })?;
    exporter.set_resource(resource);
    Ok(SdkTracerProvider::builder()
        .with_resource(resource.clone())
        .with_span_processor(QueueProcessor::start(exporter, losses, cause))
        .build())
}

/// A metric exporter that counts its failed exports.
#[derive(Debug)]
struct Counted<E> {
    inner: E,
    losses: Arc<Losses>,
    cause: Cause,
}

impl<E: PushMetricExporter> PushMetricExporter for Counted<E> {
    async fn export(&self, metrics: &ResourceMetrics) -> OTelSdkResult {
        let done = self.inner.export(metrics).await;
        if let Err(e) = &done {
            self.losses.metrics_lost(&format!(
                "an export of the metrics failed ({e}{})",
                self.cause.take()
            ));
        }
        done
    }
    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }
    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }
    fn temporality(&self) -> Temporality {
        self.inner.temporality()
    }
}

/// The meter provider: cumulative metrics to `config.metrics_endpoint` every
/// [`METRICS_EVERY`] (and at shutdown).
pub fn meter_provider(
    config: &OtlpConfig,
    resource: &Resource,
    losses: Arc<Losses>,
) -> Result<SdkMeterProvider, TelemetryError> {
    let client = Blocking::new(config.timeout).map_err(|message| TelemetryError::Build {
        signal: "metric",
        message,
    })?;
    let cause = client.cause();
    let exporter = opentelemetry_otlp::MetricExporter::builder()
        .with_http()
        .with_http_client(client)
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(&config.metrics_endpoint)
        .with_timeout(config.timeout)
        .with_headers(headers(config))
        .with_temporality(Temporality::Cumulative)
        .build()
        .map_err(|e| TelemetryError::Build {
            signal: "metric",
            message: config.redact(&e.to_string()),
        })?;
    let reader = PeriodicReader::builder(Counted {
        inner: exporter,
        losses,
        cause,
    })
    .with_interval(METRICS_EVERY)
    .build();
    Ok(SdkMeterProvider::builder()
        .with_resource(resource.clone())
        .with_reader(reader)
        .build())
}

/// The proxy's instruments.
pub struct Instruments {
    duration: Histogram<f64>,
    raw_tokens: Histogram<u64>,
    budgeted_tokens: Histogram<u64>,
    engine: Histogram<f64>,
    spills: Counter<u64>,
    over_limit: Counter<u64>,
    folded: Counter<u64>,
}

impl Instruments {
    pub fn new(meter: &Meter) -> Instruments {
        let tokens = |name: &'static str, what: &'static str| {
            meter
                .u64_histogram(name)
                .with_unit("{token}")
                .with_description(what)
                .with_boundaries(TOKEN_BUCKETS.to_vec())
                .build()
        };
        Instruments {
            duration: meter
                .f64_histogram(M_OPERATION_DURATION)
                .with_unit("s")
                .with_description("MCP request duration at the proxy")
                .with_boundaries(DURATION_BUCKETS.to_vec())
                .build(),
            raw_tokens: tokens(
                M_RAW_TOKENS,
                "Tokens of each tool result as the upstream sent it",
            ),
            budgeted_tokens: tokens(
                M_BUDGETED_TOKENS,
                "Tokens of each tool result as the client got it, after the budget engine",
            ),
            engine: meter
                .f64_histogram(M_ENGINE_DURATION)
                .with_unit("s")
                .with_description("Time the budget engine took on each result")
                .with_boundaries(ENGINE_BUCKETS.to_vec())
                .build(),
            spills: meter
                .u64_counter(M_SPILLS)
                .with_description("Results whose original was spilled to disk")
                .build(),
            over_limit: meter
                .u64_counter(M_OVER_LIMIT)
                .with_description("Results whose raw size breaks a --client profile's own limit")
                .build(),
            folded: meter
                .u64_counter(M_FOLDED)
                .with_description("Requests counted under a folded label (unknown, other)")
                .build(),
        }
    }

    /// Record one request.
    pub fn record(&self, m: &CallMeasure) {
        let mut op = vec![
            KeyValue::new(MCP_METHOD, m.method),
            KeyValue::new(SERVER, m.server.clone()),
            KeyValue::new(CLIENT_NAME, m.client_name.clone()),
            KeyValue::new(NETWORK_TRANSPORT, m.network_transport),
        ];
        if let Some(t) = &m.tool {
            op.push(KeyValue::new(TOOL_NAME, t.clone()));
        }
        if let Some(e) = &m.error_type {
            op.push(KeyValue::new(ERROR_TYPE, e.clone()));
        }
        self.duration.record(m.duration_s, &op);
        for fold in &m.folded {
            self.folded.add(
                1,
                &[
                    KeyValue::new(SERVER, m.server.clone()),
                    KeyValue::new(FOLD_REASON, fold.name()),
                ],
            );
        }
        let (Some(tool), Some(r)) = (&m.tool, &m.result) else {
            return;
        };
        let labels = [
            KeyValue::new(SERVER, m.server.clone()),
            KeyValue::new(TOOL_NAME, tool.clone()),
            KeyValue::new(CLIENT_NAME, m.client_name.clone()),
            KeyValue::new(STRATEGY, r.strategy.clone()),
        ];
        self.raw_tokens.record(r.raw_tokens as u64, &labels);
        self.budgeted_tokens
            .record(r.budgeted_tokens as u64, &labels);
        self.engine.record(r.engine_s, &labels);
        if r.spilled {
            self.spills.add(1, &labels);
        }
        for profile in &r.over_limit {
            self.over_limit.add(
                1,
                &[
                    KeyValue::new(SERVER, m.server.clone()),
                    KeyValue::new(TOOL_NAME, tool.clone()),
                    KeyValue::new(OVER_LIMIT_CLIENT, profile.clone()),
                ],
            );
        }
    }
}

/// The OTLP pipeline: the providers (kept to flush and shut down), the tracer and instruments.
pub struct Otel {
    pub tracer_provider: SdkTracerProvider,
    pub meter_provider: SdkMeterProvider,
    pub tracer: SdkTracer,
    pub instruments: Instruments,
}

impl Otel {
    pub fn start(
        config: &OtlpConfig,
        var: &dyn Fn(&str) -> Option<String>,
        losses: Arc<Losses>,
    ) -> Result<Otel, TelemetryError> {
        let resource = resource(var);
        let tracer_provider = tracer_provider(config, &resource, losses.clone())?;
        let meter_provider = meter_provider(config, &resource, losses)?;
        let tracer = tracer_provider.tracer("mcp-budget");
        let instruments = Instruments::new(&meter_provider.meter("mcp-budget"));
        Ok(Otel {
            tracer_provider,
            meter_provider,
            tracer,
            instruments,
        })
    }
}
