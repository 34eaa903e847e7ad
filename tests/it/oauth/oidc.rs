//! A second, independent authorization server: node-oidc-provider (pinned, npm) in front of two
//! resource servers on the TypeScript SDK (tests/fixtures/oidc_server.mjs). The browser step is
//! Debian's Chromium, headless, following the provider's login and consent to the loopback
//! redirect. Discovery is OpenID Connect's; each server gets a token of its own (RFC 8707: the
//! resource servers refuse a token for the other); a machine signs in with the client
//! credentials grant, from CI's variables (nothing kept) or a kept `login --client-credentials`
//! asked again when its token is due.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::{all_text, audit, audit_as, kept_token, login_opening, mcp};
use crate::support::{free_port, repo, serve_on, Served};

struct Oidc {
    _served: Served,
    issuer_port: u16,
    east: u16,
    west: u16,
}

fn require(what: &str, there: bool) -> bool {
    if !there {
        crate::support::skip(&format!("{what} is not installed (run .ci/run)"));
    }
    there
}

fn modules() -> PathBuf {
    std::env::var_os("MCP_BUDGET_TEST_SERVERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target/test-servers"))
        .join("node_modules")
}

fn chromium() -> Option<PathBuf> {
    let found = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists());
    require("chromium", found.is_some()).then(|| found.unwrap())
}

/// The provider and its two resource servers (`east`, `west`), tokens good for `ttl` s.
fn oidc(ttl: u64) -> Option<Oidc> {
    oidc_with(ttl, |_, _| {})
}

/// [`oidc`], its command given more flags and variables by `more` (which is told `east`'s port).
fn oidc_with(ttl: u64, more: impl FnOnce(&mut Command, u16)) -> Option<Oidc> {
    if !require("oidc-provider", modules().join("oidc-provider").exists()) {
        return None;
    }
    let (issuer_port, east, west) = (free_port(), free_port(), free_port());
    let mut cmd = Command::new("node");
    cmd.arg(repo().join("tests/fixtures/oidc_server.mjs"))
        .arg(modules())
        .args([issuer_port, east, west].map(|p| p.to_string()))
        .args(["--ttl", &ttl.to_string()]);
    more(&mut cmd, east);
    let served = serve_on(cmd, issuer_port);
    for port in [east, west] {
        let started = std::time::Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed().as_secs() < 20,
                "no resource server on {port}"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
    Some(Oidc {
        _served: served,
        issuer_port,
        east,
        west,
    })
}

fn probes(dir: &Path, o: &Oidc) -> PathBuf {
    let p = dir.join("probes.toml");
    let mut text = String::new();
    for (name, port, tool) in [("east", o.east, "whoami"), ("west", o.west, "stock")] {
        text += &format!(
            "[servers.{name}]\nurl = \"http://127.0.0.1:{port}/mcp\"\n\n[[servers.{name}.probes]]\ntool = \"{tool}\"\n\n"
        );
    }
    std::fs::write(&p, text).unwrap();
    p
}

fn grants(o: &Oidc) -> serde_json::Value {
    super::grants(o.issuer_port)
}

/// `mcp-budget login NAME`, the URL it prints opened in headless Chromium.
fn login_in_chromium(home: &Path, probes: &Path, name: &str, chromium: &Path) -> (i32, String) {
    login_in_chromium_with(home, probes, &[name], chromium)
}

/// [`login_in_chromium`] with more arguments after `login`.
fn login_in_chromium_with(
    home: &Path,
    probes: &Path,
    args: &[&str],
    chromium: &Path,
) -> (i32, String) {
    let mut all = args.to_vec();
    all.extend(["--wait", "60", "--config", probes.to_str().unwrap()]);
    login_opening(home, &all, |url, said| {
        let profile = tempfile::tempdir().unwrap();
        let page = Command::new(chromium)
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                // no connections of its own (the machine's network is closed)
                "--disable-quic",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .args(["--dump-dom", url])
            .stderr(Stdio::null())
            .output()
            .unwrap();
        let page = String::from_utf8_lossy(&page.stdout);
        assert!(page.contains("Signed in"), "{page}\n{said}");
    })
}

#[test]
fn a_second_authorization_server_signs_in_two_servers_each_with_a_token_of_its_own() {
    let (Some(chromium), Some(o)) = (chromium(), oidc(3600)) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let probes = probes(home.path(), &o);
    let (code, said) = login_in_chromium(home.path(), &probes, "east", &chromium);
    assert_eq!(code, 0, "{said}");
    assert!(
        said.contains(&format!("signed in at http://127.0.0.1:{}", o.issuer_port)),
        "{said}"
    );
    let east_token = kept_token(home.path());
    let (code, said) = login_in_chromium(home.path(), &probes, "west", &chromium);
    assert_eq!(code, 0, "{said}");
    assert_eq!(grants(&o)["authorization_code"], 2);
    let out = home.path().join("out");
    let both = audit(home.path(), &probes, &out);
    assert_eq!(
        both.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&both.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("audit.json")).unwrap()).unwrap();
    let ok: Vec<&str> = report["servers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["error"].is_null())
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(ok, ["east", "west"], "{report}");
    assert!(!all_text(&out).contains(&east_token));
    // east's token is for east alone: west's server refuses it (its audience is east)
    let elsewhere = tempfile::tempdir().unwrap();
    let mut cmd = mcp(elsewhere.path());
    cmd.env("MCP_BUDGET_TOKEN_WEST", &east_token);
    let refused = audit_as(cmd, &probes, &elsewhere.path().join("out"));
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.lines()
            .any(|l| l.contains("`west`") && l.contains("HTTP 401")),
        "{said}"
    );
    assert!(!said.contains(&east_token));
}

