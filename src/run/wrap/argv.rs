//! What a wrapped entry runs: `mcp-budget proxy --client ID --name NAME [options] -- <the
//! original command>` for a stdio server, or `... --upstream-url URL --header-env 'Name: VAR'`
//! for a remote one, its header values moved into the entry's environment (never argv, which
//! every local user sees in `ps`).

use std::path::PathBuf;

use crate::config::ClientKind;

/// What every wrapped entry gets, whatever its client.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Options {
    /// The mcp-budget binary the client runs (an absolute path: a client started from a desktop
    /// has no shell's PATH; in a shared file, `mcp-budget` as the PATH finds it).
    pub bin: String,
    /// `bin` was named (`--bin`): a shared file gets it as given too.
    pub bin_given: bool,
    pub budget: Option<usize>,
    /// Absolute.
    pub policy: Option<PathBuf>,
    pub lazy_tools: bool,
    /// Absolute; one log for every proxy (each line is appended whole).
    pub log: Option<PathBuf>,
    /// Export telemetry (`proxy --otlp`).
    pub otlp: bool,
    /// Variables every proxy gets in its entry's environment (the `OTEL_*` ones of the caller;
    /// in a shared file, each secret as a reference the client fills).
    pub env: Vec<(String, String)>,
    /// Variables every proxy gets passed through by name, never written (Codex's `env_vars`).
    pub pass: Vec<String>,
    /// The file is shared (in a git work tree), and whose it is: a header's value moves into
    /// `env` only as references the client fills.
    pub shared: Option<ClientKind>,
    /// Also wrap a remote entry with no header: it may sign in with OAuth through its client,
    /// which a proxy cannot do, so it is left alone unless asked.
    pub remote_without_headers: bool,
    /// Where `mcp-budget login` keeps sign-ins: a remote entry with no header that has one
    /// there is wrapped (the proxy signs in for it, with the kept sign-in, and renews it).
    pub sign_ins: Option<crate::wire::auth::AuthDir>,
}

/// The client profile (`profiles/clients.toml`) whose limits a proxy in front of `client`'s
/// servers meets; Windsurf has none, and the generic file belongs to no client.
pub fn profile_of(client: ClientKind) -> Option<&'static str> {
    match client {
        ClientKind::ClaudeDesktop => Some("claude-desktop"),
        ClientKind::ClaudeCode => Some("claude-code"),
        ClientKind::Cursor => Some("cursor"),
        ClientKind::VsCode => Some("vscode"),
        ClientKind::Gemini => Some("gemini-cli"),
        ClientKind::Codex => Some("codex"),
        ClientKind::Windsurf | ClientKind::Generic => None,
    }
}

/// The proxy's arguments before the upstream: `proxy --client ID --name NAME ...`.
pub fn proxy_prefix(client: ClientKind, name: &str, options: &Options) -> Vec<String> {
    let mut out = vec!["proxy".to_string()];
    if let Some(id) = profile_of(client) {
        out.extend(["--client".into(), id.into()]);
    }
    // one word, `--name=NAME`: a name such as `--` or `-v` stays a value
    out.push(format!("--name={name}"));
    if let Some(b) = options.budget {
        out.extend(["--budget".into(), b.to_string()]);
    }
    if let Some(p) = &options.policy {
        out.extend(["--policy".into(), p.display().to_string()]);
    }
    if options.lazy_tools {
        out.push("--lazy-tools".into());
    }
    if let Some(l) = &options.log {
        out.extend(["--log".into(), l.display().to_string()]);
    }
    if options.otlp {
        out.push("--otlp".into());
    }
    out
}

