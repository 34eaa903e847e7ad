//! `mcp-budget servers`: what discovery (or the files given) finds, whether each server may be
//! started and with which environment, secrets redacted.

use mcp_budget::config::{Sources, TransportSpec};
use mcp_budget::output::report::{render_servers, SignIns};
use mcp_budget::wire::auth::{self, SignInStatus};

use crate::app::cli::{ListFormat, ServersArgs};
use crate::app::exit::Failure;

pub fn run(args: ServersArgs) -> anyhow::Result<()> {
    let sources = crate::app::settings::sources(&args.configs, &args.trust)?;
    if args.configs.is_empty() && sources.files.is_empty() && sources.file_errors.is_empty() {
        crate::app::printer::warn(&nothing_found());
        if args.format == ListFormat::Table {
            return Ok(());
        }
    }
    let env = crate::app::settings::server_env(&args.trust);
    let sign_in = sign_ins(&sources);
    crate::app::printer::rendered(args.format == ListFormat::Table, |out| {
        render_servers(
            &sources,
            env,
            &sign_in,
            args.format.listing(args.width),
            out,
        )
    })?;
    let broken = !sources.file_errors.is_empty() || !sources.servers.errors.is_empty();
    Failure::unless_failed(broken)
}

/// What `servers` says when no config is found: where it looked, and what to run next.
fn nothing_found() -> String {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let cwd = std::env::current_dir().unwrap_or_default();
    let places = mcp_budget::config::standard_places(home.as_deref(), &cwd);
    let shown = |p: &std::path::Path| match home.as_deref().and_then(|h| p.strip_prefix(h).ok()) {
        Some(rest) => format!("~/{}", rest.display()),
        None => p.display().to_string(),
    };
    let mut text = format!(
        "no MCP client config found; looked in {} places:",
        places.len()
    );
    for place in &places {
        let project = if place.project { ", a project's" } else { "" };
        text += &format!(
            "\n  {} ({}{project})",
            shown(&place.path),
            place.client.id()
        );
    }
    text += "\nnext: `mcp-budget audit` audits the embedded demo server; `mcp-budget servers \
             --config FILE` reads a config or probe file kept elsewhere; a probe file's shape is \
             in probes/demo.toml (docs/audit.md)";
    text
}

/// The sign-in kept for each remote server (from the files alone: nothing is sent): signed in
/// and for how long, or that it needs `mcp-budget login` again. A server with none is left out
/// (whether it signs in at all is known only by asking it).
fn sign_ins(sources: &Sources) -> SignIns {
    let mut out = SignIns::new();
    let Some(dir) = crate::app::settings::auth_dir() else {
        return out;
    };
    for s in sources.servers.servers.iter().chain(&sources.untrusted) {
        let (TransportSpec::Http { url, .. } | TransportSpec::Sse { url, .. }) = &s.transport
        else {
            continue;
        };
        let state = match auth::status(&dir, url) {
            Ok(SignInStatus::NotSignedIn) => continue,
            Ok(SignInStatus::SignedIn {
                expires_in,
                refreshable,
            }) => match (expires_in, refreshable) {
                (Some(left), _) if left > 0 => format!(
                    "signed in, the token good for {}{}",
                    mcp_budget::ground::units::duration_words(left as u64),
                    if refreshable { " (refreshable)" } else { "" }
                ),
                (Some(_), true) => "signed in, the token expired (refreshed on next use)".into(),
                (Some(_), false) => format!("needs `mcp-budget login {}` (expired)", s.name),
                (None, _) => "signed in".into(),
            },
            Err(e) => format!("its sign-in cannot be read: {e}"),
        };
        out.insert(s.name.clone(), state);
    }
    out
}
