//! `mcp-budget completions SHELL` and `mcp-budget man`: generated from the clap definitions,
//! so they name every command and flag there is (hidden ones excepted).

use anyhow::Context;
use clap::CommandFactory;

use crate::app::cli::{Cli, CompletionsArgs, ManArgs};

mod man;

/// The variable a shell sets to ask the binary for completions (`main` answers it).
pub const COMPLETE_VAR: &str = "MCP_BUDGET_COMPLETE";

/// The shell's registration: a function that asks this binary, by its full path, what
/// completes the words on each Tab (so server names come from the configs found then).
pub fn completions(args: CompletionsArgs) -> anyhow::Result<()> {
    let name = args.shell.to_string();
    let shells = clap_complete::env::Shells::builtins();
    let shell = shells
        .completer(&name)
        .with_context(|| format!("no completion for {name}"))?;
    let exe = std::env::current_exe().context("cannot find this binary's path")?;
    let mut out = Vec::new();
    shell.write_registration(
        COMPLETE_VAR,
        "mcp-budget",
        "mcp-budget",
        &exe.to_string_lossy(),
        &mut out,
    )?;
    crate::app::printer::print_with(|w| w.write_all(&out))?;
    Ok(())
}

pub fn man(args: ManArgs) -> anyhow::Result<()> {
    let mut cmd = Cli::command();
    // built: each command knows its full name (`mcp-budget audit`), as its page shows it
    cmd.build();
    let Some(dir) = args.out else {
        let page = page(&cmd, "mcp-budget")?;
        crate::app::printer::print_with(|w| w.write_all(&page))?;
        return Ok(());
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut pages = vec![("mcp-budget".to_string(), page(&cmd, "mcp-budget")?)];
    // clap's own `help` command has no page: `mcp-budget help audit` is `--help`
    for sub in cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        pages.push((
            format!("mcp-budget-{}", sub.get_name()),
            page(sub, sub.get_name())?,
        ));
    }
    for (name, text) in pages {
        let path = dir.join(format!("{name}.1"));
        // each page whole or not at all: a full disk leaves the last good one
        mcp_budget::ground::atomic::write_atomic(&path, |w| w.write_all(&text))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// The roff page of `cmd`: clap_mangen's sections, ours (examples, exit status, environment,
/// files) before its version section. `name` is the command's (`mcp-budget` for the main page).
fn page(cmd: &clap::Command, name: &str) -> std::io::Result<Vec<u8>> {
    let title = match name {
        "mcp-budget" => name.to_string(),
        sub => format!("mcp-budget-{sub}"),
    };
    let man = clap_mangen::Man::new(cmd.clone()).title(&title);
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut out)?;
    }
    if cmd.has_subcommands() {
        man.render_subcommands_section(&mut out)?;
    }
    out.extend_from_slice(man::extra_sections(name, &man::flags_env(cmd)).as_bytes());
    if cmd.get_version().is_some() {
        man.render_version_section(&mut out)?;
    }
    Ok(out)
}
