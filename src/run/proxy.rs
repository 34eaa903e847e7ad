//! The proxy: an MCP server (rmcp) in front of one upstream server. The client sees the
//! upstream's tools under their own names and schemas (filtered by `--allow`/`--deny`), every
//! tool result goes through the budget engine, and one added tool, `mcp_budget_read`, pages
//! through what the engine spilled. Spills are also listed and readable as resources.

mod clients;
mod filter;
mod forward;
mod guard;
mod handler;
mod http;
mod lazy;
mod locked;
mod metrics;
mod notify;
mod options;
mod own;
mod read;
mod relay;
mod reply;
mod server;
mod startup;
mod state;
mod tools;
mod trace;
mod upstream;
mod warnings;

pub use filter::{GlobError, ToolFilter};
pub use guard::{
    ConnectionLimits, DEFAULT_BODY_TIMEOUT_SECS, DEFAULT_HEADER_TIMEOUT_SECS,
    DEFAULT_MAX_CONNECTIONS,
};
pub use http::{listen, ListenOptions, DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_SECS};
pub use lazy::{Catalog, ToolIndex, CALL_TOOL, FIND_TOOL};
pub use metrics::{listen_metrics, OPENMETRICS};
pub use options::ProxyOptions;
pub use read::{read, read_tool_definition, read_within, ReadArgs, ReadError, READ_TOOL};
pub use reply::MAX_ECHO_CHARS;
pub use server::{Proxy, ProxyStartError};
pub use startup::{LeanSaving, Startup};
