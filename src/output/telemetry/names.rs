//! The names telemetry ships under, in one place: the OpenTelemetry MCP semantic conventions'
//! (semantic-conventions v1.41.1, `docs/gen-ai/mcp.md`, Development status; moved since to
//! open-telemetry/semantic-conventions-genai, untagged), and our own in `mcp_budget.*` for
//! what the conventions lack. Never a name of ours inside `mcp.*`.

// the conventions' attributes
pub const MCP_METHOD: &str = "mcp.method.name";
pub const MCP_PROTOCOL_VERSION: &str = "mcp.protocol.version";
pub const MCP_SESSION_ID: &str = "mcp.session.id";
pub const MCP_RESOURCE_URI: &str = "mcp.resource.uri";
pub const TOOL_NAME: &str = "gen_ai.tool.name";
pub const OPERATION_NAME: &str = "gen_ai.operation.name";
pub const REQUEST_ID: &str = "jsonrpc.request.id";
pub const ERROR_TYPE: &str = "error.type";
pub const RPC_STATUS_CODE: &str = "rpc.response.status_code";
pub const NETWORK_TRANSPORT: &str = "network.transport";
pub const NETWORK_PROTOCOL: &str = "network.protocol.name";

// ours: what the conventions lack
pub const SERVER: &str = "mcp_budget.server";
pub const TOKENIZER: &str = "mcp_budget.tokenizer";
pub const RAW_TOKENS: &str = "mcp_budget.result.raw_tokens";
pub const BUDGETED_TOKENS: &str = "mcp_budget.result.budgeted_tokens";
pub const RAW_BYTES: &str = "mcp_budget.result.wire_bytes";
pub const STRATEGY: &str = "mcp_budget.strategy";
pub const SPILLED: &str = "mcp_budget.spilled";
pub const ENGINE_MS: &str = "mcp_budget.engine.duration_ms";
/// The caller as it names itself (`clientInfo` at `initialize`, or a 2026-07-28 request's
/// `_meta`): a label the client chose, not an identity.
pub const CLIENT_NAME: &str = "mcp_budget.client.name";
pub const CLIENT_VERSION: &str = "mcp_budget.client.version";
/// How the client reached the proxy (`stdio`, `http`).
pub const CLIENT_TRANSPORT: &str = "mcp_budget.client.transport";
/// A client profile whose own limit the raw result breaks (`--client`).
pub const OVER_LIMIT_CLIENT: &str = "mcp_budget.client.profile";
/// Why the metrics counted a request under a folded label (`unlisted_tool`, `client_names`,
/// `series`: `telemetry/labels.rs`).
pub const FOLD_REASON: &str = "mcp_budget.fold.reason";
/// The probe an audit gauge is of (`tool` and its arguments).
pub const PROBE: &str = "mcp_budget.probe";

// metrics (OpenTelemetry names; Prometheus gets them with `.` as `_` and its unit suffix)
pub const M_OPERATION_DURATION: &str = "mcp.server.operation.duration";
pub const M_RAW_TOKENS: &str = "mcp_budget.result.raw_tokens";
pub const M_BUDGETED_TOKENS: &str = "mcp_budget.result.budgeted_tokens";
pub const M_ENGINE_DURATION: &str = "mcp_budget.engine.duration";
pub const M_SPILLS: &str = "mcp_budget.spills";
pub const M_OVER_LIMIT: &str = "mcp_budget.over_client_limit";
pub const M_FOLDED: &str = "mcp_budget.labels.folded";

/// Result tokens, from a one-line answer to the largest scrapes (100 to 1M): a bucket per
/// step of about 2.5x, so p50 and p95 of each tool land in a bucket that tells 8k from 25k
/// (Claude Code's cap) and 100k from 250k.
pub const TOKEN_BUCKETS: [f64; 13] = [
    100.0,
    250.0,
    500.0,
    1_000.0,
    2_500.0,
    5_000.0,
    10_000.0,
    25_000.0,
    50_000.0,
    100_000.0,
    250_000.0,
    500_000.0,
    1_000_000.0,
];

/// The engine's time in seconds: 50 µs (a pass-through) to 5 s (a spill of a 100 MB text).
pub const ENGINE_BUCKETS: [f64; 12] = [
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.25, 1.0, 5.0,
];

/// A request's duration in seconds: the conventions' `ExplicitBucketBoundaries`.
pub const DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];
