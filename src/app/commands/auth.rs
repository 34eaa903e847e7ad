//! `mcp-budget login SERVER` and `logout SERVER`: the server found by name in the configs and
//! probe files (or given as a URL), the sign-in run through the library's `auth`, and one line
//! on stderr for what happened. The token is never printed.

use anyhow::Context;
use mcp_budget::config::TransportSpec;
use mcp_budget::wire::auth::{self, AuthDir, LoginOptions};

use crate::app::cli::{LoginArgs, LogoutArgs, ServerChoice, TrustArgs};
use crate::app::exit::Failure;
use crate::app::printer::warn;

/// The URL of the server the user named (a URL is taken as it is).
fn server_url(choice: &ServerChoice) -> anyhow::Result<(String, String)> {
    let s = &choice.server;
    if s.starts_with("http://") || s.starts_with("https://") {
        return Ok((s.clone(), s.clone()));
    }
    let trust = TrustArgs {
        trust_project: false,
        clean_env: false,
    };
    let sources = crate::app::settings::sources(&choice.configs, &trust)?;
    let all = sources.servers.servers.iter().chain(&sources.untrusted);
    let Some(spec) = all.into_iter().find(|x| &x.name == s) else {
        anyhow::bail!("{s}: no server of that name in the configs or probe files read (give its URL, or --config FILE)");
    };
    match &spec.transport {
        TransportSpec::Http { url, .. } | TransportSpec::Sse { url, .. } => {
            Ok((s.clone(), url.clone()))
        }
        _ => anyhow::bail!("{s}: not a remote server (stdio servers do not sign in)"),
    }
}

/// `login --client-credentials`: a token by the client credentials grant, the client kept.
fn machine_login(
    name: &str,
    url: &str,
    dir: &AuthDir,
    args: &LoginArgs,
    secret: Option<String>,
) -> anyhow::Result<()> {
    let client = auth::machine::Client {
        id: args.client_id.clone().unwrap_or_default(),
        secret: secret.unwrap_or_default(),
    };
    let got =
        super::runtime()?.block_on(auth::machine::token(url, &client, &args.scopes, Some(dir)));
    match got {
        Ok((_, expires)) => {
            let expires = expires.map_or(String::new(), |e| format!(", the token good for {e} s"));
            warn(&format!(
                "{name}: signed in as client {} (client credentials{expires}); kept in {}",
                client.id,
                dir.dir().display()
            ));
            Ok(())
        }
        Err(e) => {
            warn(&format!("{name}: sign-in failed: {e}"));
            Err(Failure::Reported.into())
        }
    }
}

fn auth_dir() -> anyhow::Result<AuthDir> {
    crate::app::settings::auth_dir().context("no state folder: set HOME or XDG_STATE_HOME")
}

pub fn login(args: LoginArgs) -> anyhow::Result<()> {
    let (name, url) = server_url(&args.choice)?;
    let dir = auth_dir()?;
    let client_secret = match &args.client_secret_env {
        Some(var) => Some(
            std::env::var(var).with_context(|| format!("--client-secret-env: {var} is not set"))?,
        ),
        None => None,
    };
    if args.client_credentials {
        return machine_login(&name, &url, &dir, &args, client_secret);
    }
    let opts = LoginOptions {
        client_id: args.client_id.clone(),
        client_secret,
        scopes: args.scopes.clone(),
        wait: std::time::Duration::from_secs(args.wait),
        redirect_port: args.redirect_port.unwrap_or(0),
        client_metadata_url: args.client_metadata_url.clone(),
    };
    if crate::app::signin::sign_in(&name, &url, &dir, &opts, !args.no_browser)? {
        Ok(())
    } else {
        Err(Failure::Reported.into())
    }
}

pub fn logout(args: LogoutArgs) -> anyhow::Result<()> {
    let (name, url) = server_url(&args.choice)?;
    let dir = auth_dir()?;
    // revoked at the authorization server first, where it offers that; the file goes either way
    let revoked = super::runtime()?.block_on(auth::revoke(&dir, &url));
    let how = match &revoked {
        Ok(auth::Revoked::Yes) => "its tokens revoked at its authorization server, ".to_string(),
        Ok(auth::Revoked::NotOffered) => {
            "its authorization server offers no revocation, so revoke it there by hand; "
                .to_string()
        }
        Ok(auth::Revoked::NothingKept) => String::new(),
        Err(e) => format!("not revoked ({e}); "),
    };
    match auth::logout(&dir, &url) {
        Ok(true) => warn(&format!(
            "{name}: signed out ({how}its sign-in file removed)"
        )),
        Ok(false) => warn(&format!("{name}: was not signed in")),
        Err(e) => {
            warn(&format!("{name}: {e}"));
            return Err(Failure::Reported.into());
        }
    }
    Ok(())
}
