//! `mcp-budget completions SHELL` and `mcp-budget man`: generated from the clap definitions,
//! so they name every command and flag there is (hidden ones excepted).

use anyhow::Context;
use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs, ManArgs};

pub fn completions(args: CompletionsArgs) -> anyhow::Result<()> {
    let mut cmd = visible();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "mcp-budget", &mut out);
    if args.shell == clap_complete::Shell::Bash {
        // clap_complete 4.6.12 names the bash cases of a dashed program's subcommands
        // `mcp__subcmd__budget__subcmd__audit` but sets `cmd=mcp__budget__subcmd__audit`, so no
        // flag of any command completes; one name for both (tests/it/completions.rs)
        out = String::from_utf8(out)?
            .replace("mcp__subcmd__budget", "mcp__budget")
            .into_bytes();
    }
    crate::printer::print_with(|w| w.write_all(&out))?;
    Ok(())
}

/// The command line without its hidden commands (the lab's plumbing): clap_complete's bash
/// script would offer them.
fn visible() -> clap::Command {
    let full = Cli::command();
    let shown: Vec<clap::Command> = full
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .cloned()
        .collect();
    clap::Command::new("mcp-budget")
        .version(env!("CARGO_PKG_VERSION"))
        .about(full.get_about().cloned().unwrap_or_default())
        .subcommands(shown)
}

pub fn man(args: ManArgs) -> anyhow::Result<()> {
    let mut cmd = Cli::command();
    // built: each command knows its full name (`mcp-budget audit`), as its page shows it
    cmd.build();
    let Some(dir) = args.out else {
        let mut out = Vec::new();
        clap_mangen::Man::new(cmd).render(&mut out)?;
        crate::printer::print_with(|w| w.write_all(&out))?;
        return Ok(());
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut pages = vec![("mcp-budget".to_string(), cmd.clone())];
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        pages.push((format!("mcp-budget-{}", sub.get_name()), sub.clone()));
    }
    for (name, page) in pages {
        let path = dir.join(format!("{name}.1"));
        let mut text = Vec::new();
        clap_mangen::Man::new(page).title(&name).render(&mut text)?;
        // each page whole or not at all: a full disk leaves the last good one
        mcp_budget::atomic::write_atomic(&path, |w| w.write_all(&text))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}
