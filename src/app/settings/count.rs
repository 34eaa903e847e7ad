//! `count`'s settings: the tokenizers, the first primary.

use mcp_budget::ground::tokens::TokenizerSet;

use crate::app::cli::CountArgs;

/// What `count` runs with.
pub struct Count {
    pub tokenizers: TokenizerSet,
}

impl Count {
    pub fn resolve(args: &CountArgs) -> anyhow::Result<Count> {
        Ok(Count {
            tokenizers: TokenizerSet::new(args.tokenizer.0.clone()),
        })
    }
}
