//! Command-line types (clap derive) and nothing else.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};
use mcp_budget::config::profiles::ClientList;
use mcp_budget::ground::tokens::TokenizerList;
use mcp_budget::wire::upstream::Protocol;

mod auth;
pub mod complete;
mod count;
mod formats;
pub mod help;
mod intercept;
mod lab;
mod proxy;
mod replay;
mod setup;
pub use auth::{LoginArgs, LogoutArgs, ServerChoice};
pub use count::CountArgs;
pub use formats::{ListFormat, StatsFormat, VerdictFormat};
pub use intercept::InterceptArgs;
pub use lab::{LabArgs, LabTapArgs};
pub use proxy::ProxyArgs;
pub use replay::ReplayArgs;
pub use setup::{CompletionsArgs, ManArgs, SchemaArgs, UnwrapArgs, WrapArgs, WrapWhere};

#[derive(Debug, Parser)]
#[command(
    name = "mcp-budget",
    version,
    about = "Measure what MCP servers cost an LLM in context tokens, and enforce a budget on it",
    after_long_help = help::after_help("mcp-budget")
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Connect to MCP servers, measure the schema tax of their tools and the size of probe results
    #[command(after_long_help = help::after_help("audit"))]
    Audit(Box<AuditArgs>),
    /// Run saved tool results (JSON-RPC lines, bare results or text) through the budget engine
    #[command(after_long_help = help::after_help("replay"))]
    Replay(ReplayArgs),
    /// Budget one tool result read on stdin for a gateway's interceptor (Docker MCP Gateway's
    /// `--interceptor after:exec:...`): the replacement on stdout, nothing when it fits
    #[command(after_long_help = help::after_help("intercept"))]
    Intercept(InterceptArgs),
    /// List the servers found in client configs and probe files (secrets redacted)
    #[command(after_long_help = help::after_help("servers"))]
    Servers(ServersArgs),
    /// Sign in to a server that uses OAuth (the browser step, then the token kept in the state
    /// folder, readable by you alone)
    #[command(after_long_help = help::after_help("login"))]
    Login(LoginArgs),
    /// Forget a server's sign-in (revoked at its authorization server where it offers that)
    #[command(after_long_help = help::after_help("logout"))]
    Logout(LogoutArgs),
    /// Count the tokens of files (or stdin)
    #[command(after_long_help = help::after_help("count"))]
    Count(CountArgs),
    /// Run the embedded demo MCP server on stdio
    #[command(after_long_help = help::after_help("demo-server"))]
    DemoServer,
    /// Put `mcp-budget proxy` in front of the servers in your client configs (a backup first;
    /// --dry-run shows the diff)
    #[command(after_long_help = help::after_help("wrap"))]
    Wrap(Box<WrapArgs>),
    /// Take the proxy out of the client configs again, each entry as it was
    #[command(after_long_help = help::after_help("unwrap"))]
    Unwrap(UnwrapArgs),
    /// Gate a report (audit.json) on thresholds and on growth against a baseline report
    #[command(after_long_help = help::after_help("gate"))]
    Gate(GateArgs),
    /// Serve an upstream MCP server on stdio with every tool result kept within the budget
    #[command(after_long_help = help::after_help("proxy"))]
    Proxy(Box<ProxyArgs>),
    /// Per-tool statistics of a proxy call log (count, p50, p95, max tokens and engine time)
    #[command(after_long_help = help::after_help("stats"))]
    Stats(StatsArgs),
    /// Serve a recording made by `audit --record` as an MCP server on stdio
    #[command(after_long_help = help::after_help("serve-capture"))]
    ServeCapture(ServeCaptureArgs),
    /// Run real coding clients against a scripted model on 127.0.0.1 and measure what each
    /// sends its model: the tool definitions per turn, and what reached it of each probe
    #[command(after_long_help = help::after_help("lab"))]
    Lab(Box<LabArgs>),
    /// Print a shell's completion script (bash, zsh, fish, elvish, powershell)
    #[command(after_long_help = help::after_help("completions"))]
    Completions(CompletionsArgs),
    /// Print the man page (roff), or write one per command into a folder
    #[command(after_long_help = help::after_help("man"))]
    Man(ManArgs),
    /// Print the JSON Schema of a document mcp-budget writes: audit (audit.json), gate
    /// (gate.json), call-log (a line of `proxy --log`), lab (the lab's report)
    #[command(after_long_help = help::after_help("schema"))]
    Schema(SchemaArgs),
    /// The lab's tap: relay stdio to a server, writing every line to a transcript
    #[command(hide = true)]
    LabTap(LabTapArgs),
    /// The lab's own MCP server on stdio (synthetic results of every shape, for --derive)
    #[command(hide = true)]
    LabServer(LabServerArgs),
}

