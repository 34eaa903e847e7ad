//! The model family a client's model belongs to, and the tokenizer its counts are made in:
//! exact where an offline tokenizer of that family exists (o200k_base for OpenAI's GPT-4.1 and
//! GPT-5 models), an estimate otherwise (Claude has no public tokenizer; Gemini's and Qwen's
//! are not built in), named so every client row says which family its count is in.

use serde::{Deserialize, Serialize};

use super::{ClientProfile, Sourced};
use crate::ground::tokens::Tokenizer;

/// A client's model family and the tokenizer mcp-budget counts its view in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ModelRule {
    /// The family ("OpenAI GPT-5", "Claude", "Gemini"), and how it was chosen.
    pub family: String,
    /// A tokenizer mcp-budget has (`o200k_base`, `cl100k_base`, `claude-estimate`).
    pub tokenizer: String,
    /// The tokenizer is the family's own, so counts in it are the model's exactly.
    pub exact: bool,
    #[serde(flatten)]
    pub sourced: Sourced,
}

impl ClientProfile {
    /// The tokenizer of the client's model family, when its profile names one mcp-budget has.
    pub fn model_tokenizer(&self) -> Option<Tokenizer> {
        self.model.as_ref()?.tokenizer.parse().ok()
    }
}
