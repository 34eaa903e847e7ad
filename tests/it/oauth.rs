//! Servers that sign in with OAuth (issue 40), against the official Python SDK's authorization
//! server and resource server (tests/fixtures/oauth_server.py) on 127.0.0.1: `login` (dynamic
//! registration, PKCE, the loopback redirect, followed here as a browser would), `audit` with
//! the kept token and no prompt, a refresh when the token expires, a revoked sign-in in one
//! line, a pre-registered client, a token from the environment, and no token in any file the
//! audit writes.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::{bin_path, free_port, serve_on, venv_python, Served};

mod hostile;
mod oidc;
mod renew;
mod terminal;
mod wrap;

/// The SDK's OAuth server on a free port, with `extra` flags.
fn oauth_server(extra: &[&str]) -> Option<(Served, u16)> {
    let python = venv_python("mcp", "the OAuth server tests")?;
    let port = free_port();
    let mut cmd = Command::new(python);
    cmd.arg(crate::support::repo().join("tests/fixtures/oauth_server.py"))
        .arg(port.to_string())
        .arg("--admin")
        .args(extra);
    Some((serve_on(cmd, port), port))
}

/// A GET as a browser makes it, following redirects (the authorize step consents at once and
/// redirects to the loopback listener): the last status.
fn browse(url: &str) -> u16 {
    let mut url = url.to_string();
    for _ in 0..10 {
        let rest = url.strip_prefix("http://").expect("http only");
        let (host, path) = rest
            .split_once('/')
            .map_or((rest, "/".to_string()), |(h, p)| (h, format!("/{p}")));
        let mut s = std::net::TcpStream::connect(host).unwrap();
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        let status: u16 = text.split(' ').nth(1).unwrap().parse().unwrap();
        let location = text.lines().take_while(|l| !l.is_empty()).find_map(|l| {
            l.strip_prefix("location: ")
                .or_else(|| l.strip_prefix("Location: "))
        });
        match (status, location) {
            (300..=399, Some(to)) if to.starts_with("http") => url = to.trim().to_string(),
            (300..=399, Some(to)) => url = format!("http://{host}{}", to.trim()),
            _ => return status,
        }
    }
    panic!("too many redirects from {url}")
}

/// `mcp-budget login NAME` as a user runs it: the URL it prints opened in the "browser"; its
/// exit code and stderr.
fn login(home: &Path, probes: &Path, name: &str, extra: &[&str]) -> (i32, String) {
    login_with(home, probes, name, extra, |url| url.to_string())
}

/// [`login`], the authorization URL changed by `tamper` before the "browser" opens it.
fn login_with(
    home: &Path,
    probes: &Path,
    name: &str,
    extra: &[&str],
    tamper: impl Fn(&str) -> String,
) -> (i32, String) {
    let mut args = vec![name, "--wait", "60", "--config", probes.to_str().unwrap()];
    args.extend(extra);
    login_opening(home, &args, |url, said| {
        assert_eq!(browse(&tamper(url)), 200, "{said}");
    })
}

