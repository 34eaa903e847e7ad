//! The proxy end to end: real clients (the raw JSON-RPC client of these tests and the official
//! Python SDK's) through `mcp-budget proxy` to the demo server, real servers and hostile ones.
//! One file per topic; the helpers they share are here.

mod clients;
mod eras;
mod forwarding;
mod http;
mod lazy;
mod lean;
mod lifecycle;
mod listen_limits;
mod notifications;
mod own_results;
mod relay;
mod sdk;
mod store;
mod tools;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::support::{bin_path, free_port, serve_on};

fn proxy_args<'a>(spill: &'a str, log: &'a str, bin: &'a str, budget: &'a str) -> Vec<&'a str> {
    vec![
        "proxy",
        "--spill-dir",
        spill,
        "--log",
        log,
        "--deny",
        "create_*",
        "--budget",
        budget,
        "--name",
        "demo",
        "--",
        bin,
        "demo-server",
    ]
}

fn texts(result: &Value) -> String {
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The official Python SDK's client (`mcp` from PyPI, installed by `.ci/run` into
/// target/test-venv), or a skip (fatal under MCP_BUDGET_REQUIRE_REAL_SERVERS).
fn python_sdk() -> Option<std::path::PathBuf> {
    crate::support::venv_python("mcp", "the Python mcp SDK")
}

/// Run tests/fixtures/sdk_client.py against `proxy ... -- upstream...`.
fn sdk_run(python: &std::path::Path, tool: &str, proxy: &[&str]) -> Value {
    let bin = bin_path();
    let mut args = vec![tool, bin.to_str().unwrap()];
    args.extend_from_slice(proxy);
    sdk(python, &args)
}

/// Run tests/fixtures/sdk_client.py with these arguments; its JSON output.
fn sdk(python: &std::path::Path, args: &[&str]) -> Value {
    crate::support::run_json(
        Command::new(python)
            .arg(crate::support::repo().join("tests/fixtures/sdk_client.py"))
            .args(args),
    )
}

/// `mcp-budget proxy` in front of `tests/fixtures/hostile_server.py MODE`, driven line by line;
/// killed on drop.
struct HostileProxy {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
    /// Notifications read while waiting for responses.
    notes: Vec<Value>,
}

impl HostileProxy {
    fn start(spill: &std::path::Path, mode: &str, envs: &[(&str, &std::path::Path)]) -> Self {
        let hostile = crate::support::repo().join("tests/fixtures/hostile_server.py");
        let mut cmd = Command::new(bin_path());
        cmd.args(["proxy", "--spill-dir"])
            .arg(spill)
            .args(["--", "python3"])
            .arg(&hostile)
            .arg(mode)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut p = HostileProxy {
            child,
            stdin,
            stdout,
            notes: Vec::new(),
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
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "the proxy closed stdout"
            );
            let msg: Value = serde_json::from_str(&line).unwrap();
            if msg["id"] == id {
                return msg;
            }
            if msg.get("id").is_none() {
                self.notes.push(msg);
            }
        }
    }
}

impl Drop for HostileProxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The tools server-everything registers only for a client that offers roots, elicitation and
/// sampling.
const EVERYTHING_CLIENT_TOOLS: [&str; 4] = [
    "get-roots-list",
    "trigger-elicitation-request",
    "trigger-url-elicitation",
    "trigger-sampling-request",
];

/// server-everything's `trigger-long-running-operation`: four steps, a progress note each.
const LONG_RUN: &str = r#"{"duration": 0.4, "steps": 4}"#;

/// The SDK client's call showed `text`.
fn assert_shown(got: &Value, text: &str) {
    let shown = got["shown"].as_str().unwrap_or_default();
    assert!(
        shown.contains(text),
        "`{text}` is not in what the call showed: {got}"
    );
}

/// The `[progress, total]` pairs the SDK client's progress callback saw.
fn progress(got: &Value) -> Vec<(f64, f64)> {
    got["progress"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_f64().unwrap(), p[1].as_f64().unwrap()))
        .collect()
}

fn four_steps() -> Vec<(f64, f64)> {
    (1..=4).map(|i| (f64::from(i), 4.0)).collect()
}

/// The methods of the notifications in `notes`.
fn methods(notes: &Value) -> Vec<&str> {
    notes
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n["method"].as_str())
        .collect()
}

/// `proxy --listen` on a free port in front of `upstream`; the URL and the running proxy.
fn proxy_on_http(spill: &std::path::Path, upstream: &[&str]) -> (String, crate::support::Served) {
    proxy_on_http_with(spill, upstream, &[])
}

/// [`proxy_on_http`] with these environment variables.
fn proxy_on_http_with(
    spill: &std::path::Path,
    upstream: &[&str],
    envs: &[(&str, &std::path::Path)],
) -> (String, crate::support::Served) {
    let port = free_port();
    let mut cmd = Command::new(bin_path());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.args(["proxy", "--spill-dir"])
        .arg(spill)
        .args(["--listen", &format!("127.0.0.1:{port}"), "--"])
        .args(upstream);
    (format!("http://127.0.0.1:{port}/mcp"), serve_on(cmd, port))
}
