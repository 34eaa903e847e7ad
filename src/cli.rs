//! Command-line types (clap derive) and nothing else.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "mcp-budget",
    version,
    about = "Measure what MCP servers cost an LLM in context tokens, and enforce a budget on it"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Connect to MCP servers, measure the schema tax of their tools and the size of probe results
    Audit(AuditArgs),
    /// Run saved tool results (JSON-RPC lines, bare results or text) through the budget engine
    Replay(ReplayArgs),
    /// List the servers found in client configs and probe files (secrets redacted)
    Servers(ServersArgs),
    /// Count the tokens of files (or stdin)
    Count(CountArgs),
    /// Run the embedded demo MCP server on stdio
    DemoServer,
    /// Serve a recording made by `audit --record` as an MCP server on stdio
    ServeCapture(ServeCaptureArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AuditFormat {
    Table,
    Json,
    Csv,
    Markdown,
}

#[derive(Debug, clap::Args)]
pub struct AuditArgs {
    /// Probe files (TOML) or client configs to audit; none: discover client configs, else the demo
    pub files: Vec<PathBuf>,
    /// A client config to read (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Gemini CLI, Codex)
    #[arg(long = "config", value_name = "FILE")]
    pub configs: Vec<PathBuf>,
    /// Audit only these servers (repeatable)
    #[arg(long = "server", value_name = "NAME")]
    pub servers: Vec<String>,
    /// Tokenizers, comma-separated; the first is primary [default: cl100k_base]
    #[arg(long, env = "MCP_BUDGET_TOKENIZER", value_name = "LIST")]
    pub tokenizer: Option<String>,
    /// Where to write audit.json and the CSV files
    #[arg(
        long,
        env = "MCP_BUDGET_OUT",
        value_name = "DIR",
        default_value = "reports/latest"
    )]
    pub out: PathBuf,
    /// Do not write report files, only print
    #[arg(long)]
    pub no_write: bool,
    /// What to print on stdout (csv prints tools.csv; the others are in --out)
    #[arg(long, value_enum, default_value_t = AuditFormat::Table)]
    pub format: AuditFormat,
    /// Bound on each server's whole audit, in seconds [default: 60]
    #[arg(long, env = "MCP_BUDGET_TIMEOUT", value_name = "SECS")]
    pub timeout: Option<u64>,
    /// Servers audited at once [default: 8]
    #[arg(long, env = "MCP_BUDGET_CONCURRENCY", value_name = "N")]
    pub concurrency: Option<usize>,
    /// Also call every tool annotated readOnlyHint: true that has no required arguments
    #[arg(long)]
    pub auto_probe: bool,
    /// Record every JSON-RPC exchange (secrets redacted) into DIR, with a manifest and a
    /// probes.toml that audits the recording (`serve-capture`)
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
    /// Largest single JSON-RPC message accepted from a server, in bytes
    #[arg(long, value_name = "BYTES", default_value_t = 256 * 1024 * 1024)]
    pub max_response_bytes: usize,
    /// Model whose prices the dollar costs use (see README for the table)
    #[arg(
        long,
        env = "MCP_BUDGET_MODEL",
        value_name = "NAME",
        default_value = "claude-sonnet-4.5"
    )]
    pub model: String,
    /// Override the price: INPUT or INPUT,CACHED in US dollars per million input tokens
    #[arg(long, value_name = "USD_PER_MTOK")]
    pub price: Option<String>,
    /// Print what a findings rule checks and why, then exit (`--explain list` lists the rules)
    #[arg(long, value_name = "RULE")]
    pub explain: Option<String>,
    /// Do not draw the PNG and SVG charts
    #[arg(long)]
    pub no_charts: bool,
    /// PEM file of extra certificate authorities to trust for https servers (a private CA)
    #[arg(long, env = "SSL_CERT_FILE", value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Table width for the terminal summary [default: terminal width, or 120 when piped]
    #[arg(long, value_name = "COLUMNS")]
    pub width: Option<u16>,
}

/// The budget engine's settings, shared by `audit` and `replay`.
#[derive(Debug, clap::Args)]
pub struct EngineArgs {
    /// Token budget for each result [default: the probe file's or the policy's, 8000]
    #[arg(long, env = "MCP_BUDGET_BUDGET", value_name = "TOKENS")]
    pub budget: Option<usize>,
    /// Policy file (TOML, a `[policy]` table) on top of the built-in policy and the probe files'
    #[arg(long, env = "MCP_BUDGET_POLICY", value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// Where spilled originals go [default: OUT/spill for audit, ~/.cache/mcp-budget/spill for replay]
    #[arg(long, env = "MCP_BUDGET_SPILL_DIR", value_name = "DIR")]
    pub spill_dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    Table,
    Json,
}

#[derive(Debug, clap::Args)]
pub struct ServersArgs {
    /// Config files to read instead of discovering the standard places
    #[arg(long = "config", value_name = "FILE")]
    pub configs: Vec<PathBuf>,
    /// Output format
    #[arg(long, value_enum, default_value_t = ListFormat::Table)]
    pub format: ListFormat,
}

#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// Payload files: a JSON-RPC response line, a bare tool result JSON, or any text file
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Tool name for policy lookup [default: from a `<server>__<tool>` file name, else the stem]
    #[arg(long)]
    pub tool: Option<String>,
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Engine passes per file; the median time is reported
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub runs: usize,
    /// Tokenizer the budget is counted in
    #[arg(long, default_value = "cl100k_base", value_name = "NAME")]
    pub tokenizer: String,
    /// Output format
    #[arg(long, value_enum, default_value_t = ListFormat::Table)]
    pub format: ListFormat,
    /// Table width [default: terminal width]
    #[arg(long, value_name = "COLUMNS")]
    pub width: Option<u16>,
}

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
    pub tokenizer: String,
    /// Output format
    #[arg(long, value_enum, default_value_t = ListFormat::Table)]
    pub format: ListFormat,
}

#[derive(Debug, clap::Args)]
pub struct ServeCaptureArgs {
    /// The recording's directory (as written by `audit --record`, holding manifest.json)
    pub dir: PathBuf,
    /// The recorded server to serve; required when the recording holds more than one
    #[arg(long, value_name = "NAME")]
    pub server: Option<String>,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn every_argument_has_help_and_the_definition_is_valid() {
        let cmd = super::Cli::command();
        cmd.clone().debug_assert();
        for sub in cmd.get_subcommands() {
            for arg in sub.get_arguments() {
                assert!(
                    arg.get_help().is_some() || arg.get_id() == "help",
                    "{} --{} has no help",
                    sub.get_name(),
                    arg.get_id()
                );
            }
        }
    }
}