#[derive(Debug, clap::Args)]
pub struct LabServerArgs {
    /// Tools in all: `lab_result` and numbered stand-ins (11, 58, 158 for the list shapes)
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=2000))]
    pub tools: u16,
    /// Tools per tools/list page (0: every tool on one page)
    #[arg(long, default_value_t = 0)]
    pub page_size: u16,
    /// The protocol eras it speaks: `both` (2026-07-28 and the handshake), `legacy` (the
    /// handshake only; `server/discover` refused with -32022 and the versions it speaks), or
    /// `unaware` (a server from before 2026: `server/discover` is an unknown method, -32601)
    #[arg(long, default_value = "both", value_parser = ["both", "legacy", "unaware"])]
    pub era: String,
}

#[derive(Debug, clap::Args)]
pub struct StatsArgs {
    /// A call log written by `proxy --log`
    #[arg(value_name = "LOG.jsonl")]
    pub log: PathBuf,
    /// Output format
    #[arg(long, value_enum, default_value_t = StatsFormat::Table)]
    pub format: StatsFormat,
    /// Also draw each tool's p95 raw and returned tokens to this file (.svg or .png)
    #[arg(long, value_name = "FILE")]
    pub chart: Option<PathBuf>,
    /// Table width [default: the terminal's; piped, as wide as the content]
    #[arg(long, value_name = "COLUMNS")]
    pub width: Option<u16>,
}

/// Gate thresholds as flags (the same names as a probe file's `[gate]` keys; flags win).
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Gate")]
pub struct ThresholdArgs {
    /// Largest schema tax of one server, tokens per turn
    #[arg(long, value_name = "TOKENS")]
    pub max_tools_tokens: Option<usize>,
    /// Largest definition of one tool, tokens per turn
    #[arg(long, value_name = "TOKENS")]
    pub max_tool_tokens: Option<usize>,
    /// Largest raw result of one probe, tokens
    #[arg(long, value_name = "TOKENS")]
    pub max_raw_tokens: Option<usize>,
    /// Largest result of one probe after the budget engine, tokens
    #[arg(long, value_name = "TOKENS")]
    pub max_budgeted_tokens: Option<usize>,
    /// Most tools one server may offer
    #[arg(long, value_name = "N")]
    pub max_tool_count: Option<usize>,
    /// Largest growth against the baseline of a server's schema tax, a tool or a result, percent
    #[arg(long, value_name = "PCT", allow_negative_numbers = true)]
    pub max_regression_pct: Option<f64>,
    /// Fail on every finding of this severity or worse: error, or warning (warnings and errors)
    #[arg(long, value_name = "SEVERITY", value_parser = clap::builder::TypedValueParser::map(clap::builder::PossibleValuesParser::new(["error", "warning"]), |s| s.parse::<mcp_budget::judge::gate::FailOn>().expect("a listed severity")))]
    pub fail_on: Option<mcp_budget::judge::gate::FailOn>,
}

