//! MCP client sessions to the servers being audited, with the exact bytes of every message kept.
//!
//! rmcp runs the protocol; below it, a line pump on each direction of the byte stream records
//! every JSON-RPC message as it was sent, drops non-JSON lines a server prints on stdout (with a
//! warning, as clients do), and lets measurement read each `result` as the server wrote it. A
//! session runs over any [`ServerIo`]; `crate::wire::connect` opens the one a server spec names.

mod client;
mod dropped;
mod error;
mod groups;
mod guard;
mod handshake;
mod http;
mod negotiate;
mod options;
mod pages;
mod process;
mod pump;
mod reauth;
mod replies;
mod request;
mod server_io;
mod session;
mod wire;

pub use client::{BoxFuture, Downstream};
pub use error::UpstreamError;
pub use groups::{end_all, GRACE};
pub use http::load_ca_file;
pub use options::{Protocol, SessionOptions, MODERN_VERSION};
pub use pages::{ListStop, Listed, PageWalker, MAX_PAGES};
#[cfg(feature = "lab")]
pub(crate) use process::stderr_summary;
pub use process::ChildEnv;
pub use request::{answer_or_cancel, CallOutcome, Forwarded};
pub use server_io::ServerIo;
pub use session::Session;
pub use wire::{Direction, Line, NotificationOrder, RawResponse, Wire, WireEvent};
