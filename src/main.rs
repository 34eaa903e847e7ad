//! The `mcp-budget` binary: parse arguments, run one subcommand, map the outcome to an exit code
//! (`exit.rs`).

mod alloc;
mod cli;
mod commands;
mod exit;
mod printer;
mod progress;
mod settings;
mod signin;

use clap::Parser;

fn main() -> std::process::ExitCode {
    alloc::tune();
    let cli = cli::Cli::parse();
    let outcome = commands::run(cli);
    let (status, print) = exit::status_of(&outcome);
    if let (Err(e), true) = (&outcome, print) {
        printer::warn(&format!("error: {e:#}"));
    }
    status.into()
}
