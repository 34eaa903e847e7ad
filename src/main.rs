//! The `mcp-budget` binary: parse arguments, run one subcommand, map the outcome to an exit code.

mod cli;
mod commands;
mod exit;
mod printer;
mod progress;
mod settings;

use clap::Parser;

/// mimalloc: a tool result's JSON is a tree of small allocations built and dropped on every call,
/// where glibc's malloc spent more time than the parser (see CHANGELOG, issue 14).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let cli = cli::Cli::parse();
    match commands::run(cli) {
        Ok(status) => status.into(),
        Err(e) => {
            printer::warn(&format!("error: {e:#}"));
            exit::ExitStatus::Error.into()
        }
    }
}
