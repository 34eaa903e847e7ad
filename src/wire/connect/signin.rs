//! A remote server's token: the spec's own `Authorization` header wins; else
//! `MCP_BUDGET_TOKEN_<NAME>` (CI); else a token by the client credentials grant for the client
//! `MCP_BUDGET_CLIENT_ID_<NAME>` and `MCP_BUDGET_CLIENT_SECRET_<NAME>` give (CI); else the
//! sign-in `mcp-budget login` kept, refreshed when due.
//! The token goes into the spec as a header, so the redactor built from the spec redacts it in
//! every message, transcript and report like any configured header.

use std::borrow::Cow;

use crate::config::{ServerSpec, TransportSpec};
use crate::wire::auth::{self, AuthFailure};
use crate::wire::upstream::{SessionOptions, UpstreamError};

/// The spec with its token, and whether the token came from a kept sign-in (which can be
/// refreshed when the server refuses it).
pub(super) async fn authorized<'a>(
    spec: &'a ServerSpec,
    opts: &SessionOptions,
) -> Result<(Cow<'a, ServerSpec>, bool), UpstreamError> {
    let Some(url) = needs_token(spec) else {
        return Ok((Cow::Borrowed(spec), false));
    };
    if let Some(token) = env_token(spec) {
        return Ok((Cow::Owned(with_token(spec, token.trim())), false));
    }
    // CI's machine client: a token by the client credentials grant, nothing kept
    if let Some(client) = auth::machine::from_env(&spec.name) {
        return match auth::machine::token(url, &client, &[], None).await {
            Ok((token, _)) => Ok((Cow::Owned(with_token(spec, &token)), false)),
            Err(e) => Err(UpstreamError::Initialize {
                message: format!(
                    "signing in with the client credentials of {}: {e}",
                    auth::machine::variables(&spec.name).0
                ),
            }),
        };
    }
    let Some(dir) = &opts.auth else {
        return Ok((Cow::Borrowed(spec), false));
    };
    match auth::bearer(dir, url).await {
        Ok(token) => Ok((Cow::Owned(with_token(spec, &token)), true)),
        Err(AuthFailure::NotSignedIn) => Ok((Cow::Borrowed(spec), false)),
        Err(e) => Err(failed(spec, &e)),
    }
}

/// The session's options for `spec`: the name `mcp-budget login` is given for it, and the kept
/// sign-in its token came from (`stored`), which the HTTP bridge renews while the session runs.
pub(super) fn session_options(
    spec: &ServerSpec,
    opts: &SessionOptions,
    stored: bool,
) -> SessionOptions {
    let url = needs_token(spec);
    let signed_in = match (url, &opts.auth) {
        (Some(url), Some(dir)) if stored => Some(auth::InUse {
            dir: dir.clone(),
            url: url.to_string(),
            name: login_name(spec),
        }),
        _ => None,
    };
    SessionOptions {
        login_name: url.map(|_| login_name(spec)),
        signed_in,
        ..opts.clone()
    }
}

/// What `mcp-budget login` is given for `spec`: its name, or for a server given on the command
/// line (`proxy --upstream-url`), its URL.
fn login_name(spec: &ServerSpec) -> String {
    match &spec.transport {
        TransportSpec::Http { url, .. } | TransportSpec::Sse { url, .. }
            if spec.origin.file == "<command line>" =>
        {
            crate::config::redact_url(url)
        }
        _ => spec.name.clone(),
    }
}

/// The spec with a fresh token after the server refused the kept one: `None` when there is no
/// kept sign-in to refresh.
pub(super) async fn refreshed(
    spec: &ServerSpec,
    opts: &SessionOptions,
) -> Result<Option<ServerSpec>, UpstreamError> {
    let (Some(url), Some(dir)) = (needs_token(spec), &opts.auth) else {
        return Ok(None);
    };
    match auth::refresh(dir, url).await {
        Ok(token) => Ok(Some(with_token(spec, &token))),
        Err(AuthFailure::NotSignedIn) => Ok(None),
        Err(e) => Err(failed(spec, &e)),
    }
}

/// Whether the server answered 401 (it wants a token, or refused the one it got).
pub(super) fn unauthorized(e: &UpstreamError) -> bool {
    e.to_string().contains("HTTP 401")
}

/// A 401 with what to do about it.
pub(super) fn hint(spec: &ServerSpec, e: UpstreamError) -> UpstreamError {
    if !unauthorized(&e) || needs_token(spec).is_none() {
        return e;
    }
    UpstreamError::Initialize {
        message: format!(
            "{e}: it signs in: run `mcp-budget login {}` (or set {})",
            login_name(spec),
            auth::token_variable(&spec.name)
        ),
    }
}

/// A sign-in that failed, as the server's one line.
fn failed(spec: &ServerSpec, e: &AuthFailure) -> UpstreamError {
    let fix = if e.needs_login() {
        format!(": run `mcp-budget login {}`", login_name(spec))
    } else {
        String::new()
    };
    UpstreamError::Initialize {
        message: format!("signing in: {e}{fix}"),
    }
}

/// The URL of a remote server that has no token of any kind: none of the sources
/// [`authorized`] takes one from (its own header, `MCP_BUDGET_TOKEN_<NAME>`, the client
/// credentials variables, a kept sign-in) gives one: what `audit` offers a sign-in for.
pub fn without_token<'a>(spec: &'a ServerSpec, dir: &auth::AuthDir) -> Option<&'a str> {
    let url = needs_token(spec)?;
    let given = env_token(spec).is_some()
        || auth::machine::from_env(&spec.name).is_some()
        || matches!(
            auth::status(dir, url),
            Ok(auth::SignInStatus::SignedIn { .. })
        );
    (!given).then_some(url)
}

/// CI's token for `spec` (`MCP_BUDGET_TOKEN_<NAME>`), when set and not blank.
fn env_token(spec: &ServerSpec) -> Option<String> {
    std::env::var(auth::token_variable(&spec.name))
        .ok()
        .filter(|t| !t.trim().is_empty())
}

/// The URL of a remote server that has no `Authorization` header of its own.
fn needs_token(spec: &ServerSpec) -> Option<&str> {
    let (url, headers) = match &spec.transport {
        TransportSpec::Http { url, headers } | TransportSpec::Sse { url, headers } => {
            (url, headers)
        }
        _ => return None,
    };
    let has = headers
        .keys()
        .any(|k| k.eq_ignore_ascii_case("authorization"));
    (!has).then_some(url.as_str())
}

fn with_token(spec: &ServerSpec, token: &str) -> ServerSpec {
    let mut spec = spec.clone();
    if let TransportSpec::Http { headers, .. } | TransportSpec::Sse { headers, .. } =
        &mut spec.transport
    {
        headers.insert("Authorization".into(), format!("Bearer {token}"));
    }
    spec
}
