//! `audit` in a terminal offers to sign in: a remote server with no token of any kind (no
//! header of its own, no `MCP_BUDGET_TOKEN_<NAME>`, no client credentials, no kept sign-in)
//! that answers 401 with a `Bearer` challenge is named, and the user asked whether to sign in
//! now (the browser's flow, as `login`). Only where both stdin and stderr are terminals and
//! `CI` and `MCP_BUDGET_NO_PROMPT` are not set: a run with no terminal never waits (the server
//! then fails in one line naming `mcp-budget login NAME`).

use std::io::{BufRead, IsTerminal, Write};
use std::time::Duration;

use mcp_budget::auth::{self, LoginOptions, Status};
use mcp_budget::config::{ServerSpec, TransportSpec};

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
    let Some(dir) = crate::settings::auth_dir() else {
        return;
    };
    let Ok(runtime) = super::super::runtime() else {
        return;
    };
    for spec in specs {
        let Some(url) = without_token(spec, &dir) else {
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
        let _ = super::sign_in(&spec.name, url, &dir, &opts, true);
    }
}

/// The URL of a remote server that has no token of any kind.
fn without_token<'a>(spec: &'a ServerSpec, dir: &auth::AuthDir) -> Option<&'a str> {
    let (TransportSpec::Http { url, headers } | TransportSpec::Sse { url, headers }) =
        &spec.transport
    else {
        return None;
    };
    let given = headers
        .keys()
        .any(|k| k.eq_ignore_ascii_case("authorization"))
        || std::env::var_os(auth::token_variable(&spec.name)).is_some()
        || auth::machine::from_env(&spec.name).is_some();
    let kept = matches!(auth::status(dir, url), Ok(Status::SignedIn { .. }));
    (!given && !kept).then_some(url.as_str())
}
