//! `audit --otlp`: what one audit measured, exported once as OTLP metrics under the report's
//! names (gauges: each run is a point of a time series), then flushed.

use std::time::Duration;

use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::KeyValue;

use super::config::{OtlpConfig, TelemetryError};
use super::names::{self, SERVER, TOOL_NAME};
use super::otel::{meter_provider, resource};
use super::queue::Losses;
use crate::measure::facts::{Report, Status};

/// Export `report`'s numbers to `config`'s collector and flush them, within `within`; the
/// number of data points sent, or why not.
pub fn export_audit(
    report: &Report,
    config: &OtlpConfig,
    var: &dyn Fn(&str) -> Option<String>,
    within: Duration,
) -> Result<usize, TelemetryError> {
    let failed = std::sync::Arc::new(std::sync::Mutex::new(None::<String>));
    let seen = failed.clone();
    let losses = std::sync::Arc::new(Losses::new(Box::new(move |m: String| {
        *seen.lock().unwrap_or_else(|p| p.into_inner()) = Some(m);
    })));
    let provider = meter_provider(config, &resource(var), losses)?;
    let meter = provider.meter("mcp-budget-audit");
    let gauge = |name: &'static str, unit: &'static str, what: &'static str| {
        meter
            .u64_gauge(name)
            .with_unit(unit)
            .with_description(what)
            .build()
    };
    let schema = gauge(
        "mcp_budget.audit.schema_tokens",
        "{token}",
        "Schema tax per turn of a server's tools (model view), or of one tool",
    );
    let tools = gauge("mcp_budget.audit.tools", "{tool}", "Tools a server lists");
    let raw = gauge(
        "mcp_budget.audit.probe.raw_tokens",
        "{token}",
        "Tokens of a probe's result as the server sent it",
    );
    let budgeted = gauge(
        "mcp_budget.audit.probe.budgeted_tokens",
        "{token}",
        "Tokens of a probe's result after the budget engine",
    );
    let client_schema = gauge(
        "mcp_budget.audit.client.schema_tokens",
        "{token}",
        "What a client sends per turn of a server's definitions",
    );
    let client_result = gauge(
        "mcp_budget.audit.client.result_tokens",
        "{token}",
        "What reaches a client's model of a probe's result, as sent",
    );
    let mut points = 0;
    for s in report.servers.iter().filter(|s| s.status == Status::Ok) {
        let server = KeyValue::new(SERVER, s.name.clone());
        schema.record(
            s.tools_list.model_tokens as u64,
            std::slice::from_ref(&server),
        );
        tools.record(
            s.tools_list.tool_count as u64,
            std::slice::from_ref(&server),
        );
        points += 2;
        for t in &s.tools {
            let tool = [server.clone(), KeyValue::new(TOOL_NAME, t.name.clone())];
            schema.record(t.model_tokens as u64, &tool);
            points += 1;
        }
        for c in &s.clients {
            let labels = [
                server.clone(),
                KeyValue::new(names::OVER_LIMIT_CLIENT, c.client.clone()),
            ];
            client_schema.record(c.schema_tokens_per_turn as u64, &labels);
            points += 1;
        }
        for p in &s.probes {
            let probe = [
                server.clone(),
                KeyValue::new(TOOL_NAME, p.tool.clone()),
                KeyValue::new(names::PROBE, p.name()),
            ];
            if let Some(r) = &p.raw {
                raw.record(r.model_tokens as u64, &probe);
                points += 1;
            }
            if let Some(b) = &p.budgeted {
                budgeted.record(b.tokens as u64, &probe);
                points += 1;
            }
            for c in &p.clients {
                let mut labels = probe.to_vec();
                labels.push(KeyValue::new(names::OVER_LIMIT_CLIENT, c.client.clone()));
                client_result.record(c.raw.tokens_to_model as u64, &labels);
                points += 1;
            }
        }
    }
    // the shutdown collects and exports once (a flush before it would send every point twice)
    let flushed = provider.shutdown_with_timeout(within);
    if let Some(why) = failed.lock().unwrap_or_else(|p| p.into_inner()).take() {
        return Err(TelemetryError::Build {
            signal: "audit metric",
            message: config.redact(&why),
        });
    }
    flushed.map_err(|e| TelemetryError::Build {
        signal: "audit metric",
        message: config.redact(&e.to_string()),
    })?;
    Ok(points)
}
