//! Flags, environment and probe files resolved once into what a command runs with: one
//! `Settings` type per command (`audit.rs`, `proxy.rs`, `replay.rs`, `gate.rs`, `stats.rs`,
//! `count.rs`, `lab.rs`), each built by its `resolve`, and the parts they share here (the engine
//! and its spill folder, the gate thresholds, the servers found). Commands take these and never
//! rebuild them. Precedence: command-line flag > `MCP_BUDGET_*` environment variable (clap reads
//! it, and parses tokenizers and client lists once) > the first probe file's `[defaults]` >
//! built-in default.

mod audit;
mod count;
mod gate;
mod intercept;
#[cfg(feature = "lab")]
mod lab;
mod proxy;
mod replay;
mod stats;
mod wrap;

pub use audit::Plan as AuditPlan;
pub use count::CountSettings;
pub use gate::Gate;
pub use intercept::Intercept;
#[cfg(feature = "lab")]
pub use lab::Lab;
pub use proxy::ProxySettings;
pub use replay::Replay;
pub use stats::{ChartFile, Stats};
pub use wrap::Wrap;

use std::path::PathBuf;

use anyhow::Context;
use mcp_budget::budget::{Engine, Policy, SpillStore, DEFAULT_MAX_BYTES};
use mcp_budget::config::profiles::ClientList;
use mcp_budget::config::{load_sources, ProbeFile, ServerEnv, Sources, SDK_DEFAULT_VARS};
use mcp_budget::ground::tokens::Tokenizer;
use mcp_budget::ground::units::thousands;
use mcp_budget::judge::gate::{Thresholds, ToolLimits};

use crate::app::cli::{EngineArgs, ThresholdArgs, TrustArgs};

/// The engine every command runs: the built-in policy, then the probe files' `[policy]` tables,
/// then `--policy`; the budget from `--budget`, else `file_budget` (a probe file's
/// `[defaults]`); spilled originals in `--spill-dir`, else `default_spill`. The spill folder is
/// checked to take a file before anything is cut (a store that cannot hold a spill is an error
/// at start, never a silent loss later).
pub fn engine(
    args: &EngineArgs,
    probe_files: &[ProbeFile],
    file_budget: Option<usize>,
    tokenizer: Tokenizer,
    default_spill: PathBuf,
) -> anyhow::Result<Engine> {
    let mut policy = Policy::builtin();
    for probe in probe_files {
        if let Some(table) = &probe.policy {
            policy
                .extend_from_toml(table)
                .with_context(|| format!("in {}", probe.path.display()))?;
        }
    }
    if let Some(path) = &args.policy {
        policy.extend_from_file(path)?;
    }
    if let Some(b) = args.budget.or(file_budget) {
        policy.set_budget(b)?;
    }
    let dir = args.spill_dir.clone().unwrap_or(default_spill);
    let store = SpillStore::new(&dir, DEFAULT_MAX_BYTES);
    store
        .check_writable()
        .with_context(|| format!("the spill folder {} cannot be written", dir.display()))?;
    Ok(Engine::new(policy, tokenizer, store))
}

/// The engine of a command that reads no probe file (`replay`, `proxy`): its flags alone, spills
/// in `--spill-dir` or [`default_spill_dir`], tightened to the tightest limits of the `--client`
/// list; and the limits in words for the start-up line ("8,000 tokens, 10,000 bytes (Codex
/// CLI)").
fn client_engine(
    args: &EngineArgs,
    tokenizer: Tokenizer,
    clients: Option<&ClientList>,
) -> anyhow::Result<(Engine, String)> {
    let engine = engine(args, &[], None, tokenizer, default_spill_dir())?;
    let Some(clients) = clients else {
        let words = format!("{} tokens", thousands(engine.policy().budget()));
        return Ok((engine, words));
    };
    if clients.measured {
        anyhow::bail!(
            "--client: `measured` is for `audit` (it runs the clients in the lab); give client ids"
        );
    }
    let engine = engine.for_clients(&clients.profiles);
    let p = engine.policy().for_tool("");
    let words = match p.size.describe() {
        Some(size) => format!("{} tokens, {size}", thousands(p.budget)),
        None => format!("{} tokens", thousands(p.budget)),
    };
    Ok((engine, format!("{words} ({})", clients.names())))
}

/// `$XDG_CACHE_HOME/mcp-budget/spill`, else `~/.cache/mcp-budget/spill`: where `audit`,
/// `replay` and the proxy spill when `--spill-dir` is not given (outside any report folder).
pub fn default_spill_dir() -> PathBuf {
    xdg_dir("XDG_CACHE_HOME", ".cache")
        .unwrap_or_else(std::env::temp_dir)
        .join("mcp-budget/spill")
}