/// Why the binary written into the configs may stop working, if it may: it is (or the PATH
/// finds it) under a build folder (`target/`, which a rebuild or `cargo clean` replaces) or a
/// temporary folder, or a bare name the PATH does not find.
pub fn fragile_binary(bin: &str) -> Option<String> {
    let path = if bin.contains('/') {
        PathBuf::from(bin)
    } else {
        let found = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .unwrap_or_default()
            .into_iter()
            .map(|d| d.join(bin))
            .find(|c| c.is_file());
        match found {
            Some(p) => p,
            None => {
                return Some(format!(
                    "`{bin}` is not on this PATH: the clients cannot start the proxies written \
                     as `{bin}` until it is (`cargo install --locked --path .` in a clone)"
                ))
            }
        }
    };
    let real = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
    let shown = if path == real {
        path.display().to_string()
    } else {
        format!("{} ({})", path.display(), real.display())
    };
    let in_build = real
        .ancestors()
        .any(|a| a.file_name().is_some_and(|n| n == "target"));
    let temps = [
        std::env::temp_dir(),
        "/tmp".into(),
        "/var/tmp".into(),
        "/dev/shm".into(),
    ];
    let in_temp = temps.iter().any(|t| {
        let t = std::fs::canonicalize(t).unwrap_or_else(|_| t.clone());
        real.starts_with(&t)
    });
    let place = match (in_build, in_temp) {
        (true, _) => "a build folder (target/), which a rebuild or `cargo clean` replaces",
        (false, true) => "a temporary folder, which is emptied",
        _ => return None,
    };
    Some(format!(
        "the binary written into the configs, {shown}, is in {place}: install it \
         (`cargo install --locked --path .` in a clone) or name a lasting one with --bin"
    ))
}

/// Keys of a remote entry that say its client signs in for it (Claude Code's `headersHelper`,
/// Gemini CLI's `authProviderType` and `oauth`, ...): a proxy in front would lose that.
const CLIENT_AUTH_KEYS: [&str; 4] = ["headersHelper", "oauth", "authProviderType", "auth"];

/// Query parameters that carry a credential in URLs seen in configs, besides the ones the
/// redactor knows (`api_key`, `token`, ...).
const CREDENTIAL_PARAMS: [&str; 8] = [
    "pat",
    "bearer",
    "t",
    "access",
    "auth",
    "sig",
    "signature",
    "code",
];

/// Why a remote entry is left alone, if it is: its URL holds a credential (which argv would
/// show), its client signs in for it, or it has no header and `remote_without_headers` is off.
pub fn remote_refusal(
    url: &str,
    keys: &[&str],
    has_headers: bool,
    options: &Options,
) -> Option<String> {
    let query = url.split_once('?').map_or("", |(_, q)| q);
    let credential_param = query.split('&').any(|kv| {
        let name = kv.split('=').next().unwrap_or("").to_ascii_lowercase();
        CREDENTIAL_PARAMS.contains(&name.as_str()) || crate::config::is_secret_name(&name)
    });
    if crate::config::redact_url(url) != url || credential_param {
        return Some(
            "its URL carries a credential, which a wrapped entry would show in argv; left as it is"
                .into(),
        );
    }
    if let Some(k) = keys.iter().find(|k| CLIENT_AUTH_KEYS.contains(k)) {
        return Some(format!(
            "its client signs in for it (`{k}`), which a proxy in front cannot do; left as it is"
        ));
    }
    let signed_in = options.sign_ins.as_ref().is_some_and(|dir| {
        matches!(
            crate::wire::auth::status(dir, url),
            Ok(crate::wire::auth::SignInStatus::SignedIn { .. })
        )
    });
    if !has_headers && !options.remote_without_headers && !signed_in {
        return Some(
            "a remote server with no header may sign in with OAuth through its client; left as \
             it is (sign in with `mcp-budget login NAME` first and the proxy signs in for it, or \
             --remote-without-headers wraps it as it is)"
                .into(),
        );
    }
    None
}

/// The variable that carries header `name`'s value: `MCP_BUDGET_HEADER_` and the name in
/// upper case, every other character `_`; `taken` names already used in this entry.
pub fn header_var(name: &str, taken: &[String]) -> String {
    let base = format!("MCP_BUDGET_HEADER_{}", crate::config::variable_part(name));
    let mut var = base.clone();
    let mut n = 2;
    while taken.contains(&var) {
        var = format!("{base}_{n}");
        n += 1;
    }
    var
}

/// Whether an entry's command and arguments are already a proxy of ours: the command is an
/// `mcp-budget` binary and its first argument `proxy`.
pub fn is_wrapped(command: &str, first_arg: Option<&str>) -> bool {
    let file = std::path::Path::new(command)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(command);
    file.starts_with("mcp-budget") && first_arg == Some("proxy")
}