#[derive(Debug, clap::Args)]
pub struct GateArgs {
    /// The report to gate (an audit.json)
    #[arg(value_name = "CURRENT.json")]
    pub current: PathBuf,
    /// The report to compare with
    #[arg(long, value_name = "BASELINE.json")]
    pub baseline: Option<PathBuf>,
    /// Probe files whose `[gate]` tables give thresholds (flags win)
    #[arg(long = "config", value_name = "FILE")]
    pub configs: Vec<PathBuf>,
    #[command(flatten)]
    pub thresholds: ThresholdArgs,
    /// table | markdown (a PR comment) | github (annotations, and the Markdown appended to
    /// $GITHUB_STEP_SUMMARY) | json
    #[arg(long, value_enum, default_value_t = VerdictFormat::Table)]
    pub format: VerdictFormat,
    /// Exit 0 even when the gate fails (report only)
    #[arg(long)]
    pub exit_zero: bool,
    /// Table width [default: terminal width, or 120 when piped]
    #[arg(long, value_name = "COLUMNS")]
    pub width: Option<u16>,
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
    #[arg(help_heading = "Servers")]
    pub configs: Vec<PathBuf>,
    /// Audit only these servers (repeatable)
    #[arg(long = "server", value_name = "NAME")]
    #[arg(help_heading = "Servers")]
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::app::cli::complete::servers))]
    pub servers: Vec<String>,
    /// Tokenizers, comma-separated; the first is primary [default: the probe file's, else
    /// cl100k_base]
    #[arg(long, env = "MCP_BUDGET_TOKENIZER", value_name = "LIST")]
    #[arg(help_heading = "Counting")]
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::app::cli::complete::tokenizers))]
    pub tokenizer: Option<TokenizerList>,
    /// Where to write audit.json and the CSV files
    #[arg(
        long,
        env = "MCP_BUDGET_OUT",
        value_name = "DIR",
        default_value = "reports/latest"
    )]
    #[arg(help_heading = "Output")]
    pub out: PathBuf,
    /// Do not write report files, only print
    #[arg(long)]
    #[arg(help_heading = "Output")]
    pub no_write: bool,
    /// What to print on stdout (csv prints tools.csv; the others are in --out)
    #[arg(long, value_enum, default_value_t = AuditFormat::Table)]
    #[arg(help_heading = "Output")]
    pub format: AuditFormat,
    /// Bound on each server's whole audit, in seconds [default: 60]
    #[arg(long, env = "MCP_BUDGET_TIMEOUT", value_name = "SECS")]
    #[arg(help_heading = "Servers")]
    pub timeout: Option<u64>,
    /// Servers audited at once [default: 8]
    #[arg(long, env = "MCP_BUDGET_CONCURRENCY", value_name = "N")]
    #[arg(help_heading = "Servers")]
    pub concurrency: Option<usize>,
    /// Also call every tool annotated readOnlyHint: true that has no required arguments
    #[arg(long)]
    #[arg(help_heading = "Servers")]
    pub auto_probe: bool,
    /// Clients whose view of every tool list and result is reported: ids, comma-separated, or
    /// `all` (naive, claude-code, claude-desktop, codex, gemini-cli, opencode, kilo,
    /// qwen-code, cline, copilot-cli, vscode, cursor); `measured` in the list also runs the installed
    /// ones in the lab
    /// (`mcp-budget lab`) and reports what they were measured sending
    #[arg(
        long = "client",
        env = "MCP_BUDGET_CLIENT",
        value_name = "LIST",
        default_value = "all"
    )]
    #[arg(help_heading = "Counting")]
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::app::cli::complete::clients))]
    pub clients: ClientList,
    /// Record every JSON-RPC exchange (secrets redacted) into DIR, with a manifest and a
    /// probes.toml that audits the recording (`serve-capture`)
    #[arg(long, value_name = "DIR")]
    #[arg(help_heading = "Servers")]
    pub record: Option<PathBuf>,
    /// Largest single JSON-RPC message accepted from a server, in bytes
    #[arg(long, value_name = "BYTES", default_value_t = 256 * 1024 * 1024)]
    #[arg(help_heading = "Servers")]
    pub max_response_bytes: usize,
    /// The protocol era to speak: `auto` (discover first, then `initialize`), `legacy` (the
    /// `initialize` handshake), `2026-07-28` (`server/discover`, stateless), or
    /// `handshake-first` (`initialize`, then 2026-07-28 when the server refuses it)
    #[arg(
        long,
        env = "MCP_BUDGET_PROTOCOL",
        value_name = "ERA",
        default_value = "auto"
    )]
    #[arg(help_heading = "Servers")]
    pub protocol: Protocol,
    /// Model whose prices the dollar costs use (see docs/audit.md for the table)
    #[arg(
        long,
        env = "MCP_BUDGET_MODEL",
        value_name = "NAME",
        default_value = "claude-sonnet-4.5"
    )]
    #[arg(help_heading = "Counting")]
    pub model: String,
    /// Override the price: INPUT or INPUT,CACHED in US dollars per million input tokens
    #[arg(long, value_name = "USD_PER_MTOK")]
    #[arg(help_heading = "Counting")]
    pub price: Option<String>,
    /// Print what a findings rule checks and why, then exit (`--explain list` lists the rules)
    #[arg(long, value_name = "RULE")]
    #[arg(help_heading = "Output")]
    pub explain: Option<String>,
    /// Write a policy for `proxy --policy` that cuts the schema tax: lean schemas, long
    /// descriptions cut at a sentence end, optional parameters repeated across tools hidden
    #[arg(long, value_name = "FILE")]
    #[arg(help_heading = "Output")]
    pub suggest_policy: Option<PathBuf>,
    /// Tools a parameter must appear in, with the same schema and description, to be reported
    /// as a shared parameter (the `shared-parameters` rule)
    #[arg(
        long,
        env = "MCP_BUDGET_SHARED_MIN_TOOLS",
        value_name = "N",
        default_value_t = mcp_budget::measure::SHARED_PARAMETER_TOOLS as u64,
        value_parser = clap::value_parser!(u64).range(2..)
    )]
    #[arg(help_heading = "Counting")]
    pub shared_min_tools: u64,
    /// Export what the audit measured as OTLP metrics (http/protobuf, to
    /// OTEL_EXPORTER_OTLP_ENDPOINT or else http://localhost:4318), one point per server, tool,
    /// probe and client view
    #[arg(long)]
    #[arg(help_heading = "Output")]
    pub otlp: bool,
    /// Do not draw the PNG and SVG charts
    #[arg(long)]
    #[arg(help_heading = "Output")]
    pub no_charts: bool,
    /// A previous audit.json to compare with (the changes go into gate.md and gate.json)
    #[arg(long, value_name = "FILE")]
    #[arg(help_heading = "Gate")]
    pub baseline: Option<PathBuf>,
    /// Apply the gate: thresholds from the probe files' `[gate]` and the flags, and the baseline
    #[arg(long)]
    #[arg(help_heading = "Gate")]
    pub gate: bool,
    /// Exit 0 even when the gate fails (report only)
    #[arg(long)]
    #[arg(help_heading = "Gate")]
    pub exit_zero: bool,
    #[command(flatten)]
    pub thresholds: ThresholdArgs,
    /// PEM file of extra certificate authorities to trust for https servers (a private CA)
    #[arg(long, env = "SSL_CERT_FILE", value_name = "FILE")]
    #[arg(help_heading = "Servers")]
    pub ca_cert: Option<PathBuf>,
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub trust: TrustArgs,
    /// Table width for the terminal summary [default: terminal width, or 120 when piped]
    #[arg(long, value_name = "COLUMNS")]
    #[arg(help_heading = "Output")]
    pub width: Option<u16>,
}

