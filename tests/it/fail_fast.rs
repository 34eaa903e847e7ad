//! Servers that can never answer fail at once, not after the timeout: a message over
//! `--max-response-bytes` from the in-process demo and capture servers, and a URL that answers
//! with an HTML page instead of MCP (streamable HTTP and legacy SSE).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

use crate::support::{audit_probe, mcp_budget, repo};

/// A server that answers every request with `head` (status line and headers, no final blank
/// line) and `body`, then holds the connection open a while (an event stream).
pub fn answering_server(head: String, body: String) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(16) {
            let Ok(mut s) = stream else { continue };
            let (head, body) = (head.clone(), body.clone());
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                let _ = s.read(&mut buf);
                let _ = write!(s, "{head}\r\n\r\n{body}");
                let _ = s.flush();
                std::thread::sleep(Duration::from_secs(15));
            });
        }
    });
    port
}

/// Audit `toml` (one server that must fail) with a 30 s timeout: its error, after checking
/// that it failed well before the timeout.
pub fn fails_fast(toml: &str) -> String {
    let home = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let (report, _) = audit_probe(home.path(), toml, &["--timeout", "30"], &[], 2);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "waited {:?}",
        started.elapsed()
    );
    let server = &report["servers"][0];
    assert_eq!(server["status"], "error", "{server}");
    server["error"].as_str().unwrap().to_string()
}

#[test]
fn a_message_over_max_response_bytes_fails_fast_from_builtin_and_capture_servers() {
    let home = tempfile::tempdir().unwrap();
    let demo = std::fs::read_to_string(repo().join("probes/demo.toml")).unwrap();
    let dir = home.path().join("rec");
    audit_probe(
        home.path(),
        &demo,
        &["--record", dir.to_str().unwrap()],
        &[],
        0,
    );
    std::fs::write(home.path().join("demo.toml"), demo).unwrap();
    for (what, file) in [
        ("builtin", home.path().join("demo.toml")),
        ("capture", dir.join("probes.toml")),
    ] {
        let started = Instant::now();
        let out = mcp_budget(home.path(), home.path())
            .arg("audit")
            .arg(&file)
            .args(["--no-write", "--format", "json", "--timeout", "30"])
            .args(["--max-response-bytes", "3000"])
            .assert()
            .code(2);
        let report: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{what}: waited {:?}",
            started.elapsed()
        );
        let server = &report["servers"][0];
        let error = server["error"].as_str().unwrap_or("");
        assert!(
            error.contains("over 3000 bytes (--max-response-bytes)"),
            "{what}: {server}"
        );
    }
}

#[test]
fn an_html_page_at_a_server_url_is_not_an_mcp_endpoint() {
    let page = "<!doctype html><html><head><title>Welcome</title></head><body>hello</body></html>";
    let port = answering_server(
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\nconnection: close\r\ncontent-length: {}",
            page.len()
        ),
        page.to_string(),
    );
    for transport in ["http", "sse"] {
        let url = format!("http://127.0.0.1:{port}/mcp");
        let error = fails_fast(&format!(
            "[servers.page]\nurl = \"{url}\"\ntransport = \"{transport}\"\n"
        ));
        assert!(
            error.contains(&format!("{url} did not answer as an MCP")),
            "{transport}: {error}"
        );
        assert!(error.contains("text/html"), "{transport}: {error}");
    }
}
