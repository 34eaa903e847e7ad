//! MCP client sessions to the servers being audited, with the exact bytes of every message kept.
//!
//! rmcp runs the protocol; below it, a line pump on each direction of the byte stream records
//! every JSON-RPC message as it was sent, drops non-JSON lines a server prints on stdout (with a
//! warning, as clients do), and lets measurement read each `result` as the server wrote it.

mod capture;
mod client;
mod error;
mod guard;
mod http;
mod pages;
mod process;
mod pump;
mod session;

pub use capture::{Capture, CaptureEvent, Direction, NotificationOrder, RawResponse};
pub use client::{BoxFuture, Downstream};
pub use error::UpstreamError;
pub use http::load_ca_file;
pub use pages::{ListStop, Listed, PageWalker, MAX_PAGES};
pub use session::{answer_or_cancel, CallOutcome, Forwarded, Session, SessionOptions};
