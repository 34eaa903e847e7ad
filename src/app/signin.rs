//! Signing in as a person at a terminal sees it: the browser's flow of `mcp-budget login` (the
//! URL printed, a browser opened where there is a display, one line for how it went), and
//! `audit`'s offer to sign in. The offer asks only where stdin and stderr are terminals and
//! `CI` and `MCP_BUDGET_NO_PROMPT` are not set: for each remote server with no token of any
//! kind (no header of its own, no `MCP_BUDGET_TOKEN_<NAME>`, no client credentials, no kept
//! sign-in) that answers 401 with a `Bearer` challenge, it asks whether to sign in now. A run
//! with no terminal never waits (the server then fails in one line naming `mcp-budget login`).

use std::io::{BufRead, IsTerminal, Write};
use std::time::Duration;

use mcp_budget::config::ServerSpec;
use mcp_budget::wire::auth::{self, AuthDir, LoginOptions};

use crate::app::printer::warn;

/// How long the question to each server (does it sign in?) may take.
const ASKING: Duration = Duration::from_secs(5);

/// Offer a sign-in for each of `specs` that needs one, when a person is at the terminal.
pub fn offer_sign_ins(specs: &[ServerSpec]) {
    let quiet = ["CI", "MCP_BUDGET_NO_PROMPT"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()));
    if quiet || !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
        return;
    }
    let Some(dir) = crate::app::settings::auth_dir() else {
        return;
    };
    let Ok(runtime) = crate::app::runtime::runtime() else {
        return;
    };
    for spec in specs {
        let Some(url) = mcp_budget::wire::connect::without_token(spec, &dir) else {
            continue;
        };
        let asked =
            runtime.block_on(async { tokio::time::timeout(ASKING, auth::challenge(url)).await });
        if !matches!(asked, Ok(Ok(Some(_)))) {
            continue;
        }
        eprint!(
            "{}: it signs in with OAuth and no sign-in is kept: sign in now (a browser opens)? [Y/n] ",
            spec.name
        );
        let _ = std::io::stderr().flush();
        let mut answer = String::new();
        if std::io::stdin().lock().read_line(&mut answer).is_err() {
            return;
        }
        if !matches!(
            answer.trim().to_ascii_lowercase().as_str(),
            "" | "y" | "yes"
        ) {
            continue;
        }
        let opts = LoginOptions {
            wait: Duration::from_secs(300),
            ..LoginOptions::default()
        };
        // a failed sign-in is said; the audit goes on and the server fails in its one line
        let _ = sign_in(&spec.name, url, &dir, &opts, true);
    }
}

/// Run the browser's sign-in for `url` and say in one line how it went: whether it did.
pub fn sign_in(
    name: &str,
    url: &str,
    dir: &AuthDir,
    opts: &LoginOptions,
    browser: bool,
) -> anyhow::Result<bool> {
    let signed = crate::app::runtime::runtime()?.block_on(auth::login(dir, url, opts, |link| {
        warn(&format!("{name}: open this URL to sign in: {link}"));
        if browser {
            open_browser(link);
        }
    }));
    match signed {
        Ok(s) => {
            let expires = s
                .expires_in
                .map_or(String::new(), |e| format!(", the token good for {e} s"));
            let how = match s.client_from {
                auth::ClientFrom::Registered if s.document_ignored => {
                    "registered now: the authorization server does not advertise client metadata documents"
                }
                auth::ClientFrom::Registered => "registered now",
                auth::ClientFrom::PreRegistered => "pre-registered",
                auth::ClientFrom::MetadataDocument => "its metadata document",
            };
            warn(&format!(
                "{name}: signed in at {} (client {}, {how}{expires}); kept in {}",
                s.issuer.as_deref().unwrap_or("its authorization server"),
                s.client_id,
                dir.dir().display()
            ));
            Ok(true)
        }
        Err(e) => {
            // the redirect comes back only to a loopback listener: a pre-registered client
            // whose redirect URI is elsewhere never gets it (the browser's page says why)
            let hint = match (&e, &opts.client_id) {
                (auth::AuthFailure::NoRedirect(_), Some(_)) => {
                    " (a pre-registered client's redirect URI must be a loopback one, \
                     http://127.0.0.1:PORT/callback, given with --redirect-port PORT; the \
                     browser's page says what the authorization server refused)"
                }
                _ => "",
            };
            warn(&format!("{name}: sign-in failed: {e}{hint}"));
            Ok(false)
        }
    }
}

/// Open `link` in the user's browser where there is a display; nothing otherwise (the URL is
/// printed either way). The URL goes as one argument to the opener, never through a shell.
fn open_browser(link: &str) {
    let display =
        std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some();
    let opener = if cfg!(target_os = "macos") {
        Some("open")
    } else if display {
        Some("xdg-open")
    } else {
        None
    };
    if let Some(o) = opener {
        let _ = std::process::Command::new(o)
            .arg(link)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
    }
}