#[test]
fn a_machine_signs_in_with_client_credentials_from_ci_or_a_kept_login() {
    let Some(o) = oidc(3) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let probes = probes(home.path(), &o);
    // CI: the client from the environment, nothing kept
    let mut cmd = mcp(home.path());
    cmd.env("MCP_BUDGET_CLIENT_ID_EAST", "ci-bot")
        .env("MCP_BUDGET_CLIENT_SECRET_EAST", "ci-bot-secret");
    let ci = audit_as(cmd, &probes, &home.path().join("ci"));
    let said = String::from_utf8_lossy(&ci.stderr);
    assert!(!said.contains("`east`"), "{said}");
    assert_eq!(grants(&o)["client_credentials"], 1);
    assert!(!home.path().join(".local/state/mcp-budget").exists());
    // a wrong secret: one line naming the variables' client, the other server still runs
    let mut cmd = mcp(home.path());
    cmd.env("MCP_BUDGET_CLIENT_ID_EAST", "ci-bot")
        .env("MCP_BUDGET_CLIENT_SECRET_EAST", "not-the-secret");
    let wrong = audit_as(cmd, &probes, &home.path().join("wrong"));
    let said = String::from_utf8_lossy(&wrong.stderr);
    let line = said
        .lines()
        .find(|l| l.contains("`east`"))
        .unwrap_or_else(|| panic!("{said}"));
    assert!(
        line.contains("MCP_BUDGET_CLIENT_ID_EAST") && line.contains("invalid_client"),
        "{line}"
    );
    assert!(!said.contains("not-the-secret"));
    // kept: login --client-credentials, then a new token when the last is due (3 s)
    let (code, said) = {
        let out = login_as_bot(mcp(home.path()), &probes);
        (
            out.status.code().unwrap(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    assert_eq!(code, 0, "{said}");
    assert!(
        said.contains("signed in as client ci-bot (client credentials"),
        "{said}"
    );
    assert_eq!(grants(&o)["client_credentials"], 2);
    std::thread::sleep(std::time::Duration::from_secs(4));
    let again = audit(home.path(), &probes, &home.path().join("again"));
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(!said.contains("`east`"), "{said}");
    assert_eq!(grants(&o)["client_credentials"], 3);
}

/// A server on https, its CA trusted through `SSL_CERT_FILE`: the sign-in finds its authorization
/// server over TLS (rmcp's own requests, which had no TLS before 2026-12-05) and the audit calls
/// it with the token.
#[test]
fn a_server_on_https_signs_in_with_its_discovery_over_tls() {
    let mut front = None;
    let Some(o) = oidc_with(3600, |cmd, east| {
        let (port, ca) = crate::transports::tls_front(east);
        cmd.args(["--front", &port.to_string()]);
        front = Some((port, ca));
    }) else {
        return;
    };
    let (port, ca) = front.expect("the front started");
    let home = tempfile::tempdir().unwrap();
    let ca_file = home.path().join("ca.pem");
    std::fs::write(&ca_file, ca).unwrap();
    let probes = home.path().join("probes.toml");
    std::fs::write(
        &probes,
        format!("[servers.east]\nurl = \"https://127.0.0.1:{port}/mcp\"\n\n[[servers.east.probes]]\ntool = \"whoami\"\n"),
    )
    .unwrap();
    let mut cmd = mcp(home.path());
    cmd.env("SSL_CERT_FILE", &ca_file);
    let login = login_as_bot(cmd, &probes);
    let said = String::from_utf8_lossy(&login.stderr);
    assert_eq!(login.status.code(), Some(0), "{said}");
    assert!(said.contains("signed in as client ci-bot"), "{said}");
    assert_eq!(grants(&o)["client_credentials"], 1);
    let mut cmd = mcp(home.path());
    cmd.env("SSL_CERT_FILE", &ca_file);
    let out = home.path().join("out");
    let audited = audit_as(cmd, &probes, &out);
    let said = String::from_utf8_lossy(&audited.stderr);
    assert!(audited.status.success(), "{said}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("audit.json")).unwrap()).unwrap();
    let east = &report["servers"][0];
    assert_eq!(east["status"], "ok", "{east}");
    assert_eq!(east["probes"][0]["status"], "ok", "{east}");
    assert!(
        east["probes"][0]["raw"]["model_tokens"].as_u64().unwrap() > 0,
        "{east}"
    );
    // without the CA, one line that names the server and the way out
    let untrusted = audit_as(mcp(home.path()), &probes, &home.path().join("untrusted"));
    let said = String::from_utf8_lossy(&untrusted.stderr);
    assert!(said.contains("UnknownIssuer"), "{said}");
}

/// `login east --client-credentials` as the provider's `ci-bot` client, its secret from a variable.
fn login_as_bot(mut cmd: Command, probes: &Path) -> std::process::Output {
    cmd.args([
        "login",
        "east",
        "--client-credentials",
        "--client-id",
        "ci-bot",
    ])
    .args(["--client-secret-env", "BOT_SECRET", "--config"])
    .arg(probes)
    .env("BOT_SECRET", "ci-bot-secret")
    .output()
    .unwrap()
}

/// A CA and a certificate for 127.0.0.1 it issued, as PEM files in `dir`: (ca, cert, key).
fn certificates(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "mcp-budget test CA");
    let ca_pem = ca.self_signed(&ca_key).unwrap().pem();
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["127.0.0.1".to_string()])
        .unwrap()
        .signed_by(&key, &issuer)
        .unwrap();
    let paths = (
        dir.join("ca.pem"),
        dir.join("cert.pem"),
        dir.join("key.pem"),
    );
    std::fs::write(&paths.0, ca_pem).unwrap();
    std::fs::write(&paths.1, leaf.pem()).unwrap();
    std::fs::write(&paths.2, key.serialize_pem()).unwrap();
    paths
}

#[test]
fn a_client_metadata_document_is_the_clients_id_where_the_server_takes_one() {
    let Some(chromium) = chromium() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let (ca, cert, key) = certificates(home.path());
    let doc_port = free_port();
    let Some(o) = oidc_with(3600, |cmd, _| {
        cmd.env("NODE_EXTRA_CA_CERTS", &ca)
            .arg("--cimd")
            .args([&cert, &key])
            .arg(doc_port.to_string());
    }) else {
        return;
    };
    let probes = probes(home.path(), &o);
    let doc = format!("https://127.0.0.1:{doc_port}/oauth/mcp-budget.json");
    let (code, said) = login_in_chromium_with(
        home.path(),
        &probes,
        &["east", "--client-metadata-url", &doc],
        &chromium,
    );
    assert_eq!(code, 0, "{said}");
    assert!(
        said.contains(&format!("(client {doc}, its metadata document")),
        "{said}"
    );
    // nothing registered: the provider fetched the document
    let g = grants(&o);
    assert_eq!(
        (
            g["registrations"].as_u64(),
            g["authorization_code"].as_u64()
        ),
        (Some(0), Some(1)),
        "{g}"
    );
    assert!(g["documents"].as_u64().unwrap() >= 1, "{g}");
    let out = home.path().join("out");
    let ok = audit(home.path(), &probes, &out);
    let err = String::from_utf8_lossy(&ok.stderr);
    assert!(!err.contains("`east`"), "{err}");
    // a document that is not https is refused before anything is sent
    let (code, said) = login_in_chromium_with(
        home.path(),
        &probes,
        &[
            "west",
            "--client-metadata-url",
            "http://127.0.0.1:9/doc.json",
        ],
        &chromium,
    );
    assert_ne!(code, 0);
    assert!(said.contains("must be https with a path"), "{said}");
}

#[test]
fn a_client_metadata_document_the_server_does_not_take_falls_back_to_registration() {
    let (Some(chromium), Some(o)) = (chromium(), oidc(3600)) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let probes = probes(home.path(), &o);
    let (code, said) = login_in_chromium_with(
        home.path(),
        &probes,
        &[
            "east",
            "--client-metadata-url",
            "https://example.invalid/oauth/mcp-budget.json",
        ],
        &chromium,
    );
    assert_eq!(code, 0, "{said}");
    assert!(
        said.contains(
            "registered now: the authorization server does not advertise client metadata documents"
        ),
        "{said}"
    );
    assert_eq!(grants(&o)["registrations"], 1);
}
