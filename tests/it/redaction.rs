//! Redact before you cut: every place that quotes a part of what a server sent (the 200
//! characters of an HTTP error body, the 80 of a non-JSON stdout line, the end of stderr, a
//! cursor) redacts the whole text first. Each test plants a secret across the cut and looks for
//! any 8 characters of it in every output: stderr, audit.json, the CSVs, report.md/html, the
//! recording, the proxy's stderr and its call log.

use std::path::{Path, PathBuf};

use crate::fail_fast::answering_server;
use crate::secrets::files_under;
use crate::support::{mcp_budget, repo};

const SECRET: &str = "sk-cut-Q7vX93kLm2Pz";

fn fixture() -> PathBuf {
    repo().join("tests/fixtures/echoing_secrets.py")
}

/// No 8 characters in a row of `secret` in any of `texts`.
fn assert_no_part(secret: &str, texts: &[(String, String)]) {
    let chars: Vec<char> = secret.chars().collect();
    for window in chars.windows(8) {
        let part: String = window.iter().collect();
        for (name, text) in texts {
            assert!(
                !text.contains(&part),
                "`{part}` of the secret leaked into {name}:\n{text}"
            );
        }
    }
}

/// A probe file with one server, `leaky`: the fixture in `mode`, its API_KEY from LIVE_KEY.
fn leaky_probe(home: &Path, mode: &str, pad: usize, probes: &str) -> PathBuf {
    let probe = home.join("leaky.toml");
    let toml = format!(
        "[servers.leaky]\ncommand = \"python3\"\nargs = [{:?}, {mode:?}, \"{pad}\"]\n\
         env = {{ API_KEY = \"${{LIVE_KEY}}\" }}\n{probes}",
        fixture().display().to_string()
    );
    std::fs::write(&probe, toml).unwrap();
    probe
}

/// What one command printed, as named texts.
fn outputs(name: &str, out: &std::process::Output) -> Vec<(String, String)> {
    vec![
        (
            format!("{name} stdout"),
            String::from_utf8_lossy(&out.stdout).into(),
        ),
        (
            format!("{name} stderr"),
            String::from_utf8_lossy(&out.stderr).into(),
        ),
    ]
}

/// What a client sends the proxy on stdin: the handshake and a tools/list, then end of input.
const CLIENT: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    "\n"
);

/// `audit PROBE --out OUT --record REC` (exit `code`) and `proxy --server leaky --log LOG`
/// (exit `proxy_code`, a client that lists the tools): every text they wrote, and audit.json.
fn everywhere(
    home: &Path,
    probe: &Path,
    secret: &str,
    code: i32,
    proxy_code: i32,
) -> (Vec<(String, String)>, serde_json::Value) {
    let (out, rec) = (home.join("out"), home.join("rec"));
    let audit = mcp_budget(home, home)
        .arg("audit")
        .arg(probe)
        .args(["--timeout", "20", "--out"])
        .arg(&out)
        .arg("--record")
        .arg(&rec)
        .env("LIVE_KEY", secret)
        .assert()
        .code(code);
    let mut texts = outputs("audit", audit.get_output());
    texts.extend(files_under(&out));
    if rec.exists() {
        texts.extend(files_under(&rec));
    }
    for file in ["audit.json", "report.md", "report.html", "servers.csv"] {
        assert!(
            texts.iter().any(|(n, _)| n.ends_with(file)),
            "{file} written"
        );
    }
    let log = home.join("calls.jsonl");
    let proxy = mcp_budget(home, home)
        .args(["proxy", "--timeout", "20", "--server", "leaky", "--config"])
        .arg(probe)
        .arg("--log")
        .arg(&log)
        .env("LIVE_KEY", secret)
        .write_stdin(CLIENT)
        .assert()
        .code(proxy_code);
    texts.extend(outputs("proxy", proxy.get_output()));
    if let Ok(text) = std::fs::read_to_string(&log) {
        texts.push(("proxy log".into(), text));
    }
    (texts, crate::support::read_report(&out))
}

