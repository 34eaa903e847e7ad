//! The embedded demo MCP server: a dozen realistic tools over three tools/list pages whose
//! deterministic payloads reproduce the shapes that hurt in practice (a 200k-token scrape with
//! data-URI images and tracking URLs, a browser accessibility snapshot, minified GitHub JSON, a
//! file as an embedded resource, an image, structuredContent duplicated in text, a well-behaved
//! paginated list). It needs no network, so `audit probes/demo.toml` runs anywhere.

pub mod payloads;
mod server;
mod tools;

pub use server::{from_json, DemoServer};
pub use tools::{tool_definitions, TOOLS_PAGE_SIZE};

/// The demo probe file, embedded so an installed binary can audit the demo anywhere.
pub const DEMO_PROBES: &str = include_str!("../../probes/demo.toml");
