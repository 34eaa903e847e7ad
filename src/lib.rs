//! mcp-budget: measure what MCP servers cost an LLM in context tokens, and enforce a budget.
//!
//! The library is the whole tool except argument parsing and printing. Its modules by layer,
//! lowest first (a module imports its own layer and those below, never one above;
//! tests/it/architecture.rs checks the imports and that this list is the layer table's):
//!
//! 1. The ground: `text`, `atomic` (whole-or-nothing writes), `units`, `tokens` (exact counts),
//!    `calllog` (the proxy's log lines), `config` (client configs, probe files, trust, secrets)
//!    and `profiles` (what each client does with a result, as data).
//! 2. `facts`: the report's data model.
//! 3. `measure`: bytes and definitions into token numbers.
//! 4. `budget`: the engine that cuts a result to its budget and spills the rest.
//! 5. `assess`: findings, client views, limits and prices of a report.
//! 6. `report`: the writers (terminal, CSV, JSON, Markdown, HTML, charts).
//! 7. The wire and its judges: `upstream` (sessions with exact byte capture), `demo` (the
//!    embedded server), `capture` (recording a run and serving it back), `gate` (thresholds and
//!    baselines), `telemetry` (OTLP and Prometheus) and `auth` (OAuth sign-in).
//! 8. The verbs: `audit` (every server at once), `proxy` (the engine live), `connect` (one
//!    session from a spec), `lab` (real clients against a scripted model), `schemas` (the JSON
//!    Schemas of what is written) and `wrap` (client configs routed through the proxy).

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
