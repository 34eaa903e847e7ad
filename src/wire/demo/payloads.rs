//! Deterministic payload generators for the embedded demo MCP server.
//!
//! The demo server lets `mcp-budget` show, offline, what real MCP tools cost in context
//! tokens. Every function here is pure: the same input yields the same bytes on every machine
//! (a splitmix64 PRNG seeded from an FNV-1a hash of the input; no OS randomness, no clock).
//! The payloads mimic the shapes that hurt in practice: scraped pages full of data-URI images,
//! signed CDN URLs and tracking links (`web`); deep accessibility snapshots (`snapshot`);
//! verbose GitHub REST bodies (`github`, `pulls`); whole source files and logs (`files`);
//! screenshot PNGs (`png`, drawn by `screen`); and small, well-behaved results to compare them
//! against (`lists`). `rng` and `words` hold the shared PRNG, text helpers and word lists.

mod files;
mod github;
mod lists;
mod png;
mod pulls;
mod rng;
mod screen;
mod snapshot;
mod web;
mod words;

pub use files::file_text;
pub use github::search_code;
pub use lists::{forecast, list_page};
pub use png::png_image;
pub use pulls::list_pull_requests;
pub use snapshot::accessibility_snapshot;
pub use web::scrape_markdown;
