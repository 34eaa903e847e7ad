//! Credentials in other shapes: the `Authorization: Basic` a URL's `user:password@` becomes, a
//! URL login beside a configured Authorization header, `;param=value` path parameters, a
//! secret escaped twice inside a recorded JSON-RPC line, and `proxy --header-env`.

use std::path::Path;

use crate::secrets::files_under;
use crate::support::{head_server, mcp_budget, repo, Heads};

/// A loopback HTTP server that answers every request with a 500 whose body echoes the whole
/// request head (as debugging gateways do), and keeps each head it got.
fn head_echoing_server() -> (u16, Heads) {
    head_server(32, |head| {
        let body = format!("refused: {}", head.replace("\r\n", " | "));
        format!(
            "HTTP/1.1 500 Internal Server Error\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
    })
}

/// `audit PROBE --out OUT` (exit 2): its outputs and files, and the error of server `name`.
fn audit_texts(home: &Path, toml: &str, name: &str) -> (Vec<(String, String)>, String) {
    let probe = home.join("shapes.toml");
    std::fs::write(&probe, toml).unwrap();
    let out = home.join("out");
    let run = mcp_budget(home, home)
        .arg("audit")
        .arg(&probe)
        .args(["--timeout", "20", "--out"])
        .arg(&out)
        .assert()
        .code(2);
    let output = run.get_output();
    let mut texts = files_under(&out);
    texts.push((
        "stdout".into(),
        String::from_utf8_lossy(&output.stdout).into(),
    ));
    texts.push((
        "stderr".into(),
        String::from_utf8_lossy(&output.stderr).into(),
    ));
    let report = crate::support::read_report(&out);
    let row = report["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap()
        .clone();
    (texts, row["error"].as_str().unwrap_or("").to_string())
}

fn assert_nowhere(part: &str, texts: &[(String, String)]) {
    for (name, text) in texts {
        assert!(!text.contains(part), "`{part}` leaked into {name}:\n{text}");
    }
}

/// `http://bob:PASSWORD@host` is sent as `Authorization: Basic base64(bob:PASSWORD)`; a server
/// that echoes its request head shows that form, which is redacted (audit and proxy).
#[test]
fn the_basic_auth_form_of_a_url_login_is_redacted() {
    const BASIC: &str = "Ym9iOnB3LWJhc2ljLTc3ODg="; // base64("bob:pw-basic-7788")
    let (port, seen) = head_echoing_server();
    let url = format!("http://bob:pw-basic-7788@127.0.0.1:{port}/mcp");
    let home = tempfile::tempdir().unwrap();
    let (mut texts, error) = audit_texts(
        home.path(),
        &format!("[servers.basic]\nurl = \"{url}\"\n"),
        "basic",
    );
    assert!(error.contains("Basic <redacted>"), "{error}");
    let proxy = mcp_budget(home.path(), home.path())
        .args(["proxy", "--timeout", "20", "--upstream-url", &url])
        .write_stdin("")
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&proxy.get_output().stderr).to_string();
    assert!(stderr.contains("Basic <redacted>"), "{stderr}");
    texts.push(("proxy stderr".into(), stderr));
    assert_nowhere(BASIC, &texts);
    assert_nowhere("pw-basic-7788", &texts);
    let seen = seen.lock().unwrap();
    assert!(
        seen.iter().any(|h| h.contains(&format!("Basic {BASIC}"))),
        "the client sent the login as Basic: {seen:?}"
    );
}

/// A URL login beside a configured Authorization header: the client would send the URL's
/// Basic in place of the header, silently. It is an error naming both, and nothing is sent.
#[test]
fn a_url_login_beside_an_authorization_header_is_refused() {
    let (port, seen) = head_echoing_server();
    let home = tempfile::tempdir().unwrap();
    let toml = format!(
        "[servers.both]\nurl = \"http://bob:pw-both-4455@127.0.0.1:{port}/mcp\"\n\
         headers = {{ Authorization = \"Bearer tok-both-998877\" }}\n"
    );
    let (texts, error) = audit_texts(home.path(), &toml, "both");
    assert!(
        error.contains("both an Authorization header and credentials in the URL"),
        "{error}"
    );
    assert_nowhere("tok-both-998877", &texts);
    assert_nowhere("pw-both-4455", &texts);
    assert!(seen.lock().unwrap().is_empty(), "a request was sent");
}

/// `;jsessionid=` and `;sig=` path parameters are credentials like query values: in the URL a
/// report shows, and where a server echoes its request line.
#[test]
fn path_parameters_are_redacted_like_query_values() {
    let (port, _) = head_echoing_server();
    let home = tempfile::tempdir().unwrap();
    let toml = format!(
        "[servers.jsession]\nurl = \"http://127.0.0.1:{port}/mcp;jsessionid=js-5566AB77;lang=en\"\n\
         [servers.signed]\nurl = \"http://127.0.0.1:{port}/blob;sig=sig-77889900/mcp\"\n"
    );
    let (texts, error) = audit_texts(home.path(), &toml, "jsession");
    assert!(
        error.contains("/mcp;jsessionid=<redacted>;lang=en"),
        "{error}"
    );
    let report = std::fs::read_to_string(home.path().join("out/audit.json")).unwrap();
    assert!(
        report.contains(&format!("127.0.0.1:{port}/blob;sig=<redacted>/mcp")),
        "{report}"
    );
    assert_nowhere("js-5566AB77", &texts);
    assert_nowhere("sig-77889900", &texts);
}

/// A tool's text that is JSON (non-ASCII escaped as `\u00e4`) holds the secret; in the
/// recorded JSON-RPC line it is escaped twice (`\\u00e4`), and redacted there too.
#[test]
fn a_secret_escaped_twice_in_a_recording_is_redacted() {
    const SECRET: &str = "sk-p\u{e4}ss-w\u{f6}rt-123456";
    let home = tempfile::tempdir().unwrap();
    let probe = home.path().join("escaped.toml");
    let fixture = repo().join("tests/fixtures/echoing_secrets.py");
    std::fs::write(
        &probe,
        format!(
            "[servers.escaped]\ncommand = \"python3\"\nargs = [{:?}, \"escaped\", \"0\"]\n\
             env = {{ API_KEY = \"${{LIVE_KEY}}\" }}\n[[servers.escaped.probes]]\ntool = \"dump\"\n",
            fixture.display().to_string()
        ),
    )
    .unwrap();
    let rec = home.path().join("rec");
    mcp_budget(home.path(), home.path())
        .arg("audit")
        .arg(&probe)
        .args(["--no-write", "--timeout", "20", "--record"])
        .arg(&rec)
        .arg("--spill-dir")
        .arg(home.path().join("spill"))
        .env("LIVE_KEY", SECRET)
        .assert()
        .code(0);
    let texts = files_under(&rec);
    let transcript = &texts
        .iter()
        .find(|(n, _)| n.ends_with("escaped.jsonl"))
        .unwrap()
        .1;
    assert!(
        transcript.contains(r#"\\\"api_key\\\": \\\"<redacted>\\\""#),
        "{transcript}"
    );
    assert_nowhere("rt-123456", &texts);
}

/// `--header-env 'Name: VAR'` sends the variable's value as the header, which never shows;
/// a variable that is not set is a one-line error naming it.
#[test]
fn header_env_reads_a_header_from_the_environment() {
    const KEY: &str = "sk-env-header-24680";
    let (port, seen) = head_echoing_server();
    let home = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let proxy = mcp_budget(home.path(), home.path())
        .args(["proxy", "--timeout", "20", "--upstream-url", &url])
        .args(["--header-env", "X-Api-Key: MY_UPSTREAM_KEY"])
        .env("MY_UPSTREAM_KEY", KEY)
        .write_stdin("")
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&proxy.get_output().stderr).to_string();
    assert!(stderr.contains("x-api-key: <redacted>"), "{stderr}");
    assert!(!stderr.contains(KEY), "{stderr}");
    assert!(
        seen.lock()
            .unwrap()
            .iter()
            .any(|h| h.contains(&format!("x-api-key: {KEY}"))),
        "the header was sent"
    );

    let missing = mcp_budget(home.path(), home.path())
        .args(["proxy", "--upstream-url", &url])
        .args(["--header-env", "X-Api-Key: NOT_SET_ANYWHERE_1"])
        .env_remove("NOT_SET_ANYWHERE_1")
        .write_stdin("")
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&missing.get_output().stderr).to_string();
    assert_eq!(
        stderr,
        "error: --header-env `X-Api-Key`: $NOT_SET_ANYWHERE_1 is not set\n"
    );
}
