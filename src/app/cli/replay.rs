//! `mcp-budget replay`'s arguments.

use std::path::PathBuf;

use mcp_budget::config::profiles::ClientList;
use mcp_budget::ground::tokens::Tokenizer;

use super::{EngineArgs, ListFormat};

#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// Payload files: a JSON-RPC response line, a bare tool result JSON, or any text file
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Tool name for policy lookup [default: from a `<server>__<tool>` file name, else the stem]
    #[arg(long)]
    pub tool: Option<String>,
    /// The tool has an `outputSchema`: a structuredContent repeating the text is kept, as in audit
    #[arg(long)]
    pub output_schema: bool,
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Engine passes per file; the median time is reported
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub runs: usize,
    /// Budget for these clients, ids comma-separated (claude-code, codex, …) or `all`: the
    /// tightest of their limits in tokens, bytes, characters and lines tightens the budget
    #[arg(long, env = "MCP_BUDGET_CLIENT", value_name = "LIST")]
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::app::cli::complete::clients))]
    pub client: Option<ClientList>,
    /// Tokenizer the budget is counted in
    #[arg(long, default_value = "cl100k_base", value_name = "NAME")]
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::app::cli::complete::tokenizer))]
    pub tokenizer: Tokenizer,
    /// Output format
    #[arg(long, value_enum, default_value_t = ListFormat::Table)]
    pub format: ListFormat,
    /// Table width [default: terminal width]
    #[arg(long, value_name = "COLUMNS")]
    pub width: Option<u16>,
    /// Show each result as every contender gives it to the model, side by side: the engine,
    /// each client's own cut (all known clients, or --client's), and each client behind the
    /// engine; with the budget filled, whole items of the main list, JSON validity, numbers cut
    /// in two and planted facts shown
    #[arg(long)]
    pub compare: bool,
    /// With --compare: facts planted at seeded places of each result before it is compared
    #[arg(long, default_value_t = 8, value_name = "N", requires = "compare")]
    pub needles: usize,
    /// With --compare: the seed of the planted facts' places
    #[arg(long, default_value_t = 7, value_name = "SEED", requires = "compare")]
    pub seed: u64,
}
