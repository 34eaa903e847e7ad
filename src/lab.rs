//! `mcp-budget lab`: real coding clients run headless against a scripted model on 127.0.0.1,
//! and what each one sends its model measured from its own requests: the tool definitions per
//! turn, and what reached the model of each probe's result.
//!
//! `model/` is the fake model (four wire APIs); `adapter.rs` reads a client's adapter (a data
//! file per client, `clients/*.toml`); `find.rs` finds its executable and version;
//! `isolate.rs` keeps the process on loopback; `run.rs` runs a client once; `tap.rs` is the
//! MCP server's tap (`era.rs` reads the protocol era a client spoke from it); `delivered.rs`, `probe.rs` (with `found.rs`) and `definitions.rs` read
//! what was sent; `runner.rs` runs the clients on the servers; `report.rs` holds what it found;
//! `audit.rs` puts it into an audit's report (`audit --client measured`).

mod adapter;
mod audit;
mod compare;
mod definitions;
mod delivered;
mod derive;
mod era;
mod error;
mod find;
mod found;
mod isolate;
pub mod model;
mod probe;
mod profile;
mod reap;
mod report;
mod run;
mod runner;
pub mod shape_server;
mod shapes;
mod table;
pub mod tap;

pub use adapter::Adapter;
pub use audit::merge as merge_into_report;
pub use definitions::{Definitions, Form};
pub use derive::ShapeRule;
pub use era::ClientEra;
pub use error::LabError;
pub use find::{installed_version, npm_folders};
pub use isolate::{loopback_only, Isolation};
pub use probe::Modelled;
pub use probe::{Delivery, ProbeOutcome, SavedFile, Sent, Sizes};
pub use report::{
    stale_profile, ClientReport, ClientStatus, LabReport, LabServerReport, LAB_SCHEMA_VERSION,
};
pub use runner::{run_lab, LabOptions, LabProbe, LabServer};
pub use shapes::Shape;
pub use table::render;
