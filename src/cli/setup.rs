//! The flags of the commands that set mcp-budget up where users are: completions, man pages,
//! the documents' schemas.

use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell: `source <(mcp-budget completions bash)`, or write it where the shell looks
    /// (bash: ~/.local/share/bash-completion/completions/mcp-budget; zsh: a folder on $fpath
    /// as _mcp-budget; fish: ~/.config/fish/completions/mcp-budget.fish)
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, clap::Args)]
pub struct ManArgs {
    /// Write mcp-budget.1 and a page per command (mcp-budget-audit.1, ...) into DIR instead
    /// of printing the main page
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct SchemaArgs {
    /// The document: audit, gate, call-log or lab
    #[arg(value_parser = clap::builder::PossibleValuesParser::new(
        mcp_budget::schemas::Document::ALL.map(|d| d.name())
    ))]
    pub name: String,
}
