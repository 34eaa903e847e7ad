//! The proxy (and audit) against upstreams that are hostile in their lists and results
//! (`tests/fixtures/hostile_lists.py`), and HTTP clients that open sessions without end.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::{audit_probe, bin_path, free_port, serve_on};

/// How long any one answer may take: every answer here is due in well under a second.
const PROMPTLY: Duration = Duration::from_secs(20);

fn script() -> PathBuf {
    crate::support::repo().join("tests/fixtures/hostile_lists.py")
}

/// `mcp-budget proxy --log LOG -- python3 hostile_lists.py MODE` on stdio, its stderr in a
/// file; every answer is awaited at most [`PROMPTLY`] (a proxy that never answers fails the
/// test instead of hanging it). Killed on drop.
struct LineProxy {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: mpsc::Receiver<Value>,
    notes: Vec<Value>,
    stderr: PathBuf,
    log: PathBuf,
    marker: PathBuf,
}

impl LineProxy {
    fn start(home: &Path, mode: &str) -> LineProxy {
        let (stderr, log, marker) = (
            home.join("stderr.txt"),
            home.join("calls.jsonl"),
            home.join("listed.txt"),
        );
        let mut child = Command::new(bin_path())
            .args(["proxy", "--spill-dir"])
            .arg(home.join("spill"))
            .arg("--log")
            .arg(&log)
            .args(["--", "python3"])
            .arg(script())
            .arg(mode)
            .env("HOSTILE_MARKER", &marker)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { return };
                if tx.send(serde_json::from_str(&line).unwrap()).is_err() {
                    return;
                }
            }
        });
        let mut p = LineProxy {
            child,
            stdin,
            lines,
            notes: Vec::new(),
            stderr,
            log,
            marker,
        };
        p.call(
            0,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}}),
        );
        p.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        p
    }

    fn send(&mut self, v: Value) {
        writeln!(self.stdin, "{v}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Send a request and wait for its response (keeping notifications that arrive meanwhile).
    fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let started = Instant::now();
        loop {
            let left = PROMPTLY.saturating_sub(started.elapsed());
            let msg = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("no answer to `{method}` within {PROMPTLY:?}: {e}"));
            if msg["id"] == id {
                return msg;
            }
            if msg.get("id").is_none() {
                self.notes.push(msg);
            }
        }
    }

    fn tool_names(&mut self, id: u64) -> Vec<String> {
        let listed = self.call(id, "tools/list", json!({}));
        listed["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("{listed}"))
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    }

    /// The tools/list requests the upstream received so far.
    fn pages_asked(&self) -> usize {
        std::fs::read_to_string(&self.marker)
            .unwrap_or_default()
            .lines()
            .count()
    }

    /// Stop the proxy; what it printed on stderr.
    fn stop(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        std::fs::read_to_string(&self.stderr).unwrap()
    }
}

impl Drop for LineProxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn issue12_21_a_cursor_that_cycles_from_the_start_lists_each_tool_once() {
    let home = tempfile::tempdir().unwrap();
    let mut p = LineProxy::start(home.path(), "cycle");
    assert_eq!(p.tool_names(1), ["probe", "other", "mcp_budget_read"]);
    // no cursor, p1, p2, and p1 again is where the walker stops
    assert_eq!(p.pages_asked(), 3);
    let stderr = p.stop();
    assert!(
        stderr.contains("tools/list stopped: the server repeated cursor `p1` after 3 pages"),
        "{stderr}"
    );
}