/// The budget engine's settings, shared by `audit` and `replay`.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Budget engine")]
pub struct EngineArgs {
    /// Token budget for each result [default: the probe file's or the policy's, 8000]
    #[arg(long, env = "MCP_BUDGET_BUDGET", value_name = "TOKENS")]
    pub budget: Option<usize>,
    /// Policy file (TOML, a `[policy]` table) on top of the built-in policy and the probe files'
    #[arg(long, env = "MCP_BUDGET_POLICY", value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// Where spilled originals go [default: $XDG_CACHE_HOME/mcp-budget/spill, else ~/.cache/mcp-budget/spill; never OUT]
    #[arg(long, env = "MCP_BUDGET_SPILL_DIR", value_name = "DIR")]
    pub spill_dir: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
#[command(mut_arg("trust_project", |a| a.help(
    "List the servers of project configs under the current folder (.mcp.json, .cursor/mcp.json, \
     .vscode/mcp.json, .gemini/settings.json, ~/.claude.json project entries) that nobody \
     approved as trusted, as `audit --trust-project` would start them (`servers` starts none)"
)))]
pub struct ServersArgs {
    /// Config files to read instead of discovering the standard places
    #[arg(long = "config", value_name = "FILE")]
    pub configs: Vec<PathBuf>,
    /// Output format
    #[arg(long, value_enum, default_value_t = ListFormat::Table)]
    pub format: ListFormat,
    #[command(flatten)]
    pub trust: TrustArgs,
    /// Table width [default: the terminal's; piped, as wide as the content]
    #[arg(long, value_name = "COLUMNS")]
    pub width: Option<u16>,
}

/// Which servers may be started, and with what environment (`audit`, `proxy`, `servers`).
#[derive(Debug, Clone, Copy, clap::Args)]
#[command(next_help_heading = "Trust")]
pub struct TrustArgs {
    /// Also start the servers of project configs found under the current folder (.mcp.json,
    /// .cursor/mcp.json, .vscode/mcp.json, .gemini/settings.json, ~/.claude.json project
    /// entries) that nobody approved; they run the project's code
    #[arg(long, env = "MCP_BUDGET_TRUST_PROJECT", value_parser = clap::builder::BoolishValueParser::new())]
    pub trust_project: bool,
    /// Start stdio servers with only HOME, LOGNAME, PATH, SHELL, TERM and USER (the MCP SDKs'
    /// default) and their own env; `${VAR}` in configs reads only those too
    #[arg(long, env = "MCP_BUDGET_CLEAN_ENV", value_parser = clap::builder::BoolishValueParser::new())]
    pub clean_env: bool,
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
