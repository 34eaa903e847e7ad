//! What the proxy found at start-up, for its log line and the call log: the upstream's tools and
//! what the client is shown of them, their schema tax per turn, and what the lean schemas saved.

use crate::measure::LeanTransform;

/// What the proxy found at startup (for its log line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Startup {
    pub upstream_tools: usize,
    pub shown_tools: usize,
    /// Schema tokens per turn of the upstream's tools, and of what the client is shown.
    pub upstream_tokens: usize,
    pub shown_tokens: usize,
    /// What the hidden tools would have cost per turn, and what `mcp_budget_read` costs.
    pub hidden_tokens: usize,
    pub read_tool_tokens: usize,
    /// The client is shown the lazy find and call tools instead of the upstream's.
    pub lazy: bool,
    /// What `--lean-schemas` (or the policy's `lean_schemas`) saved, per transform.
    pub lean: Vec<LeanSaving>,
}

/// What the lean schemas saved, per transform, over the tools shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeanSaving {
    pub transform: LeanTransform,
    /// Keywords removed, and the tokens per turn that saved.
    pub removed: usize,
    pub tokens: usize,
}
