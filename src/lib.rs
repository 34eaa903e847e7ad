//! mcp-budget: measure what MCP servers cost an LLM in context tokens, and enforce a budget.
//!
//! The library is the whole tool except argument parsing and printing: `config` finds servers,
//! `connect` opens a session to one, `upstream` talks to them with exact byte capture, `measure`
//! turns bytes into token numbers, `budget` is the engine that cuts a result to its budget,
//! `audit` runs it all concurrently, `report` renders the results, `gate` judges them, `proxy`
//! runs the engine live and writes a `calllog`, `auth` signs in to servers that use OAuth, `demo` is the embedded server, `capture` records
//! a run and serves a recording back; `units`, `text`, `tokens` and `atomic` are the ground all
//! of them stand on. Imports run one way: docs/architecture.md has the layers, and
//! tests/it/architecture.rs checks them.

pub mod assess;
pub mod atomic;
pub mod audit;
pub mod auth;
pub mod budget;
pub mod calllog;
pub mod capture;
pub mod config;
pub mod connect;
pub mod demo;
pub mod facts;
pub mod gate;
pub mod lab;
pub mod measure;
pub mod profiles;
pub mod proxy;
pub mod report;
pub mod schemas;
pub mod telemetry;
pub mod text;
pub mod tokens;
pub mod units;
pub mod upstream;
pub mod wrap;
