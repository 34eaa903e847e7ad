//! mcp-budget: measure what MCP servers cost an LLM in context tokens, and enforce a budget.
//!
//! The library is the whole tool except argument parsing and printing (the binary's `app`).
//! Its parts by layer, lowest first (a part imports its own layer and those below, never one
//! above; tests/it/architecture.rs checks the imports and that this list is the layer table's):
//!
//! 1. `ground`: text, whole-or-nothing writes (`atomic`), units, exact token counts (`tokens`)
//!    and the proxy's log lines (`calllog`).
//! 2. `config`: client configs, probe files, trust, secrets, and the client profiles
//!    (`config::profiles`: what each client does with a result, as data).
//! 3. `measure`: bytes and definitions into token numbers, and the report's data model
//!    (`measure::facts`), which only it fills.
//! 4. `budget`: the engine that cuts a result to its budget and spills the rest.
//! 5. `wire`: upstream sessions with exact byte capture (`upstream`), one session from a spec
//!    (`connect`), OAuth sign-in (`auth`), recording a run and serving it back (`capture`) and
//!    the embedded demo server (`demo`).
//! 6. `judge`: findings, client views, limits and prices (`assess`), and the gate's thresholds,
//!    baselines and verdict (`gate`).
//! 7. `output`: the report's writers (terminal, CSV, JSON, Markdown, HTML, charts), the gate's
//!    writers and telemetry (OTLP and Prometheus).
//! 8. The verbs: `run` (`audit` every server at once, `proxy` the engine live, `wrap` client
//!    configs through the proxy) and `lab` (real clients against a scripted model).
//! 9. `schemas`: the JSON Schemas of what is written.

pub mod budget;
pub mod config;
pub mod ground;
pub mod judge;
pub mod lab;
pub mod measure;
pub mod output;
pub mod run;
pub mod schemas;
pub mod wire;
