//! What a tool definition costs per turn, what the definition rules measured (each fix's
//! saving), and a server's schema score.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What one tool's definition costs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ToolCost {
    pub name: String,
    /// Compact `{"name","description","input_schema"}`: what the model receives every turn.
    pub model_tokens: usize,
    pub description_tokens: usize,
    /// The description's first line, trimmed, at most 200 characters: what a client that lists
    /// deferred tools one line each shows of it (empty: no description).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description_head: String,
    pub input_schema_tokens: usize,
    pub output_schema_tokens: usize,
    pub annotations_tokens: usize,
    pub title_tokens: usize,
    pub icons_tokens: usize,
    pub icons_bytes: usize,
    pub meta_tokens: usize,
    /// Fields a client does not show the model and that are none of the above (e.g. `execution`).
    pub other_tokens: usize,
    /// The tool's definition as it appeared in tools/list.
    pub wire_bytes: usize,
    pub wire_tokens: usize,
    pub read_only: bool,
    pub required_args: usize,
    /// Names of the input schema's top-level properties (for the design checks).
    #[serde(default)]
    pub input_params: Vec<String>,
    /// `data:` URIs (inline icons or images) inside the definition.
    #[serde(default)]
    pub data_uris: usize,
    /// `model_tokens` by the other tokenizers.
    #[serde(default)]
    pub by_tokenizer: BTreeMap<String, usize>,
    /// The numbers in the definition's `_meta` (e.g. `anthropic/maxResultSizeChars`, which
    /// raises Claude Code's spill threshold for this tool).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub meta_numbers: BTreeMap<String, u64>,
    /// What the definition rules found, each with the tokens its fix saves (measured by
    /// applying the fix and counting again).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub schema_lints: Vec<SchemaLint>,
    /// `model_tokens` with every fix of `schema_lints` applied together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed_model_tokens: Option<usize>,
    /// `model_tokens` with the policy `audit --suggest-policy` writes (lean schema, a long
    /// description cut at `description_cut_chars`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggested_model_tokens: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description_cut_chars: Option<usize>,
}

/// One definition rule's verdict on one tool, with its measured saving.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SchemaLint {
    pub rule: String,
    /// Tokens per turn the fix saves (primary tokenizer, the model view).
    pub saves_tokens: usize,
    /// Tokens on the wire the fix saves (what a client receives, whether or not the model sees
    /// it: `outputSchema`, icons).
    pub saves_wire_tokens: usize,
    pub message: String,
}

/// How lean a server's definitions are (see docs/findings.md, "Schema score").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SchemaScore {
    pub score: u8,
    pub grade: String,
    /// Schema tokens per turn, and what every definition fix together would save.
    pub schema_tokens: usize,
    pub recoverable_tokens: usize,
}

/// One parameter repeated across tools, and what each fix saves per turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SharedParameter {
    pub name: String,
    /// The property's schema, compact JSON (the same in every tool of the group).
    pub schema: String,
    /// The tools that take it, in list order.
    pub tools: Vec<String>,
    /// How many of them require it (a required parameter cannot be hidden).
    pub required_in: usize,
    /// Tokens per turn saved by taking it out of every tool's schema (the proxy's
    /// `hide_params`, which supplies its value from `fixed_arguments`); `None` when a tool
    /// requires it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hide_saves_tokens: Option<usize>,
    /// Tokens per turn saved by stating it once, in the server's instructions, instead of in
    /// every tool: the hide saving less the tokens of that one statement.
    pub state_once_saves_tokens: usize,
}

impl SharedParameter {
    /// What the better fix saves per turn: hiding it when no tool requires it (never less
    /// than stating it once), else stating it once.
    pub fn best_saving(&self) -> usize {
        self.hide_saves_tokens
            .unwrap_or(self.state_once_saves_tokens)
    }
}
