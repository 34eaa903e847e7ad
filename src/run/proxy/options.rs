//! How the proxy behaves: the options the binary resolves from its flags.

use std::sync::Arc;

use crate::budget::Engine;
use crate::config::profiles::ClientProfile;
use crate::ground::calllog::CallLog;
use crate::ground::tokens::Tokenizer;
use crate::output::telemetry::Telemetry;

/// How the proxy behaves.
#[derive(Debug, Clone)]
pub struct ProxyOptions {
    /// The upstream's name in spill files and the call log.
    pub server: String,
    /// Tools shown: all when empty, else those matching one of these globs.
    pub allow: Vec<String>,
    /// Tools hidden (wins over `allow`).
    pub deny: Vec<String>,
    pub engine: Arc<Engine>,
    /// Counts the log's raw and returned tokens and `mcp_budget_read` pages.
    pub tokenizer: Tokenizer,
    pub log: Option<Arc<CallLog>>,
    /// How clients reach the proxy, for the log (`stdio`).
    pub transport: String,
    /// Show the lazy find and call tools instead of the upstream's definitions.
    pub lazy_tools: bool,
    /// With lazy tools: also list the tools found, for this long after they were last found or
    /// called (a `tools/list_changed` is sent when the list changes).
    pub lazy_expose: Option<std::time::Duration>,
    /// Show every input schema lean (the policy's `lean_schemas` does it per tool).
    pub lean_schemas: bool,
    /// The `--client` profiles in front of the proxy: a raw result over one's own limit is
    /// counted for it (`mcp_budget.over_client_limit`).
    pub clients: Vec<&'static ClientProfile>,
    /// Spans and metrics of every request (off unless OTLP or Prometheus is asked for).
    pub telemetry: Arc<Telemetry>,
}
