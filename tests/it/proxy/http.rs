//! The proxy over streamable HTTP: Host, Origin and bearer token checked, MCP served.

use std::io::Write;
use std::process::Command;

use crate::support::{bin_path, free_port, serve_on};

/// One raw HTTP POST of an initialize request; the status line's code.
fn post_status(port: u16, headers: &[(&str, &str)]) -> u16 {
    use std::io::Read;
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap();
    let mut resp = String::new();
    let _ = s.read_to_string(&mut resp);
    resp.split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

#[test]
fn over_http_the_proxy_checks_host_origin_and_bearer_and_serves_mcp() {
    const TOKEN: &str = "proxy-token-5b1e";
    let home = tempfile::tempdir().unwrap();
    let port = free_port();
    let bin = bin_path();
    let mut cmd = Command::new(&bin);
    cmd.args(["proxy", "--spill-dir"])
        .arg(home.path().join("spill"))
        .args([
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--bearer-token-env",
            "PROXY_TOKEN",
        ])
        .arg("--")
        .arg(&bin)
        .arg("demo-server")
        .env("PROXY_TOKEN", TOKEN);
    let _proxy = serve_on(cmd, port);
    let host = format!("127.0.0.1:{port}");
    let auth = format!("Bearer {TOKEN}");
    assert_eq!(
        post_status(port, &[("host", &host), ("authorization", &auth)]),
        200
    );
    assert_eq!(post_status(port, &[("host", &host)]), 401, "no token");
    assert_eq!(
        post_status(port, &[("host", &host), ("authorization", "Bearer wrong")]),
        401
    );
    let spoofed_host = post_status(port, &[("host", "evil.example"), ("authorization", &auth)]);
    assert!((400..500).contains(&spoofed_host), "{spoofed_host}");
    let spoofed_origin = post_status(
        port,
        &[
            ("host", &host),
            ("origin", "http://evil.example"),
            ("authorization", &auth),
        ],
    );
    assert!((400..500).contains(&spoofed_origin), "{spoofed_origin}");

    // a real MCP client over HTTP (this tool's own audit): the demo's tools and a budgeted result
    let toml = format!(
        "[servers.viaproxy]\nurl = \"http://127.0.0.1:{port}/mcp\"\nheaders = {{ Authorization = \"Bearer {TOKEN}\" }}\n[[servers.viaproxy.probes]]\ntool = \"scrape_as_markdown\"\n"
    );
    let (report, _) = crate::support::audit_probe(home.path(), &toml, &["--timeout", "30"], &[], 0);
    let s = &report["servers"][0];
    assert_eq!(s["status"], "ok", "{s}");
    assert_eq!(
        s["tools_list"]["tool_count"], 14,
        "the demo's 13 tools and mcp_budget_read"
    );
    let raw = s["probes"][0]["raw"]["model_tokens"].as_u64().unwrap();
    assert!(
        raw <= 8000,
        "the result arrived within the default budget: {raw}"
    );
    let all = serde_json::to_string(&report).unwrap();
    assert!(
        !all.contains(TOKEN),
        "the bearer token leaked into the report"
    );
}