fn leaky_row(report: &serde_json::Value) -> serde_json::Value {
    report["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "leaky")
        .unwrap()
        .clone()
}

/// 70 characters, then the secret: the 80 kept of the line end 10 characters into it.
#[test]
fn a_secret_across_the_cut_of_a_non_json_stdout_line_never_shows() {
    let home = tempfile::tempdir().unwrap();
    let probe = leaky_probe(home.path(), "stdout", 70, "");
    let (texts, report) = everywhere(home.path(), &probe, SECRET, 0, 0);
    assert_no_part(SECRET, &texts);
    let warnings = leaky_row(&report)["warnings"].to_string();
    assert!(
        warnings.contains(&format!(
            "skipped non-JSON output on stdout: {}<redacted>...",
            "x".repeat(70)
        )),
        "{warnings}"
    );
}

/// 50 characters, then the secret, as a cursor that repeats: the 60 kept end inside it.
#[test]
fn a_secret_across_the_cut_of_a_repeated_cursor_never_shows() {
    let home = tempfile::tempdir().unwrap();
    let probe = leaky_probe(home.path(), "cursor", 50, "");
    let (texts, report) = everywhere(home.path(), &probe, SECRET, 2, 0);
    assert_no_part(SECRET, &texts);
    let error = leaky_row(&report)["error"].to_string();
    assert!(
        error.contains(&format!(
            "repeated cursor `{}<redacted>...`",
            "c".repeat(50)
        )),
        "{error}"
    );
    let proxy = &texts.iter().find(|(n, _)| n == "proxy stderr").unwrap().1;
    assert!(proxy.contains("tools/list stopped"), "{proxy}");
}

/// One stderr line longer than the 300 characters kept: its end is shown, redacted first.
#[test]
fn the_end_of_a_long_stderr_line_is_shown_redacted() {
    let home = tempfile::tempdir().unwrap();
    let probe = leaky_probe(home.path(), "stderr-long", 295, "");
    let (texts, report) = everywhere(home.path(), &probe, SECRET, 2, 2);
    assert_no_part(SECRET, &texts);
    let error = leaky_row(&report)["error"].as_str().unwrap().to_string();
    assert!(
        error.contains(&format!("stderr: ...{}<redacted>", "y".repeat(290))),
        "{error}"
    );
}

/// The secret straddles the point where the 16 KiB of stderr kept begin, and only line breaks
/// follow it: the line the cut falls in is dropped whole, not shown as its last 10 bytes.
#[test]
fn a_secret_across_the_start_of_the_kept_stderr_never_shows() {
    let home = tempfile::tempdir().unwrap();
    let probe = leaky_probe(home.path(), "stderr-ring", 10, "");
    let (texts, report) = everywhere(home.path(), &probe, SECRET, 2, 2);
    assert_no_part(SECRET, &texts);
    let error = leaky_row(&report)["error"].as_str().unwrap().to_string();
    assert!(
        error.contains("server exited with exit status: 3"),
        "{error}"
    );
}

/// An HTTP error page that echoes the configured key 190 characters in: the 200 kept of the
/// body end inside it (audit, and the proxy's --upstream-url with --header).
#[test]
fn a_secret_across_the_cut_of_an_http_error_body_never_shows() {
    let body = format!("{} {SECRET} was refused by the gateway", "x".repeat(189));
    let port = answering_server(
        format!(
            "HTTP/1.1 500 Internal Server Error\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close",
            body.len()
        ),
        body,
    );
    let home = tempfile::tempdir().unwrap();
    let probe = home.path().join("leaky.toml");
    let url = format!("http://127.0.0.1:{port}/mcp");
    std::fs::write(
        &probe,
        format!("[servers.leaky]\nurl = \"{url}\"\nheaders = {{ X-Api-Key = \"{SECRET}\" }}\n"),
    )
    .unwrap();
    let (mut texts, report) = everywhere(home.path(), &probe, SECRET, 2, 2);
    let error = leaky_row(&report)["error"].as_str().unwrap().to_string();
    assert!(
        error.contains(&format!(
            "HTTP 500 Internal Server Error: {} <redacted>...",
            "x".repeat(189)
        )),
        "{error}"
    );
    let proxy = mcp_budget(home.path(), home.path())
        .args([
            "proxy",
            "--timeout",
            "20",
            "--upstream-url",
            &url,
            "--header",
        ])
        .arg(format!("X-Api-Key: {SECRET}"))
        .write_stdin("")
        .assert()
        .code(2);
    texts.extend(outputs("proxy --upstream-url", proxy.get_output()));
    assert_no_part(SECRET, &texts);
}

/// A new preview of server text cannot cut before it redacts: outside `text.rs` and the
/// redactor, nothing in the layers that talk to servers calls `text::preview` or `shorten` on
/// its own.
#[test]
fn server_text_is_previewed_only_through_the_redactor() {
    let mut offenders = Vec::new();
    for dir in [
        "src/wire/upstream.rs",
        "src/wire/upstream",
        "src/run/audit.rs",
        "src/run/audit",
        "src/run/proxy.rs",
        "src/run/proxy",
        "src/wire/capture.rs",
        "src/wire/capture",
        "src/wire/connect.rs",
    ] {
        assert!(
            repo().join(dir).exists(),
            "{dir} is gone: name its new place here"
        );
        for (path, text) in crate::secrets::files_under_or_file(&repo().join(dir)) {
            for (n, line) in text.lines().enumerate() {
                if line.contains("text::preview(") && !line.trim_start().starts_with("//") {
                    offenders.push(format!("{path}:{}", n + 1));
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "cut without the redactor: {offenders:?}"
    );
}
