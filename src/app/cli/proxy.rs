//! `proxy`'s flags: the upstream, the tools shown, serving over HTTP, telemetry and the log,
//! the budget engine and trust.

use std::path::PathBuf;

use mcp_budget::config::profiles::ClientList;
use mcp_budget::ground::tokens::Tokenizer;
use mcp_budget::wire::upstream::Protocol;

use super::{EngineArgs, TrustArgs};

#[derive(Debug, clap::Args)]
pub struct ProxyArgs {
    /// The upstream command and its arguments (after `--`)
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
    /// A remote upstream (streamable HTTP; with --sse the 2024-11-05 HTTP+SSE protocol)
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    #[arg(help_heading = "Upstream")]
    pub upstream_url: Option<String>,
    /// The remote upstream speaks legacy HTTP+SSE
    #[arg(long, requires = "upstream_url")]
    #[arg(help_heading = "Upstream")]
    pub sse: bool,
    /// A header for the remote upstream, `Name: value` (repeatable)
    #[arg(long = "header", value_name = "HEADER", requires = "upstream_url")]
    #[arg(help_heading = "Upstream")]
    pub headers: Vec<String>,
    /// A header for the remote upstream whose value is read from an environment variable,
    /// `Name: VAR` (repeatable): a token kept out of argv, which every local user sees in `ps`
    #[arg(long = "header-env", value_name = "HEADER", requires = "upstream_url")]
    #[arg(help_heading = "Upstream")]
    pub header_envs: Vec<String>,
    /// `Authorization: Bearer` with the token read from this environment variable (Codex's
    /// `bearer_token_env_var`, as `wrap` writes it)
    #[arg(long, value_name = "VAR", requires = "upstream_url")]
    #[arg(help_heading = "Upstream")]
    pub upstream_bearer_env: Option<String>,
    /// An upstream from a probe file or client config, by name
    #[arg(long, value_name = "NAME", conflicts_with_all = ["command", "upstream_url"])]
    #[arg(help_heading = "Upstream")]
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::app::cli::complete::servers))]
    pub server: Option<String>,
    /// Probe files or client configs to find --server in [default: discover client configs]
    #[arg(long = "config", value_name = "FILE")]
    #[arg(help_heading = "Upstream")]
    pub configs: Vec<PathBuf>,
    /// Show only tools matching one of these globs (repeatable)
    #[arg(long, value_name = "GLOB")]
    #[arg(help_heading = "Tools shown")]
    pub allow: Vec<String>,
    /// Hide tools matching these globs (repeatable; wins over --allow)
    #[arg(long, value_name = "GLOB")]
    #[arg(help_heading = "Tools shown")]
    pub deny: Vec<String>,
    /// Show two tools instead of the upstream's: mcp_budget_find_tools (search by what a tool
    /// does) and mcp_budget_call_tool (call any of them); --allow, --deny and the policy apply
    #[arg(long)]
    #[arg(help_heading = "Tools shown")]
    pub lazy_tools: bool,
    /// With --lazy-tools: also list the tools found, until SECS seconds after they were last
    /// found or called (clients that re-list on tools/list_changed get them as real tools)
    #[arg(long, value_name = "SECS", requires = "lazy_tools", value_parser = clap::value_parser!(u64).range(1..))]
    #[arg(help_heading = "Tools shown")]
    pub lazy_expose: Option<u64>,
    /// Show input schemas lean: $schema, $comment, titles that repeat names and null defaults
    /// removed (what a schema accepts does not change); the policy's lean_schemas does it per tool
    #[arg(long)]
    #[arg(help_heading = "Tools shown")]
    pub lean_schemas: bool,
    /// Export a span per request and the metrics over OTLP http/protobuf, to
    /// OTEL_EXPORTER_OTLP_ENDPOINT or else http://localhost:4318 (setting that variable alone
    /// switches it on; OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME and
    /// OTEL_RESOURCE_ATTRIBUTES are read too)
    #[arg(long)]
    #[arg(help_heading = "Telemetry and log")]
    pub otlp: bool,
    /// Serve the metrics for Prometheus at http://ADDR/metrics (a proxy on --listen serves them
    /// at its own address)
    #[arg(long, value_name = "ADDR")]
    #[arg(help_heading = "Telemetry and log")]
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// Append one JSON line per call to this file
    #[arg(long, env = "MCP_BUDGET_LOG", value_name = "FILE")]
    #[arg(help_heading = "Telemetry and log")]
    pub log: Option<PathBuf>,
    /// The upstream's name in spill files and the log [default: the server's name; for
    /// `-- COMMAND`, the package a launcher runs (`npx -y PKG`, `uvx PKG`: PKG), else the
    /// command's name]
    #[arg(long, value_name = "NAME")]
    #[arg(help_heading = "Telemetry and log")]
    pub name: Option<String>,
    /// Tokenizer the budget is counted in
    #[arg(long, default_value = "cl100k_base")]
    #[arg(help_heading = "Budget engine")]
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::app::cli::complete::tokenizer))]
    pub tokenizer: Tokenizer,
    /// The clients in front of the proxy, ids comma-separated (claude-code, codex, …) or `all`:
    /// the tightest of their limits in tokens, bytes, characters and lines tightens the budget,
    /// so no client cuts a result again
    #[arg(long, env = "MCP_BUDGET_CLIENT", value_name = "LIST")]
    #[arg(help_heading = "Budget engine")]
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::app::cli::complete::clients))]
    pub client: Option<ClientList>,
    /// Seconds the upstream has to start and answer `initialize`
    #[arg(long, default_value_t = 60, value_name = "SECS")]
    #[arg(help_heading = "Upstream")]
    pub timeout: u64,
    /// The era spoken to the upstream: `handshake-first` (`initialize`, and 2026-07-28 when
    /// the server refuses it), `legacy`, `2026-07-28` or `auto` (discover first). Clients of
    /// either era are served whatever this is.
    #[arg(
        long = "upstream-protocol",
        env = "MCP_BUDGET_UPSTREAM_PROTOCOL",
        value_name = "ERA",
        default_value = "handshake-first"
    )]
    #[arg(help_heading = "Upstream")]
    pub upstream_protocol: Protocol,
    /// Serve streamable HTTP on this address instead of stdio (e.g. 127.0.0.1:8931)
    #[arg(long, value_name = "ADDR")]
    #[arg(help_heading = "Serving over HTTP")]
    pub listen: Option<std::net::SocketAddr>,
    /// Require `Authorization: Bearer <token>` with the token read from this environment variable
    #[arg(long, value_name = "VAR")]
    #[arg(help_heading = "Serving over HTTP")]
    pub bearer_token_env: Option<String>,
    /// Accept this Host besides localhost and 127.0.0.1 (repeatable; for a non-loopback --listen)
    #[arg(long = "allow-host", value_name = "HOST", requires = "listen")]
    #[arg(help_heading = "Serving over HTTP")]
    pub allow_hosts: Vec<String>,
    /// Close an HTTP session after this many seconds without a message (its id then gets 404)
    #[arg(long, env = "MCP_BUDGET_SESSION_IDLE_SECS", value_name = "SECS", default_value_t = mcp_budget::run::proxy::DEFAULT_SESSION_IDLE_SECS, value_parser = clap::value_parser!(u64).range(1..))]
    #[arg(help_heading = "Serving over HTTP")]
    pub session_idle_secs: u64,
    /// HTTP sessions open at most; one more is refused with 503 and a JSON-RPC error
    #[arg(long, env = "MCP_BUDGET_MAX_SESSIONS", value_name = "N", default_value_t = mcp_budget::run::proxy::DEFAULT_MAX_SESSIONS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    #[arg(help_heading = "Serving over HTTP")]
    pub max_sessions: usize,
    /// HTTP connections open at once; more wait until one closes
    #[arg(long, env = "MCP_BUDGET_MAX_CONNECTIONS", value_name = "N", default_value_t = mcp_budget::run::proxy::DEFAULT_MAX_CONNECTIONS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    #[arg(help_heading = "Serving over HTTP")]
    pub max_connections: usize,
    /// Close an HTTP connection whose request headers are not all there within SECS (an idle
    /// kept-alive connection too)
    #[arg(long, env = "MCP_BUDGET_HEADER_TIMEOUT_SECS", value_name = "SECS", default_value_t = mcp_budget::run::proxy::DEFAULT_HEADER_TIMEOUT_SECS, value_parser = clap::value_parser!(u64).range(1..))]
    #[arg(help_heading = "Serving over HTTP")]
    pub header_timeout_secs: u64,
    /// Answer 408 to a request whose body is not all there within SECS of its headers
    #[arg(long, env = "MCP_BUDGET_BODY_TIMEOUT_SECS", value_name = "SECS", default_value_t = mcp_budget::run::proxy::DEFAULT_BODY_TIMEOUT_SECS, value_parser = clap::value_parser!(u64).range(1..))]
    #[arg(help_heading = "Serving over HTTP")]
    pub body_timeout_secs: u64,
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub trust: TrustArgs,
}
