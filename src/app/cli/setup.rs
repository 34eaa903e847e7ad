//! The flags of the commands that set mcp-budget up where users are: completions, man pages,
//! the documents' schemas.

use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell: `source <(mcp-budget completions bash)`, or write it where the shell looks
    /// (bash: ~/.local/share/bash-completion/completions/mcp-budget; zsh: a folder on $fpath
    /// as _mcp-budget; fish: ~/.config/fish/completions/mcp-budget.fish). The script asks this
    /// binary, by its path, what completes each word (server names come from your configs):
    /// print it again after moving the binary
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
        mcp_budget::schemas::Document::ALL.iter().map(|d| d.name())
    ))]
    pub name: String,
}

/// Which configs and servers `wrap` and `unwrap` edit.
#[derive(Debug, clap::Args)]
pub struct WrapWhere {
    /// A client config to edit (repeatable) [default: every client config in its standard
    /// place: Claude Code, Claude Desktop, Cursor, VS Code, Windsurf, Gemini CLI, Codex]
    #[arg(long = "config", value_name = "FILE")]
    pub configs: Vec<PathBuf>,
    /// Only these clients' configs, ids comma-separated: claude-code, claude-desktop, cursor,
    /// vscode, windsurf, gemini (or gemini-cli), codex
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub client: Vec<String>,
    /// Only the servers of this name (repeatable)
    #[arg(long, value_name = "NAME")]
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::app::cli::complete::servers))]
    pub server: Vec<String>,
    /// Also the current folder's project configs (.mcp.json, .cursor/mcp.json,
    /// .vscode/mcp.json, .gemini/settings.json)
    #[arg(long)]
    pub project: bool,
    /// Print the edits as a diff (secrets redacted) and write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Write only if the edits are exactly those of the dry run that printed this token
    #[arg(long, value_name = "TOKEN", conflicts_with = "dry_run")]
    pub expect: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct WrapArgs {
    #[command(flatten)]
    pub at: WrapWhere,
    /// The mcp-budget binary the clients run [default: this one, by the PATH's name for it
    /// when it has one (a link that survives an upgrade); `mcp-budget` in a file inside a git
    /// work tree]
    #[arg(long, value_name = "PATH")]
    pub bin: Option<PathBuf>,
    /// Every proxy's token budget per result
    #[arg(long, value_name = "TOKENS")]
    pub budget: Option<usize>,
    /// Every proxy's policy file
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// Every proxy shows its tools lazily (`proxy --lazy-tools`)
    #[arg(long)]
    pub lazy_tools: bool,
    /// Every proxy appends its calls to this log
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Every proxy exports telemetry (`proxy --otlp`), with the OTEL_* variables set now
    /// copied into each entry's environment (in a file inside a git work tree, a secret one as
    /// a reference the client fills, or the file is refused)
    #[arg(long)]
    pub otlp: bool,
    /// Also wrap remote servers that have no header and no sign-in kept by `mcp-budget login`
    /// (left alone by default: they may sign in with OAuth through their client; one signed in
    /// with `mcp-budget login` is wrapped, and its proxy signs in for it)
    #[arg(long)]
    pub remote_without_headers: bool,
}

#[derive(Debug, clap::Args)]
pub struct UnwrapArgs {
    #[command(flatten)]
    pub at: WrapWhere,
}