#[test]
fn issue12_21_after_list_changed_an_endless_cursor_is_cut_and_each_tool_shown_once() {
    let home = tempfile::tempdir().unwrap();
    let mut p = LineProxy::start(home.path(), "endless");
    assert_eq!(p.tool_names(1), ["probe", "mcp_budget_read"]);
    let started = Instant::now();
    let called = p.call(2, "tools/call", json!({"name": "probe", "arguments": {}}));
    assert_eq!(called["result"]["content"][0]["text"], "fine", "{called}");
    // the proxy reads the tools again before it passes list_changed on
    for id in 3..200 {
        if p.notes
            .iter()
            .any(|n| n["method"] == "notifications/tools/list_changed")
        {
            break;
        }
        p.call(id, "ping", json!({}));
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(p.tool_names(300), ["probe", "other", "mcp_budget_read"]);
    let took = started.elapsed();
    // the first listing, then the walker's 1,000 pages
    assert_eq!(p.pages_asked(), 1 + 1000);
    let stderr = p.stop();
    assert!(
        stderr.contains("the server was still sending cursors after 1000 pages"),
        "{stderr}"
    );
    assert!(
        stderr.contains("tools/list named 2 tools more than once (`other`, `probe`)"),
        "{stderr}"
    );
    eprintln!("1,000 pages re-listed through the proxy in {took:?}");
}

#[test]
fn issue12_24_a_result_nested_100000_deep_fails_the_call_at_once_through_the_proxy() {
    let home = tempfile::tempdir().unwrap();
    let mut p = LineProxy::start(home.path(), "deep");
    let started = Instant::now();
    let answer = p.call(1, "tools/call", json!({"name": "probe", "arguments": {}}));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert_eq!(
        message,
        "the upstream server `python3` failed: `tools/call` failed: the server sent a response nested deeper than 127 levels",
        "{answer}"
    );
    // the session goes on
    let fine = p.call(2, "tools/call", json!({"name": "other", "arguments": {}}));
    assert_eq!(fine["result"]["content"][0]["text"], "fine", "{fine}");
    // the answered call's line is written just after its answer
    let started = Instant::now();
    let mut log = String::new();
    while log.lines().count() < 2 && started.elapsed() < PROMPTLY {
        std::thread::sleep(Duration::from_millis(50));
        log = std::fs::read_to_string(&p.log).unwrap_or_default();
    }
    let records: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 2, "{log}");
    let failed = records.iter().find(|r| r["tool"] == "probe").unwrap();
    assert_eq!(failed["is_error"], true);
    assert_eq!(failed["strategy"], "error");
    assert_eq!(failed["error"], message);
    let stderr = p.stop();
    assert!(
        stderr.contains(&format!(
            "mcp-budget proxy: warning: tool `probe`: {message}"
        )),
        "{stderr}"
    );
}

#[test]
fn issue12_21_24_audit_names_a_cycling_cursor_and_fails_a_deep_result_at_once() {
    let home = tempfile::tempdir().unwrap();
    let script = script().display().to_string();
    let toml = format!(
        "[servers.deep]\ncommand = \"python3\"\nargs = [{script:?}, \"deep\"]\n[[servers.deep.probes]]\ntool = \"probe\"\n\
         [servers.cycle]\ncommand = \"python3\"\nargs = [{script:?}, \"cycle\"]\n"
    );
    let started = Instant::now();
    let (report, _) = audit_probe(home.path(), &toml, &["--timeout", "60"], &[], 2);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "took {:?}",
        started.elapsed()
    );
    let servers = report["servers"].as_array().unwrap();
    let server = |n: &str| servers.iter().find(|s| s["name"] == n).unwrap().clone();
    let deep = server("deep");
    assert_eq!(deep["status"], "ok", "{deep}");
    let probe = &deep["probes"][0];
    assert_eq!(probe["status"], "error", "{probe}");
    assert!(
        probe["error"].as_str().unwrap().starts_with(
            "`tools/call` failed: the server sent a response nested deeper than 127 levels"
        ),
        "{probe}"
    );
    let cycle = server("cycle");
    assert_eq!(cycle["status"], "error");
    assert_eq!(
        cycle["error"],
        "`tools/list` failed: the server repeated cursor `p1` after 3 pages (its pages go round in a circle)"
    );
}

