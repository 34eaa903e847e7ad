//! `login` and `logout`: signing in to a server that uses OAuth, and forgetting it.

use std::path::PathBuf;

/// Which server: a name from the configs or probe files, or its URL.
#[derive(Debug, clap::Args)]
pub struct ServerChoice {
    /// The server: its name in a client config or probe file, or its URL (http or https)
    #[arg(value_name = "SERVER")]
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(crate::app::cli::complete::servers))]
    pub server: String,
    /// Config or probe files to find SERVER in, instead of discovering the standard places
    #[arg(long = "config", value_name = "FILE")]
    pub configs: Vec<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct LoginArgs {
    #[command(flatten)]
    pub choice: ServerChoice,
    /// A client id the authorization server already knows (no dynamic registration)
    #[arg(long, value_name = "ID")]
    pub client_id: Option<String>,
    /// The pre-registered client's secret, read from this environment variable (never argv)
    #[arg(long, value_name = "VAR", requires = "client_id")]
    pub client_secret_env: Option<String>,
    /// The https URL of mcp-budget's Client ID Metadata Document, hosted by you, used as the
    /// client's id where the authorization server advertises them (docs/auth.md shows the
    /// document) [default: dynamic registration]
    #[arg(
        long,
        value_name = "URL",
        env = "MCP_BUDGET_CLIENT_METADATA_URL",
        conflicts_with = "client_id"
    )]
    pub client_metadata_url: Option<String>,
    /// A scope to ask for (repeatable) [default: what the server's challenge or metadata names]
    #[arg(long = "scope", value_name = "SCOPE")]
    pub scopes: Vec<String>,
    /// The loopback port of the redirect (`http://127.0.0.1:PORT/callback`), for a
    /// pre-registered client whose redirect URI names one [default: a free port]
    #[arg(long, value_name = "PORT")]
    pub redirect_port: Option<u16>,
    /// Sign in as a machine with the client credentials grant (no browser, no user): needs
    /// --client-id and --client-secret-env; a token is asked for again when the last is due
    #[arg(long, requires = "client_secret_env")]
    pub client_credentials: bool,
    /// Do not open a browser: print the URL only
    #[arg(long)]
    pub no_browser: bool,
    /// Seconds to wait for the browser's redirect
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub wait: u64,
}

#[derive(Debug, clap::Args)]
pub struct LogoutArgs {
    #[command(flatten)]
    pub choice: ServerChoice,
}
