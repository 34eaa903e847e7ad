//! mcp-budget: measure what MCP servers cost an LLM in context tokens, and enforce a budget.
//!
//! The library is the whole tool except argument parsing and printing: `config` finds servers,
//! `connect` opens a session to one, `upstream` talks to them with exact byte capture, `measure`
//! turns bytes into token numbers, `audit` runs it all concurrently, `report` renders the
//! results, `demo` is the embedded server, `capture` records a run and serves a recording back.

pub mod atomic;
pub mod audit;
pub mod budget;
pub mod calllog;
pub mod capture;
pub mod config;
pub mod connect;
pub mod demo;
pub mod gate;
pub mod measure;
pub mod proxy;
pub mod report;
pub mod text;
pub mod tokens;
pub mod units;
pub mod upstream;
