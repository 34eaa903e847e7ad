//! The binary's parts: argument parsing (`cli`), one module per subcommand (`commands`), settings resolved from flags and files, the printer, progress, sign-in prompts, exit codes and the allocator.

pub mod alloc;
pub mod cli;
pub mod commands;
pub mod exit;
pub mod printer;
pub mod progress;
pub mod runtime;
pub mod settings;
pub mod signin;
