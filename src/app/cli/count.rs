//! `count`'s flags: files or stdin, the tokenizers, and the output for people or scripts.

use std::path::PathBuf;

use mcp_budget::ground::tokens::TokenizerList;

use super::ListFormat;

#[derive(Debug, clap::Args)]
pub struct CountArgs {
    /// Files to count; none or `-`: stdin
    pub files: Vec<PathBuf>,
    /// Tokenizers, comma-separated; the first is primary
    #[arg(
        long,
        env = "MCP_BUDGET_TOKENIZER",
        default_value = "cl100k_base",
        value_name = "LIST"
    )]
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::app::cli::complete::tokenizers))]
    pub tokenizer: TokenizerList,
    /// Output format
    #[arg(long, value_enum, default_value_t = ListFormat::Table)]
    pub format: ListFormat,
    /// For scripts: the token counts alone, one line per file (tab-separated by tokenizer; with
    /// several files, the file's name last)
    #[arg(long, conflicts_with = "format")]
    pub plain: bool,
    /// Table width [default: the terminal's; piped, as wide as the content]
    #[arg(long, value_name = "COLUMNS")]
    pub width: Option<u16>,
}
