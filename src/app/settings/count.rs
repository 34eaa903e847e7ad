//! `count`'s settings: the tokenizers, the first primary.

use mcp_budget::ground::tokens::TokenizerSet;

use crate::app::cli::CountArgs;

/// What `count` runs with.
pub struct CountSettings {
    pub tokenizers: TokenizerSet,
}

impl CountSettings {
    pub fn resolve(args: &CountArgs) -> anyhow::Result<CountSettings> {
        Ok(CountSettings {
            tokenizers: TokenizerSet::new(args.tokenizer.0.clone()),
        })
    }
}