/// An XDG base folder: `$VAR` when it is an absolute path (the specification ignores a relative
/// one), else `~/<under_home>`; None without either.
pub fn xdg_dir(var: &str, under_home: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| home().map(|h| h.join(under_home)))
}

/// Where `mcp-budget login` keeps sign-ins: `$XDG_STATE_HOME/mcp-budget/auth` (an absolute
/// one: a relative one could put tokens into the folder a command runs in), else
/// `~/.local/state/mcp-budget/auth`.
pub fn auth_dir() -> Option<mcp_budget::wire::auth::AuthDir> {
    xdg_dir("XDG_STATE_HOME", ".local/state")
        .map(|base| mcp_budget::wire::auth::AuthDir::new(base.join("mcp-budget/auth")))
}

/// The probe files' `[gate]` tables, in order, each over the one before.
pub fn probe_thresholds(probe_files: &[ProbeFile]) -> anyhow::Result<Thresholds> {
    let mut t = Thresholds::default();
    for probe in probe_files {
        if let Some(table) = probe.gate.as_ref().and_then(toml::Value::as_table) {
            t = t.overlay(&Thresholds::from_toml(
                table,
                &probe.path.display().to_string(),
            )?);
        }
    }
    Ok(t)
}

/// The file thresholds with the flags on top; a bad value is a usage error that names it.
pub fn thresholds(files: Thresholds, flags: &ThresholdArgs) -> anyhow::Result<Thresholds> {
    let flags = Thresholds {
        max_tools_tokens: flags.max_tools_tokens,
        max_tool_count: flags.max_tool_count,
        fail_on: flags.fail_on,
        tools: ToolLimits {
            max_tool_tokens: flags.max_tool_tokens,
            max_raw_tokens: flags.max_raw_tokens,
            max_budgeted_tokens: flags.max_budgeted_tokens,
            max_regression_pct: flags.max_regression_pct,
        },
        overrides: Vec::new(),
    };
    let t = files.overlay(&flags);
    t.check().map_err(|(what, message)| {
        anyhow::anyhow!(
            "invalid gate threshold `--{}`: {message}",
            what.replace('_', "-")
        )
    })?;
    Ok(t)
}

/// Every server of `files`, or of the client configs discovered in the standard places when
/// there are none (from the current folder and the home folder); project servers run only when
/// trusted. Under `--clean-env`, `${VAR}` reads only what a server would get, and the variables
/// it withheld are named on stderr.
/// The embedded demo's probe file, parsed (what `audit` runs with no config, `lab` with no file).
pub fn demo() -> anyhow::Result<mcp_budget::config::ConfigFile> {
    Ok(mcp_budget::config::parse_config_text(
        std::path::Path::new("probes/demo.toml"),
        mcp_budget::wire::demo::DEMO_PROBES,
        None,
        &env_var,
    )?)
}

pub fn sources(files: &[PathBuf], trust: &TrustArgs) -> anyhow::Result<Sources> {
    let cwd = std::env::current_dir().context("cannot read the current folder")?;
    let env = server_env(trust);
    let withheld = std::cell::RefCell::new(std::collections::BTreeSet::new());
    let lookup = |name: &str| {
        if env.passes(name) {
            return env_var(name);
        }
        if std::env::var_os(name).is_some() {
            withheld.borrow_mut().insert(format!("${{{name}}}"));
        }
        None
    };
    let sources = load_sources(files, home().as_deref(), &cwd, &lookup, trust.trust_project);
    let withheld = withheld.into_inner();
    if !withheld.is_empty() {
        crate::app::printer::warn(&format!(
            "--clean-env: {} not read from the environment (configs read only {})",
            withheld.into_iter().collect::<Vec<_>>().join(", "),
            SDK_DEFAULT_VARS.join(", ")
        ));
    }
    Ok(sources)
}

/// The environment stdio servers start with.
pub fn server_env(trust: &TrustArgs) -> ServerEnv {
    if trust.clean_env {
        ServerEnv::SdkDefault
    } else {
        ServerEnv::Inherited
    }
}

/// The user's home directory, for discovery.
pub fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(Into::into)
}

/// Read an environment variable (for `${VAR}` in configs).
pub fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// The error of a command that needs the lab, in a build without it.
#[cfg(not(feature = "lab"))]
pub(crate) fn without_lab() -> anyhow::Error {
    anyhow::anyhow!(
        "this mcp-budget was built without the lab (the `lab` feature is off): build it with `--features lab` to run real clients"
    )
}
