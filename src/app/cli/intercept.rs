//! The flags of `mcp-budget intercept`.

use mcp_budget::config::profiles::ClientList;
use mcp_budget::ground::tokens::Tokenizer;

use super::EngineArgs;

#[derive(Debug, clap::Args)]
pub struct InterceptArgs {
    #[command(flatten)]
    pub engine: EngineArgs,
    /// The tool whose policy applies (the gateway does not say which tool a result is from)
    #[arg(long, value_name = "NAME", default_value = "intercepted")]
    pub tool: String,
    /// The server's name in spill files
    #[arg(long, value_name = "NAME", default_value = "gateway")]
    pub server: String,
    /// Tokenizer the budget is counted in
    #[arg(long, default_value = "cl100k_base")]
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::app::cli::complete::tokenizer))]
    pub tokenizer: Tokenizer,
    /// The clients behind the gateway, ids comma-separated (claude-code, codex, …) or `all`: the
    /// tightest of their limits tightens the budget
    #[arg(long, env = "MCP_BUDGET_CLIENT", value_name = "LIST")]
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::app::cli::complete::clients))]
    pub client: Option<ClientList>,
}
