//! `wrap`'s and `unwrap`'s settings: the files and servers to edit, the state folder, and (for
//! `wrap`) what every proxy it writes runs with, every path made absolute (a client starts its
//! servers from a folder of its own).

use std::path::{Path, PathBuf};

use anyhow::Context;
use mcp_budget::config::ClientKind;
use mcp_budget::run::wrap::{Options, Store, Target};

use crate::app::cli::{WrapArgs, WrapWhere};

/// What `wrap` and `unwrap` run with.
pub struct Wrap {
    pub targets: Vec<Target>,
    pub servers: Vec<String>,
    pub store: Store,
    pub dry_run: bool,
    pub expect: Option<String>,
    /// The proxies' options (`wrap` only).
    pub options: Options,
}

fn absolute(path: &Path, cwd: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    }
}

/// This binary, by the name the PATH gives it when one of the PATH's `mcp-budget` is it (a
/// package manager's link, `~/.cargo/bin/mcp-budget`, survives an upgrade that moves the file
/// it points to), else by its own path.
fn this_binary() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .context("cannot tell where this mcp-budget binary is: give --bin")?;
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter(|d| d.is_absolute())
        .map(|d| d.join("mcp-budget"))
        .find(|c| std::fs::canonicalize(c).is_ok_and(|r| r == exe));
    Ok(on_path.unwrap_or(exe))
}

/// `$XDG_STATE_HOME/mcp-budget/wrap`, else `~/.local/state/mcp-budget/wrap`.
fn state_dir() -> anyhow::Result<PathBuf> {
    let base = super::xdg_dir("XDG_STATE_HOME", ".local/state")
        .context("neither XDG_STATE_HOME nor HOME is set: no folder for wrap's records")?;
    Ok(base.join("mcp-budget/wrap"))
}

impl Wrap {
    /// `unwrap`'s settings (no proxy options).
    pub fn resolve_where(at: &WrapWhere) -> anyhow::Result<Wrap> {
        let cwd = std::env::current_dir().context("no current folder")?;
        let mut clients = Vec::new();
        for id in &at.client {
            let id = id.trim();
            let kind = match id {
                "gemini-cli" => Some(ClientKind::Gemini),
                "generic" => None,
                other => ClientKind::from_id(other),
            }
            .with_context(|| {
                format!(
                    "--client `{id}`: not a client wrap edits (claude-code, claude-desktop, \
                     cursor, vscode, windsurf, gemini, codex)"
                )
            })?;
            clients.push(kind);
        }
        let configs: Vec<PathBuf> = at.configs.iter().map(|c| absolute(c, &cwd)).collect();
        let targets = mcp_budget::run::wrap::targets(
            super::home().as_deref(),
            &cwd,
            &configs,
            &clients,
            at.project,
        )?;
        Ok(Wrap {
            targets,
            servers: at.server.clone(),
            store: Store::new(state_dir()?),
            dry_run: at.dry_run,
            expect: at.expect.clone(),
            options: Options::default(),
        })
    }

    pub fn resolve(args: &WrapArgs) -> anyhow::Result<Wrap> {
        let mut wrap = Wrap::resolve_where(&args.at)?;
        let cwd = std::env::current_dir().context("no current folder")?;
        let bin = match &args.bin {
            Some(b) => {
                let b = absolute(b, &cwd);
                anyhow::ensure!(
                    b.is_file(),
                    "--bin {}: no such file (the clients would fail to start it)",
                    b.display()
                );
                b
            }
            None => this_binary()?,
        };
        let policy = args.policy.as_ref().map(|p| absolute(p, &cwd));
        if let Some(p) = &policy {
            // the same check the proxies will make, now rather than in every client
            mcp_budget::budget::Policy::load_file(p)
                .with_context(|| format!("--policy {}", p.display()))?;
        }
        let env = if args.otlp {
            let mut vars: Vec<(String, String)> = std::env::vars()
                .filter(|(k, _)| k.starts_with("OTEL_"))
                .collect();
            vars.sort();
            vars
        } else {
            Vec::new()
        };
        wrap.options = Options {
            bin: bin.display().to_string(),
            bin_given: args.bin.is_some(),
            budget: args.budget,
            policy,
            lazy_tools: args.lazy_tools,
            log: args.log.as_ref().map(|l| absolute(l, &cwd)),
            otlp: args.otlp,
            env,
            remote_without_headers: args.remote_without_headers,
            sign_ins: super::auth_dir(),
            ..Options::default()
        };
        Ok(wrap)
    }
}
