//! The `mcp-budget` binary: parse arguments, run one subcommand, map the outcome to an exit code.

mod alloc;
mod cli;
mod commands;
mod exit;
mod printer;
mod progress;
mod settings;

use clap::Parser;

fn main() -> std::process::ExitCode {
    alloc::tune();
    let cli = cli::Cli::parse();
    match commands::run(cli) {
        Ok(status) => status.into(),
        Err(e) => {
            printer::warn(&format!("error: {e:#}"));
            exit::ExitStatus::Error.into()
        }
    }
}
