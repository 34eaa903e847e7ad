//! `replay`'s settings: the engine from its flags, tightened to the `--client` list.

use mcp_budget::budget::Engine;

use crate::cli::ReplayArgs;

/// What `replay` runs with.
pub struct Replay {
    pub engine: Engine,
}

impl Replay {
    pub fn resolve(args: &ReplayArgs) -> anyhow::Result<Replay> {
        let (engine, _) = super::client_engine(&args.engine, args.tokenizer, args.client.as_ref())?;
        Ok(Replay { engine })
    }
}
