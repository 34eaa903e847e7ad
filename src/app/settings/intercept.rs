//! `intercept`'s settings: the engine from its flags, tightened to the `--client` list.

use mcp_budget::budget::Engine;

use crate::app::cli::InterceptArgs;

/// What `intercept` runs with.
pub struct Intercept {
    pub engine: Engine,
}

impl Intercept {
    pub fn resolve(args: &InterceptArgs) -> anyhow::Result<Intercept> {
        let (engine, _) = super::client_engine(&args.engine, args.tokenizer, args.client.as_ref())?;
        Ok(Intercept { engine })
    }
}
