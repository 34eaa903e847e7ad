//! The metrics as Prometheus scrapes them (`/metrics` on `proxy --listen`, or
//! `--metrics-listen`): OpenMetrics text written by the Prometheus project's Rust client, under
//! the names an OpenTelemetry collector would give the OTLP metrics (`.` as `_`, the unit as a
//! suffix), so one dashboard reads either.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};

use super::names::{DURATION_BUCKETS, ENGINE_BUCKETS, TOKEN_BUCKETS};
use super::CallMeasure;

/// The labels of a result's numbers.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    mcp_budget_server: String,
    gen_ai_tool_name: String,
    mcp_budget_client_name: String,
    mcp_budget_strategy: String,
}

/// The labels of a request's duration (the conventions' attributes, and ours).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OperationLabels {
    mcp_method_name: String,
    gen_ai_tool_name: Option<String>,
    error_type: Option<String>,
    mcp_budget_server: String,
    mcp_budget_client_name: String,
    network_transport: String,
}

/// The labels of a count by a client profile.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ProfileLabels {
    mcp_budget_server: String,
    gen_ai_tool_name: String,
    mcp_budget_client_profile: String,
}

/// The labels of the fold counter.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FoldLabels {
    mcp_budget_server: String,
    mcp_budget_fold_reason: &'static str,
}

type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

/// The registry and its families.
pub struct Prom {
    registry: Registry,
    raw_tokens: Histograms<ResultLabels>,
    budgeted_tokens: Histograms<ResultLabels>,
    engine: Histograms<ResultLabels>,
    duration: Histograms<OperationLabels>,
    raw_max: Family<ResultLabels, Gauge>,
    spills: Family<ResultLabels, Counter>,
    over_limit: Family<ProfileLabels, Counter>,
    folded: Family<FoldLabels, Counter>,
}

fn tokens() -> Histogram {
    Histogram::new(TOKEN_BUCKETS)
}
fn engine_seconds() -> Histogram {
    Histogram::new(ENGINE_BUCKETS)
}
fn seconds() -> Histogram {
    Histogram::new(DURATION_BUCKETS)
}

impl Prom {
    pub fn new() -> Prom {
        let mut registry = Registry::default();
        let raw_tokens: Histograms<ResultLabels> = Family::new_with_constructor(tokens);
        let budgeted_tokens: Histograms<ResultLabels> = Family::new_with_constructor(tokens);
        let engine: Histograms<ResultLabels> = Family::new_with_constructor(engine_seconds);
        let duration: Histograms<OperationLabels> = Family::new_with_constructor(seconds);
        let raw_max = Family::<ResultLabels, Gauge>::default();
        let spills = Family::<ResultLabels, Counter>::default();
        let over_limit = Family::<ProfileLabels, Counter>::default();
        let folded = Family::<FoldLabels, Counter>::default();
        registry.register(
            "mcp_budget_result_raw_tokens",
            "Tokens of each tool result as the upstream sent it (the budget's tokenizer)",
            raw_tokens.clone(),
        );
        registry.register(
            "mcp_budget_result_budgeted_tokens",
            "Tokens of each tool result as the client got it, after the budget engine",
            budgeted_tokens.clone(),
        );
        registry.register(
            "mcp_budget_result_raw_tokens_max",
            "The largest tool result as the upstream sent it, in tokens, since the proxy started",
            raw_max.clone(),
        );
        registry.register_with_unit(
            "mcp_budget_engine_duration",
            "Time the budget engine took on each result",
            Unit::Seconds,
            engine.clone(),
        );
        registry.register_with_unit(
            "mcp_server_operation_duration",
            "MCP request duration at the proxy (OpenTelemetry's mcp.server.operation.duration)",
            Unit::Seconds,
            duration.clone(),
        );
        registry.register(
            "mcp_budget_spills",
            "Results whose original was spilled to disk (a preview and a handle sent instead)",
            spills.clone(),
        );
        registry.register(
            "mcp_budget_over_client_limit",
            "Results whose raw size breaks a --client profile's own limit (the client would have cut, filed or refused it)",
            over_limit.clone(),
        );
        registry.register(
            "mcp_budget_labels_folded",
            "Requests counted under a folded label: a tool the upstream did not list (unknown), a client name past the cap, or labels past the cap of series (other)",
            folded.clone(),
        );
        Prom {
            registry,
            raw_tokens,
            budgeted_tokens,
            engine,
            duration,
            raw_max,
            spills,
            over_limit,
            folded,
        }
    }

    /// Count one request.
    pub fn record(&self, m: &CallMeasure) {
        let op = OperationLabels {
            mcp_method_name: m.method.to_string(),
            gen_ai_tool_name: m.tool.clone(),
            error_type: m.error_type.clone(),
            mcp_budget_server: m.server.clone(),
            mcp_budget_client_name: m.client_name.clone(),
            network_transport: m.network_transport.to_string(),
        };
        self.duration.get_or_create(&op).observe(m.duration_s);
        for fold in &m.folded {
            self.folded
                .get_or_create(&FoldLabels {
                    mcp_budget_server: m.server.clone(),
                    mcp_budget_fold_reason: fold.name(),
                })
                .inc();
        }
        let (Some(tool), Some(r)) = (&m.tool, &m.result) else {
            return;
        };
        let labels = ResultLabels {
            mcp_budget_server: m.server.clone(),
            gen_ai_tool_name: tool.clone(),
            mcp_budget_client_name: m.client_name.clone(),
            mcp_budget_strategy: r.strategy.clone(),
        };
        self.raw_tokens
            .get_or_create(&labels)
            .observe(r.raw_tokens as f64);
        self.budgeted_tokens
            .get_or_create(&labels)
            .observe(r.budgeted_tokens as f64);
        self.engine.get_or_create(&labels).observe(r.engine_s);
        // raised atomically: two calls at once never lower it, and no lock is taken
        self.raw_max
            .get_or_create(&labels)
            .inner()
            .fetch_max(r.raw_tokens as i64, std::sync::atomic::Ordering::Relaxed);
        if r.spilled {
            self.spills.get_or_create(&labels).inc();
        }
        for profile in &r.over_limit {
            self.over_limit
                .get_or_create(&ProfileLabels {
                    mcp_budget_server: m.server.clone(),
                    gen_ai_tool_name: tool.clone(),
                    mcp_budget_client_profile: profile.clone(),
                })
                .inc();
        }
    }

    /// The OpenMetrics text (ends with `# EOF`).
    pub fn text(&self) -> String {
        let mut out = String::new();
        // writing to a String cannot fail
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

impl Default for Prom {
    fn default() -> Self {
        Prom::new()
    }
}