/// The original command and arguments of a wrapped stdio entry: what follows `--`.
pub fn original_command(args: &[String]) -> Option<&[String]> {
    let at = args.iter().position(|a| a == "--")?;
    let rest = &args[at + 1..];
    (!rest.is_empty()).then_some(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefix_names_the_client_profile_and_passes_the_options() {
        let options = Options {
            bin: "/bin/mcp-budget".into(),
            budget: Some(4000),
            policy: Some("/p/policy.toml".into()),
            lazy_tools: true,
            log: Some("/l/calls.jsonl".into()),
            otlp: true,
            ..Options::default()
        };
        assert_eq!(
            proxy_prefix(ClientKind::Gemini, "gh", &options),
            [
                "proxy",
                "--client",
                "gemini-cli",
                "--name=gh",
                "--budget",
                "4000",
                "--policy",
                "/p/policy.toml",
                "--lazy-tools",
                "--log",
                "/l/calls.jsonl",
                "--otlp"
            ]
        );
        // no profile for Windsurf: the proxy's own budget applies
        assert_eq!(
            proxy_prefix(ClientKind::Windsurf, "x", &Options::default()),
            ["proxy", "--name=x"]
        );
    }

    #[test]
    fn header_variables_are_unique_and_plain() {
        let a = header_var("Authorization", &[]);
        assert_eq!(a, "MCP_BUDGET_HEADER_AUTHORIZATION");
        let x = header_var("x-api-key", &[]);
        assert_eq!(x, "MCP_BUDGET_HEADER_X_API_KEY");
        assert_eq!(
            header_var("X_Api_Key", std::slice::from_ref(&x)),
            "MCP_BUDGET_HEADER_X_API_KEY_2"
        );
    }

    #[test]
    fn a_wrapped_entry_is_recognised_and_its_original_found() {
        assert!(is_wrapped("/usr/local/bin/mcp-budget", Some("proxy")));
        assert!(!is_wrapped("mcp-budget", Some("audit")));
        assert!(!is_wrapped("npx", Some("proxy")));
        let args: Vec<String> = ["proxy", "--name=--", "--", "npx", "-y", "pkg"]
            .map(String::from)
            .to_vec();
        assert_eq!(original_command(&args).unwrap(), ["npx", "-y", "pkg"]);
        assert_eq!(original_command(&args[..2]), None);
    }
}

#[cfg(test)]
mod remote_tests {
    use super::*;

    #[test]
    fn remote_entries_are_left_when_a_proxy_would_show_a_credential_or_lose_a_sign_in() {
        let o = Options::default();
        let refused =
            |url: &str, keys: &[&str], headers: bool| remote_refusal(url, keys, headers, &o);
        assert!(refused("https://h/mcp?api_key=x", &[], true)
            .unwrap()
            .contains("credential"));
        assert!(refused("https://h/mcp?pat=x", &[], true)
            .unwrap()
            .contains("credential"));
        assert!(refused("https://u:p@h/mcp", &[], true)
            .unwrap()
            .contains("credential"));
        assert!(refused("https://h/mcp", &["headersHelper"], true)
            .unwrap()
            .contains("headersHelper"));
        assert!(refused("https://h/mcp", &[], false)
            .unwrap()
            .contains("OAuth"));
        assert_eq!(refused("https://h/mcp?project=a", &[], true), None);
        let open = Options {
            remote_without_headers: true,
            ..Options::default()
        };
        assert_eq!(remote_refusal("https://h/mcp", &[], false, &open), None);
        // a remote entry mcp-budget keeps a sign-in for is wrapped: the proxy signs in for it
        let dir = tempfile::tempdir().unwrap();
        let sign_ins = crate::wire::auth::AuthDir::new(dir.path().to_path_buf());
        let kept: crate::wire::auth::SignIn = serde_json::from_value(serde_json::json!({
            "server_url": "https://h/mcp",
            "registration": {"client_id": "c", "redirect_uri": "http://127.0.0.1:9/callback"},
            "credentials": {"client_id": "c", "granted_scopes": [], "token_received_at": 1,
                "token_response": {"access_token": "a", "token_type": "bearer"}}
        }))
        .unwrap();
        sign_ins.save(&kept).unwrap();
        let signed = Options {
            sign_ins: Some(sign_ins),
            ..Options::default()
        };
        assert_eq!(remote_refusal("https://h/mcp", &[], false, &signed), None);
        assert!(remote_refusal("https://other/mcp", &[], false, &signed).is_some());
    }
}
