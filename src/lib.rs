//! mcp-budget: measure what MCP servers cost an LLM in context tokens, and enforce a budget.
//!
//! The API others can use is small: [`Tokenizer`] counts a text exactly as tiktoken does
//! (cl100k_base, o200k_base), and [`budget`] cuts a tool result to a token budget (the
//! [`budget::Engine`], its [`budget::Policy`] and [`budget::SpillStore`]); each has a
//! checked example. The other parts are public only because the binary and the integration
//! tests are crates of their own: they are left out of these docs and may change in any
//! release.
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
#[doc(hidden)]
pub mod config;
pub mod ground;
#[doc(hidden)]
pub mod judge;
#[cfg(feature = "lab")]
#[doc(hidden)]
pub mod lab;
#[doc(hidden)]
pub mod measure;
#[doc(hidden)]
pub mod output;
#[doc(hidden)]
pub mod run;
#[doc(hidden)]
pub mod schemas;
#[doc(hidden)]
pub mod wire;

pub use ground::tokens::Tokenizer;
