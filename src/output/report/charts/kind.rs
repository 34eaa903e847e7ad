//! Which charts a report has: their files and titles (known whether or not this build draws
//! them, the `charts` feature).

/// One chart of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChartKind {
    SchemaTax,
    TopTools,
    ProbeTokens,
    ProbeLatency,
    /// The tokens of every probe result that reach each client's model.
    ClientTokens,
}

impl ChartKind {
    pub const ALL: [ChartKind; 5] = [
        ChartKind::SchemaTax,
        ChartKind::TopTools,
        ChartKind::ProbeTokens,
        ChartKind::ProbeLatency,
        ChartKind::ClientTokens,
    ];

    /// The file name without its extension.
    pub fn file_stem(self) -> &'static str {
        match self {
            ChartKind::SchemaTax => "schema-tax",
            ChartKind::TopTools => "top-tools",
            ChartKind::ProbeTokens => "probe-tokens",
            ChartKind::ProbeLatency => "probe-latency",
            ChartKind::ClientTokens => "client-tokens",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            ChartKind::SchemaTax => "Schema tax per server",
            ChartKind::TopTools => "Most expensive tools (top 15)",
            ChartKind::ProbeTokens => "Probe results: raw vs budgeted tokens",
            ChartKind::ProbeLatency => "Probe latency: upstream call vs budget engine",
            ChartKind::ClientTokens => "Tokens that reach the model, per client: raw vs budgeted",
        }
    }
}
