//! Every transport against the same real server: `server-everything` over stdio, streamable
//! HTTP and legacy HTTP+SSE on loopback ports gives the same tools and the same wire bytes;
//! a server that refuses or is not there is a clear error on that server only.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{mcp_budget, read_report, real_server};

const SECRET: &str = "sk-header-SECRET-777";

/// A free loopback port.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// server-everything in `mode` on `port`, killed on drop.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(bin: &std::path::Path, mode: &str, port: u16) -> Served {
    let child = Command::new(bin)
        .arg(mode)
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{mode} server did not listen on {port}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    Served(child)
}

#[test]
fn stdio_streamable_http_and_sse_give_the_same_numbers() {
    let Some(bin) = real_server("mcp-server-everything") else {
        return;
    };
    let (http_port, sse_port) = (free_port(), free_port());
    let _http = serve(&bin, "streamableHttp", http_port);
    let _sse = serve(&bin, "sse", sse_port);
    let home = tempfile::tempdir().unwrap();
    let probe = home.path().join("t.toml");
    let probes = "tool = \"get-tiny-image\"";
    std::fs::write(
        &probe,
        format!(
            "[servers.stdio]\ncommand = {:?}\nargs = [\"stdio\"]\n[[servers.stdio.probes]]\n{probes}\n\
             [servers.http]\nurl = \"http://127.0.0.1:{http_port}/mcp\"\nheaders = {{ Authorization = \"Bearer {SECRET}\" }}\n[[servers.http.probes]]\n{probes}\n\
             [servers.sse]\nurl = \"http://127.0.0.1:{sse_port}/sse\"\ntransport = \"sse\"\nheaders = {{ X-Api-Key = \"{SECRET}\" }}\n[[servers.sse.probes]]\n{probes}\n",
            bin.display().to_string()
        ),
    )
    .unwrap();
    let out = home.path().join("out");
    let assert = mcp_budget(home.path(), home.path())
        .args([
            "audit",
            probe.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--format",
            "json",
        ])
        .assert()
        .code(0);
    let report = read_report(&out);
    let servers = report["servers"].as_array().unwrap();
    let pick = |name: &str| servers.iter().find(|s| s["name"] == name).unwrap();
    let (stdio, http, sse) = (pick("stdio"), pick("http"), pick("sse"));
    assert_eq!(
        (http["transport"].as_str(), sse["transport"].as_str()),
        (Some("http"), Some("sse"))
    );
    for remote in [http, sse] {
        assert_eq!(remote["status"], "ok", "{remote}");
        assert_eq!(
            remote["tools_list"]["tool_count"],
            stdio["tools_list"]["tool_count"]
        );
        assert_eq!(
            remote["tools_list"]["wire_tokens"],
            stdio["tools_list"]["wire_tokens"]
        );
        assert_eq!(
            remote["tools_list"]["wire_bytes"],
            stdio["tools_list"]["wire_bytes"]
        );
        assert_eq!(
            remote["probes"][0]["raw"]["wire_bytes"],
            stdio["probes"][0]["raw"]["wire_bytes"]
        );
    }
    let mut everything = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    everything.push_str(&String::from_utf8_lossy(&assert.get_output().stderr));
    everything.push_str(&std::fs::read_to_string(out.join("audit.json")).unwrap());
    assert!(!everything.contains(SECRET), "a header value leaked");
}

#[test]
fn refused_and_failing_http_servers_are_clear_errors() {
    // a port nobody listens on, and a plain HTTP server that answers every request with 401
    let closed = free_port();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let denied = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for stream in listener.incoming().take(8) {
            let Ok(mut s) = stream else { continue };
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            let body = "{\"error\":\"invalid token\"}";
            let _ = write!(s, "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len());
        }
    });
    let home = tempfile::tempdir().unwrap();
    let probe = home.path().join("t.toml");
    std::fs::write(
        &probe,
        format!(
            "[servers.closed]\nurl = \"http://127.0.0.1:{closed}/mcp\"\n[servers.denied]\nurl = \"http://127.0.0.1:{denied}/mcp?token={SECRET}\"\n\
             [servers.demo]\nbuiltin = \"demo\"\n"
        ),
    )
    .unwrap();
    let started = Instant::now();
    let assert = mcp_budget(home.path(), home.path())
        .args([
            "audit",
            probe.to_str().unwrap(),
            "--no-write",
            "--format",
            "json",
            "--timeout",
            "30",
        ])
        .assert()
        .code(2);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "an HTTP failure waited for the timeout"
    );
    let report: serde_json::Value = serde_json::from_slice(&assert.get_output().stdout).unwrap();
    let servers = report["servers"].as_array().unwrap();
    let error = |n: &str| {
        servers.iter().find(|s| s["name"] == n).unwrap()["error"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    assert!(
        error("closed").contains("could not connect"),
        "{}",
        error("closed")
    );
    assert!(
        error("denied").contains("401") && error("denied").contains("invalid token"),
        "{}",
        error("denied")
    );
    assert_eq!(
        servers.iter().find(|s| s["name"] == "demo").unwrap()["status"],
        "ok"
    );
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&assert.get_output().stdout),
        String::from_utf8_lossy(&assert.get_output().stderr)
    );
    assert!(!all.contains(SECRET), "a URL token leaked");
}

/// A minimal streamable-HTTP MCP server that answers every POST with a plain JSON body (not
/// SSE), as many servers do; notifications get 202.
fn json_reply_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        use std::io::{BufRead, BufReader, Read, Write};
        for stream in listener.incoming().take(32) {
            let Ok(mut s) = stream else { continue };
            let mut reader = BufReader::new(s.try_clone().unwrap());
            let mut len = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0u8; len];
            let _ = reader.read_exact(&mut body);
            let msg: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
            let reply = match (msg["method"].as_str(), msg.get("id")) {
                (_, None) => None,
                (Some("initialize"), Some(id)) => Some(format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"protocolVersion":"2025-06-18","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"json-reply","version":"1"}}}}}}"#
                )),
                (Some("tools/list"), Some(id)) => Some(format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{{"name":"echo","description":"Echo it back, \u00e9","inputSchema":{{"type":"object"}},"execution":{{"taskSupport":"forbidden"}}}}]}}}}"#
                )),
                (Some("tools/call"), Some(id)) => Some(format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"hi"}}]}}}}"#
                )),
                (_, Some(id)) => Some(format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32601,"message":"no"}}}}"#
                )),
            };
            let _ = match reply {
                Some(b) => write!(
                    s,
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nmcp-session-id: abc\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{b}",
                    b.len()
                ),
                None => write!(s, "HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"),
            };
        }
    });
    port
}

#[test]
fn plain_json_replies_are_captured_byte_for_byte() {
    let port = json_reply_server();
    let home = tempfile::tempdir().unwrap();
    let toml = format!("[servers.j]\nurl = \"http://127.0.0.1:{port}/mcp\"\n[[servers.j.probes]]\ntool = \"echo\"\n");
    let (report, _) = crate::support::audit_probe(home.path(), &toml, &["--timeout", "20"], &[], 0);
    let s = &report["servers"][0];
    let page = r#"{"tools":[{"name":"echo","description":"Echo it back, \u00e9","inputSchema":{"type":"object"},"execution":{"taskSupport":"forbidden"}}]}"#;
    assert_eq!(
        s["tools_list"]["wire_bytes"],
        page.len(),
        "the escaped \\u00e9 and `execution` are kept as sent"
    );
    assert_eq!(
        s["tools"][0]["other_tokens"].as_u64().map(|n| n > 0),
        Some(true)
    );
    assert_eq!(s["probes"][0]["status"], "ok");
}