#[test]
fn issue12_25_an_upstream_mcp_budget_read_is_hidden_behind_the_proxys_own() {
    let home = tempfile::tempdir().unwrap();
    let mut p = LineProxy::start(home.path(), "clash");
    let listed = p.call(1, "tools/list", json!({}));
    let tools = listed["result"]["tools"].as_array().unwrap();
    let reads: Vec<&Value> = tools
        .iter()
        .filter(|t| t["name"] == "mcp_budget_read")
        .collect();
    assert_eq!(reads.len(), 1, "{listed}");
    let ours = mcp_budget::run::proxy::read_tool_definition();
    assert_eq!(reads[0], &ours);
    assert_eq!(tools.len(), 2);
    p.tool_names(2);
    let stderr = p.stop();
    let warning = "upstream `python3` has a tool of its own named like the proxy's (`mcp_budget_read`, `mcp_budget_find_tools`, `mcp_budget_call_tool`): it is hidden, and the name is the proxy's";
    assert_eq!(stderr.matches(warning).count(), 1, "{stderr}");
}

/// One raw HTTP request to the proxy: the status, the `mcp-session-id` header and the body.
fn http(port: u16, session: Option<&str>, body: &str) -> (u16, Option<String>, String) {
    http_in(port, session, body, "2025-06-18", None)
}

/// [`http`] with this `mcp-protocol-version` header, and an `mcp-method` header when given.
fn http_in(
    port: u16,
    session: Option<&str>,
    body: &str,
    version: &str,
    method: Option<&str>,
) -> (u16, Option<String>, String) {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(PROMPTLY)).unwrap();
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nmcp-protocol-version: {version}\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    if let Some(id) = session {
        req.push_str(&format!("mcp-session-id: {id}\r\n"));
    }
    if let Some(m) = method {
        req.push_str(&format!("mcp-method: {m}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap();
    let mut resp = String::new();
    let _ = s.read_to_string(&mut resp);
    let status = resp
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let session = resp.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case("mcp-session-id")
            .then(|| v.trim().to_string())
    });
    let body = resp
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, session, body)
}

/// The body of the 503 an initialize gets at the cap.
fn body_of_503(port: u16) -> String {
    let (status, _, body) = http(port, None, INITIALIZE);
    assert_eq!(status, 503);
    body
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

#[test]
fn issue12_23_http_sessions_are_capped_and_idle_ones_expire() {
    let home = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut cmd = Command::new(bin_path());
    cmd.args(["proxy", "--spill-dir"])
        .arg(home.path().join("spill"))
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .args(["--max-sessions", "2"])
        .env("MCP_BUDGET_SESSION_IDLE_SECS", "2")
        .args(["--", "python3"])
        .arg(script())
        .arg("clash");
    let _served = serve_on(cmd, port);
    let open = || {
        let (status, id, body) = http(port, None, INITIALIZE);
        assert_eq!(status, 200, "{body}");
        let id = id.expect("a session id");
        assert_eq!(http(port, Some(&id), INITIALIZED).0, 202);
        id
    };
    let first = open();
    let _second = open();
    let (status, id, body) = http(port, None, INITIALIZE);
    assert_eq!((status, id), (503, None), "{body}");
    // an initialize that claims the 2026-07-28 era in its header still opens a session, and
    // is counted; a request of that era, which opens none, is served
    let claims = INITIALIZE.replace("2025-06-18", "2026-07-28");
    let (status, id, _) = http_in(port, None, &claims, "2026-07-28", None);
    assert_eq!((status, id), (503, None));
    let modern = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let (status, id, body) = http_in(port, None, modern, "2026-07-28", Some("tools/list"));
    assert_eq!((status, id), (200, None), "{body}");
    assert!(body.contains("mcp_budget_read"), "{body}");
    let error: Value = serde_json::from_str(&body_of_503(port)).unwrap();
    assert_eq!(
        error["error"]["message"],
        "mcp-budget proxy: 2 sessions are open, the most it keeps (--max-sessions); close one (DELETE) or try again when an idle one expires"
    );
    // both idle for over 2 s: closed, their ids unknown, and two new sessions fit again
    std::thread::sleep(Duration::from_secs(4));
    let (status, _, body) = http(port, Some(&first), INITIALIZED);
    assert_eq!(status, 404, "{body}");
    let _third = open();
    let _fourth = open();
    assert_eq!(http(port, None, INITIALIZE).0, 503);
}