/// `mcp-budget login --no-browser ARGS`, `open` given the authorization URL it prints (and what
/// it said so far) as the browser would be: its exit code and stderr.
fn login_opening(home: &Path, args: &[&str], mut open: impl FnMut(&str, &str)) -> (i32, String) {
    let mut child = mcp(home)
        .args(["login", "--no-browser"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let (mut said, mut line) = (String::new(), String::new());
    while err.read_line(&mut line).unwrap() > 0 {
        said.push_str(&line);
        if let Some((_, url)) = line.split_once("open this URL to sign in: ") {
            open(url.trim(), &said);
        }
        line.clear();
    }
    (child.wait().unwrap().code().unwrap_or(-1), said)
}

fn probe_file(dir: &Path, port: u16) -> std::path::PathBuf {
    let p = dir.join("probes.toml");
    std::fs::write(
        &p,
        format!(
            "[servers.orders]\nurl = \"http://127.0.0.1:{port}/mcp\"\n\n[[servers.orders.probes]]\ntool = \"list_orders\"\narguments = {{ limit = 2 }}\n"
        ),
    )
    .unwrap();
    p
}

/// mcp-budget with `home` as HOME, its state folder under it.
fn mcp(home: &Path) -> Command {
    let mut cmd = Command::new(bin_path());
    cmd.env("HOME", home).env_remove("XDG_STATE_HOME");
    cmd
}

/// `mcp-budget ARGS --config PROBES`: its stdout and stderr.
fn with_probes(home: &Path, args: &[&str], probes: &Path) -> (String, String) {
    let out = mcp(home)
        .args(args)
        .arg("--config")
        .arg(probes)
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (text(&out.stdout), text(&out.stderr))
}

fn audit(home: &Path, probes: &Path, out: &Path) -> std::process::Output {
    audit_as(mcp(home), probes, out)
}

/// An audit with no sign-in kept and the token in `MCP_BUDGET_TOKEN_ORDERS`.
fn audit_with_token(token: &str, probes: &Path, out: &Path) -> std::process::Output {
    let home = tempfile::tempdir().unwrap();
    let mut cmd = mcp(home.path());
    cmd.env("MCP_BUDGET_TOKEN_ORDERS", token);
    audit_as(cmd, probes, out)
}

fn audit_as(mut cmd: Command, probes: &Path, out: &Path) -> std::process::Output {
    cmd.arg("audit")
        .arg(probes)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

/// The sign-in kept under `home`, as JSON.
fn kept(home: &Path) -> serde_json::Value {
    serde_json::from_str(&all_text(&home.join(".local/state/mcp-budget/auth"))).unwrap()
}

/// The access token kept under `home`.
fn kept_token(home: &Path) -> String {
    kept(home)["credentials"]["token_response"]["access_token"]
        .as_str()
        .unwrap()
        .to_string()
}

fn grants(port: u16) -> serde_json::Value {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "GET /test/grants HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    serde_json::from_str(text.split("\r\n\r\n").nth(1).unwrap()).unwrap()
}

/// Every file under `dir`, as text.
fn all_text(dir: &Path) -> String {
    let mut out = String::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out += &all_text(&p);
        } else {
            out += &String::from_utf8_lossy(&std::fs::read(&p).unwrap());
        }
    }
    out
}

#[test]
fn a_server_that_signs_in_is_audited_after_login_with_no_prompt_and_no_token_in_the_report() {
    let Some((_server, port)) = oauth_server(&[]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let probes = probe_file(home.path(), port);
    // before: one line that says what to do, the other servers still audited
    let before = audit(home.path(), &probes, &home.path().join("before"));
    let said = String::from_utf8_lossy(&before.stderr);
    assert!(said.contains("HTTP 401"), "{said}");
    assert!(said.contains("run `mcp-budget login orders`"), "{said}");
    // login: registered dynamically, PKCE, the loopback redirect
    let (code, said) = login(home.path(), &probes, "orders", &[]);
    assert_eq!(code, 0, "{said}");
    assert!(
        said.contains("orders: signed in at http://127.0.0.1:"),
        "{said}"
    );
    assert!(said.contains("registered now"), "{said}");
    let state = home.path().join(".local/state/mcp-budget/auth");
    let token = kept_token(home.path());
    assert!(token.starts_with("at-"));
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&state), 0o700);
        for e in std::fs::read_dir(&state).unwrap().flatten() {
            assert_eq!(mode(&e.path()), 0o600);
        }
    }
    assert!(!said.contains(&token), "the token was printed: {said}");
    // `servers` says where it stands, from the file alone
    let (table, _) = with_probes(home.path(), &["servers"], &probes);
    assert!(
        table.contains("sign-in: `orders` signed in, the token good for ")
            && table.contains(" min (refreshable)"),
        "{table}"
    );
    // a relative XDG_STATE_HOME is not used (it would keep tokens in the folder a command runs
    // in, a repository's perhaps): the sign-in is still the one under HOME
    let relative = mcp(home.path())
        .env("XDG_STATE_HOME", "state")
        .current_dir(home.path())
        .args(["servers", "--config"])
        .arg(&probes)
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&relative.stdout);
    assert!(table.contains("sign-in: `orders` signed in"), "{table}");
    let (json, _) = with_probes(home.path(), &["servers", "--format", "json"], &probes);
    let listed: serde_json::Value = serde_json::from_str(&json).unwrap();
    let sign_in = listed["servers"][0]["sign_in"].as_str().unwrap();
    assert!(
        sign_in.starts_with("signed in, the token good for"),
        "{listed:#}"
    );
    assert!(!json.contains(&token));
    // the audit: no prompt, the tool listed and probed with the kept token
    let out = home.path().join("after");
    let after = audit(home.path(), &probes, &out);
    let stderr = String::from_utf8_lossy(&after.stderr);
    assert_eq!(after.status.code(), Some(0), "{stderr}");
    let report = crate::support::read_report(&out);
    let server = &report["servers"][0];
    assert_eq!(server["status"], "ok", "{server:#}");
    assert_eq!(server["tools"].as_array().unwrap().len(), 2, "{server:#}");
    let probe = &server["probes"][0];
    assert_eq!(probe["tool"], "list_orders", "{server:#}");
    assert_eq!(probe["status"], "ok", "{probe:#}");
    assert!(
        probe["raw"]["text_chars"].as_u64().unwrap() > 40,
        "{probe:#}"
    );
    // the token is nowhere in what the audit wrote, nor on its stderr
    assert!(!all_text(&out).contains(&token));
    assert!(!stderr.contains(&token));
    assert_eq!(grants(port)["authorization_code"], 1);
    // logout revokes at the authorization server (RFC 7009), then the token is refused
    let (_, said) = with_probes(home.path(), &["logout", "orders"], &probes);
    assert!(
        said.contains("orders: signed out (its tokens revoked at its authorization server, its sign-in file removed)"),
        "{said}"
    );
    let after = audit_with_token(&token, &probes, &home.path().join("refused"));
    assert!(String::from_utf8_lossy(&after.stderr).contains("HTTP 401"));
}

