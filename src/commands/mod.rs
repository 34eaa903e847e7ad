//! One file per subcommand: CLI arguments in, core calls, printing, an exit status out.

mod audit;
mod count;
mod demo_server;
mod gate;
mod proxy;
mod replay;
mod serve_capture;
mod servers;
mod stats;

use crate::cli::{Cli, Command};
use crate::exit::ExitStatus;

/// Run the chosen subcommand.
pub fn run(cli: Cli) -> anyhow::Result<ExitStatus> {
    match cli.command {
        Command::Audit(args) => audit::run(*args),
        Command::Replay(args) => replay::run(args),
        Command::Servers(args) => servers::run(args),
        Command::Count(args) => count::run(args),
        Command::DemoServer => demo_server::run(),
        Command::Gate(args) => gate::run(args),
        Command::Proxy(args) => proxy::run(*args),
        Command::Stats(args) => stats::run(args),
        Command::ServeCapture(args) => serve_capture::run(args),
    }
}

/// The user's home directory, for discovery.
/// The spill store at `dir`, checked to take a file before anything is cut (a store that
/// cannot hold a spill is an error at start, never a silent loss later).
fn spill_store(dir: &std::path::Path) -> anyhow::Result<mcp_budget::budget::SpillStore> {
    use anyhow::Context;
    let store = mcp_budget::budget::SpillStore::new(dir, mcp_budget::budget::DEFAULT_MAX_BYTES);
    store
        .check_writable()
        .with_context(|| format!("the spill folder {} cannot be written", dir.display()))?;
    Ok(store)
}

fn home() -> Option<std::path::PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(Into::into)
}

/// Read an environment variable (for `${VAR}` in configs).
fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// A multi-threaded runtime for the async subcommands.
fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}
