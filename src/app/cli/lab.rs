//! The flags of `mcp-budget lab` and of its tap.

use std::path::PathBuf;

use mcp_budget::ground::tokens::Tokenizer;

use super::{ListFormat, TrustArgs};

#[derive(Debug, clap::Args)]
pub struct LabArgs {
    /// Probe files (TOML) or client configs whose stdio servers the clients mount; none: the
    /// embedded demo server and its probes
    pub files: Vec<PathBuf>,
    /// A client config to read servers from
    #[arg(long = "config", value_name = "FILE")]
    pub configs: Vec<PathBuf>,
    /// Mount only these servers (repeatable)
    #[arg(long = "server", value_name = "NAME")]
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::app::cli::complete::servers))]
    pub servers: Vec<String>,
    /// The clients to run, by id (comma-separated); one not found fails the run (exit 2)
    /// [default: every built-in adapter; finding none fails the run]
    #[arg(long = "client", value_name = "IDS", value_delimiter = ',')]
    pub clients: Vec<String>,
    /// A client's executable, `ID=PATH` (repeatable), instead of looking for it; the client is
    /// then asked for (not found there: exit 2)
    #[arg(long = "client-bin", value_name = "ID=PATH")]
    pub client_bins: Vec<String>,
    /// An npm folder (a `node_modules`) to look for clients in (repeatable), before
    /// ./node_modules and the global one
    #[arg(
        long = "npm-dir",
        value_name = "DIR",
        env = "MCP_BUDGET_LAB_NPM",
        value_delimiter = ':'
    )]
    pub npm_dirs: Vec<PathBuf>,
    /// An adapter file (TOML, as src/lab/clients/*.toml) to run as well, or in place of the
    /// built-in one with its id (repeatable)
    #[arg(long = "adapter", value_name = "FILE")]
    pub adapters: Vec<PathBuf>,
    /// Seconds one client run may take before its process group is killed
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    pub timeout: u64,
    /// Client runs at once: a server's probes, a derive's shapes (each run has its own HOME,
    /// model and tap; a client takes about a core while it starts)
    #[arg(long, short = 'j', value_name = "N", default_value_t = 2,
          value_parser = clap::value_parser!(u16).range(1..=16))]
    pub jobs: u16,
    /// Keep each run's folder (the client's private HOME, the tap's transcript) and say where
    #[arg(long)]
    pub keep: bool,
    /// Run without a network namespace (only the adapters' URLs are checked to be 127.0.0.1)
    #[arg(long)]
    pub no_isolation: bool,
    /// Fail (exit 1) when a measured client has moved from its profile: an installed version
    /// other than the profile's, or a result the profile does not predict (each said on
    /// stderr): the step a team runs in CI when it upgrades its clients
    #[arg(long)]
    pub check: bool,
    /// Find each client's rules by bisection on the lab server's synthetic results (no server
    /// of yours is needed; with files given, they are measured too)
    #[arg(long)]
    pub derive: bool,
    /// The shapes --derive bisects, comma-separated [default: all: lines, one_line, wide,
    /// json_array, json_object, structured, image, short_lines, pretty_array, pretty_object,
    /// resource, blob, resource_link, error]
    #[arg(
        long = "shape",
        value_name = "SHAPES",
        value_delimiter = ',',
        requires = "derive"
    )]
    pub shapes: Vec<String>,
    /// Tokenizer for the counts
    #[arg(long, env = "MCP_BUDGET_TOKENIZER", default_value = "cl100k_base")]
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::app::cli::complete::tokenizer))]
    pub tokenizer: Tokenizer,
    /// Output format
    #[arg(long, value_enum, default_value_t = ListFormat::Table)]
    pub format: ListFormat,
    #[command(flatten)]
    pub trust: TrustArgs,
    /// The servers as JSON on standard input, resolved by `audit --client measured` (the same
    /// specs, their variables kept off the command line)
    #[arg(long, hide = true)]
    pub servers_on_stdin: bool,
}

#[derive(Debug, clap::Args)]
pub struct LabTapArgs {
    /// The transcript file to write
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// The server's own variables, `NAME=value` per line
    #[arg(long, value_name = "FILE")]
    pub env_file: Option<PathBuf>,
    /// The server command and its arguments (after `--`)
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}
