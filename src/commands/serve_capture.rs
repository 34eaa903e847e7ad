//! `mcp-budget serve-capture DIR`: a recording served back as an MCP server on stdio.

use anyhow::Context;
use mcp_budget::capture::{self, CaptureError, Recording};

use crate::cli::ServeCaptureArgs;
use crate::exit::Failure;

pub fn run(args: ServeCaptureArgs) -> anyhow::Result<()> {
    let mut replay = match Recording::load(&args.dir, args.server.as_deref()) {
        Ok(r) => r,
        Err(e @ CaptureError::ServerRequired { .. }) => {
            crate::printer::warn(&format!("error: {e} with --server NAME"));
            return Err(Failure::Reported.into());
        }
        Err(e) => {
            crate::printer::warn(&format!("error: {e}"));
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