#[test]
fn an_expired_token_is_refreshed_and_a_revoked_sign_in_is_one_line() {
    // tokens of 2 s, the refresh token rotated on every refresh
    let Some((_server, port)) = oauth_server(&["--ttl", "2", "--rotate"]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let probes = probe_file(home.path(), port);
    let (code, said) = login(home.path(), &probes, "orders", &[]);
    assert_eq!(code, 0, "{said}");
    let refresh_of = || kept(home.path())["credentials"]["token_response"]["refresh_token"].clone();
    let first = refresh_of();
    std::thread::sleep(std::time::Duration::from_secs(3));
    let out = home.path().join("one");
    let ok = audit(home.path(), &probes, &out);
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert_eq!(grants(port)["refresh_token"], 1);
    // the rotated refresh token was kept: the old one is gone at the server
    assert_ne!(refresh_of(), first);
    // revoked at the server: one line naming the server and `mcp-budget login`
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(s, "POST /test/revoke-all HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").unwrap();
    let mut sink = String::new();
    s.read_to_string(&mut sink).unwrap();
    std::thread::sleep(std::time::Duration::from_secs(3));
    let revoked = audit(home.path(), &probes, &home.path().join("two"));
    let said = String::from_utf8_lossy(&revoked.stderr);
    assert_ne!(revoked.status.code(), Some(0));
    let lines: Vec<&str> = said.lines().filter(|l| l.contains("orders")).collect();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("run `mcp-budget login orders`")),
        "{said}"
    );
}

