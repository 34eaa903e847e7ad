//! `mcp-budget serve-capture DIR`: a recording served back as an MCP server on stdio.

use anyhow::Context;
use mcp_budget::wire::capture::{self, CaptureError, Recording};

use crate::app::cli::ServeCaptureArgs;
use crate::app::exit::Failure;

pub fn run(args: ServeCaptureArgs) -> anyhow::Result<()> {
    let mut replay = match Recording::load(&args.dir, args.server.as_deref()) {
        Ok(r) => r,
        Err(e @ CaptureError::ServerRequired { .. }) => {
            crate::app::printer::warn(&format!("error: {e} with --server NAME"));
            return Err(Failure::Reported.into());
        }
        Err(e) => {
            crate::app::printer::warn(&format!("error: {e}"));
            return Err(Failure::Reported.into());
        }
    };
    let served = super::runtime()?.block_on(capture::serve(
        &mut replay,
        tokio::io::stdin(),
        tokio::io::stdout(),
    ));
    match served {
        // the client went away: the session is over
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("failed to serve the recording"),
    }
}
