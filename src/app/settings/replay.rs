//! `replay`'s settings: the engine from its flags, tightened to the `--client` list.

use mcp_budget::budget::Engine;

use crate::app::cli::ReplayArgs;

/// What `replay` runs with.
pub struct Replay {
    pub engine: Engine,
}

impl Replay {
    pub fn resolve(args: &ReplayArgs) -> anyhow::Result<Replay> {
        let (engine, _) = super::client_engine(&args.engine, args.tokenizer, args.client.as_ref())?;
        Ok(Replay { engine })
    }

    /// The engine at the budget alone, whatever `--client` says (`--compare` holds each
    /// client's limits in that client's own row).
    pub fn plain_engine(args: &ReplayArgs) -> anyhow::Result<Engine> {
        Ok(super::client_engine(&args.engine, args.tokenizer, None)?.0)
    }
}