#[test]
fn a_pre_registered_client_signs_in_without_registration_and_a_ci_token_needs_no_login() {
    // a client registered by hand with a fixed loopback redirect
    let redirect_port = free_port();
    let redirect = format!("http://127.0.0.1:{redirect_port}/callback");
    let Some((_server, port)) = oauth_server(&[
        "--no-dcr",
        "--client",
        "ci-client:",
        "--redirect",
        &redirect,
    ]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let probes = probe_file(home.path(), port);
    // no registration endpoint: without a client id, a one-line failure
    let (code, said) = login(home.path(), &probes, "orders", &[]);
    assert_ne!(code, 0);
    assert!(
        said.contains("orders: sign-in failed: registering a client"),
        "{said}"
    );
    let rp = redirect_port.to_string();
    let (code, said) = login(
        home.path(),
        &probes,
        "orders",
        &["--client-id", "ci-client", "--redirect-port", &rp],
    );
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("client ci-client, pre-registered"), "{said}");
    assert_eq!(grants(port)["clients"], 1);
    // a token from the environment: no sign-in kept, and it is never in the report
    let state = home.path().join(".local/state/mcp-budget/auth");
    let token = kept_token(home.path());
    let out = home.path().join("out");
    let run = audit_with_token(&token, &probes, &out);
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(!all_text(&out).contains(&token));
    // logout forgets it
    let (_, said) = with_probes(home.path(), &["logout", "orders"], &probes);
    assert!(
        said.contains("orders: signed out (its tokens revoked at its authorization server, its sign-in file removed)"),
        "{said}"
    );
    assert_eq!(std::fs::read_dir(&state).unwrap().count(), 0);
}

#[test]
fn a_redirect_whose_state_does_not_match_is_refused() {
    let Some((_server, port)) = oauth_server(&[]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let probes = probe_file(home.path(), port);
    // the authorization server hands back the state it was given: a forged one comes back
    let forged = |url: &str| {
        let (head, tail) = url.split_once("state=").unwrap();
        let rest = tail.split_once('&').map_or("", |(_, r)| r);
        format!("{head}state=forged-by-someone&{rest}")
    };
    let (code, said) = login_with(home.path(), &probes, "orders", &[], forged);
    assert_ne!(code, 0, "{said}");
    assert!(
        said.contains("orders: sign-in failed: the token exchange"),
        "{said}"
    );
    assert_eq!(grants(port)["authorization_code"], 0, "{said}");
    // nothing usable was kept: the audit still says to sign in
    let after = audit(home.path(), &probes, &home.path().join("out"));
    assert!(String::from_utf8_lossy(&after.stderr).contains("run `mcp-budget login orders`"));
    // signed in, then a second sign-in that fails: the first one is kept as it was
    let (code, said) = login(home.path(), &probes, "orders", &[]);
    assert_eq!(code, 0, "{said}");
    let before = kept(home.path());
    let (code, said) = login_with(home.path(), &probes, "orders", &[], forged);
    assert_ne!(code, 0, "{said}");
    assert_eq!(kept(home.path()), before);
    let after = audit(home.path(), &probes, &home.path().join("again"));
    assert_eq!(
        after.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&after.stderr)
    );
}

#[test]
fn the_proxy_signs_in_to_its_remote_upstream_with_the_kept_sign_in() {
    let Some((_server, port)) = oauth_server(&[]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let probes = probe_file(home.path(), port);
    let (code, said) = login(home.path(), &probes, "orders", &[]);
    assert_eq!(code, 0, "{said}");
    let mut cmd = mcp(home.path());
    cmd.args([
        "proxy",
        "--upstream-url",
        &format!("http://127.0.0.1:{port}/mcp"),
    ]);
    let mut p = crate::support::Pipelined::spawn(cmd, "oauth-proxy");
    let listed = p.call(1, "tools/list", serde_json::json!({}));
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    // the server's two tools, and the proxy's own reader of spilled results
    assert_eq!(names, ["whoami", "list_orders", "mcp_budget_read"]);
    let called = p.call(
        2,
        "tools/call",
        serde_json::json!({"name": "list_orders", "arguments": {"limit": 1}}),
    );
    assert_eq!(
        called["result"]["content"][0]["text"], "order 1: 3 items, 42.50 EUR",
        "{called}"
    );
    p.finish();
}

#[test]
fn an_authorization_server_that_does_not_advertise_s256_is_refused() {
    let Some((_server, port)) = oauth_server(&["--no-s256"]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let probes = probe_file(home.path(), port);
    let (code, said) = login(home.path(), &probes, "orders", &[]);
    assert_ne!(code, 0, "{said}");
    assert!(said.contains("does not advertise PKCE with S256"), "{said}");
    // no URL was offered to a browser, and nothing was registered
    assert!(!said.contains("open this URL"), "{said}");
    assert_eq!(grants(port)["clients"], 0);
}
