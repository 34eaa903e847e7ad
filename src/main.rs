//! The `mcp-budget` binary: parse arguments, run one subcommand, map the outcome to an exit code
//! (`exit.rs`).

mod app;

use app::{alloc, cli, commands, exit, printer};
use clap::{CommandFactory, Parser};

fn main() -> std::process::ExitCode {
    alloc::tune();
    // a shell asking for completions (the script `completions SHELL` prints): answer, exit
    clap_complete::CompleteEnv::with_factory(cli::Cli::command)
        .var(commands::COMPLETE_VAR)
        .complete();
    let cli = cli::Cli::parse();
    let outcome = commands::run(cli);
    let (status, print) = exit::status_of(&outcome);
    if let (Err(e), true) = (&outcome, print) {
        printer::warn(&format!("error: {e:#}"));
    }
    status.into()
}
