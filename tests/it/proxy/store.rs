//! Issue 26, cases 9 and 11: proxies that share a spill store serve only their own upstream's
//! spills (listed, read, paged as resources), and a call log that cannot be written says so.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use mcp_budget::ground::tokens::Tokenizer;
use serde_json::{json, Value};

use crate::support::{bin_path, RawClient};

use super::texts;

/// `proxy --name NAME` in front of the demo server, spilling into `spill`.
fn demo_proxy(spill: &Path, name: &str) -> RawClient {
    let bin = bin_path();
    RawClient::spawn(
        &bin,
        &[
            "proxy",
            "--spill-dir",
            spill.to_str().unwrap(),
            "--budget",
            "4000",
            "--name",
            name,
            "--",
            bin.to_str().unwrap(),
            "demo-server",
        ],
    )
}

/// Call the demo's scrape (about 1.1M characters) and return its spill handle.
fn scrape_handle(c: &mut RawClient) -> String {
    let shown: Value = serde_json::from_str(&c.request(
        "tools/call",
        json!({"name": "scrape_as_markdown", "arguments": {}}),
    ))
    .unwrap();
    texts(&shown)
        .split("mcp_budget_read with handle \"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .expect("the note names the handle")
        .to_string()
}

fn resource_uris(c: &mut RawClient) -> Vec<String> {
    let listed: Value = serde_json::from_str(&c.request("resources/list", json!({}))).unwrap();
    listed["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap().to_string())
        .filter(|u| u.starts_with("mcp-budget://spill/"))
        .collect()
}

#[test]
fn issue26_9_a_proxy_serves_only_its_own_upstreams_spills_and_pages_them_as_resources() {
    let home = tempfile::tempdir().unwrap();
    let spill = home.path().join("shared-store");
    let mut alpha = demo_proxy(&spill, "alpha");
    let mut beta = demo_proxy(&spill, "beta");
    let a = scrape_handle(&mut alpha);
    let b = scrape_handle(&mut beta);
    assert!(a.starts_with("alpha/") && b.starts_with("beta/"), "{a} {b}");
    // the same content spilled twice, once per server folder
    assert_eq!(
        a.trim_start_matches("alpha/"),
        b.trim_start_matches("beta/")
    );

    // listed: each its own
    assert_eq!(
        resource_uris(&mut alpha),
        [format!("mcp-budget://spill/{a}")]
    );
    assert_eq!(
        resource_uris(&mut beta),
        [format!("mcp-budget://spill/{b}")]
    );
    // read: the other's handle is unknown, by the tool and as a resource
    let theirs: Value = serde_json::from_str(&beta.request(
        "tools/call",
        json!({"name": "mcp_budget_read", "arguments": {"handle": a}}),
    ))
    .unwrap();
    assert_eq!(theirs["isError"], true, "{theirs}");
    assert!(texts(&theirs).contains("no spilled result"), "{theirs}");
    let line = beta.request_raw(
        "resources/read",
        json!({"uri": format!("mcp-budget://spill/{a}")}),
    );
    assert!(
        line.contains("\"error\"") && line.contains("no spill"),
        "{line}"
    );

    // a spill read as a resource is a page within the budget, as mcp_budget_read pages it
    let uri = format!("mcp-budget://spill/{b}");
    let read: Value =
        serde_json::from_str(&beta.request("resources/read", json!({"uri": uri}))).unwrap();
    let page = read["contents"][0]["text"].as_str().unwrap();
    assert!(
        Tokenizer::Cl100k.count(page) <= 4000,
        "{} tokens",
        Tokenizer::Cl100k.count(page)
    );
    let tool_page: Value = serde_json::from_str(&beta.request(
        "tools/call",
        json!({"name": "mcp_budget_read", "arguments": {"handle": b}}),
    ))
    .unwrap();
    assert_eq!(page, texts(&tool_page));
    let footer = page.lines().last().unwrap();
    let next: usize = footer
        .split("start_line=")
        .nth(1)
        .map(|r| {
            r.chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
        })
        .unwrap()
        .parse()
        .unwrap();
    // and the footer's start_line reads on, on the URI
    let on: Value = serde_json::from_str(&beta.request(
        "resources/read",
        json!({"uri": format!("{uri}?start_line={next}")}),
    ))
    .unwrap();
    let tool_on: Value = serde_json::from_str(&beta.request(
        "tools/call",
        json!({"name": "mcp_budget_read", "arguments": {"handle": b, "start_line": next}}),
    ))
    .unwrap();
    assert_eq!(on["contents"][0]["text"].as_str().unwrap(), texts(&tool_on));
    assert!(texts(&tool_on).contains(&format!("[mcp-budget: lines {next}-")));
}

/// `proxy --log FILE` on stdio, stderr to a file; requests answered in order.
struct Logged {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
}

impl Logged {
    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{msg}").unwrap();
        self.stdin.flush().unwrap();
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "the proxy ended"
            );
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v;
            }
        }
    }
}

#[cfg(target_os = "linux")]
#[test]
fn issue26_11_a_call_log_that_cannot_be_written_says_so_once() {
    let home = tempfile::tempdir().unwrap();
    let stderr = home.path().join("stderr.txt");
    let bin = bin_path();
    // /dev/full opens for appending and fails every write (ENOSPC)
    let mut child = Command::new(&bin)
        .args(["proxy", "--spill-dir"])
        .arg(home.path().join("spill"))
        .args(["--log", "/dev/full", "--name", "demo", "--"])
        .arg(&bin)
        .arg("demo-server")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    let mut p = Logged {
        stdin: child.stdin.take().unwrap(),
        stdout: BufReader::new(child.stdout.take().unwrap()),
        child,
    };
    p.request(
        0,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}),
    );
    writeln!(
        p.stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    for id in 1..=3 {
        let r = p.request(
            id,
            "tools/call",
            json!({"name": "get_forecast", "arguments": {"city": "Oslo"}}),
        );
        assert!(
            r["result"].is_object(),
            "the call is answered all the same: {r}"
        );
    }
    // the log is written after the answer: wait for the warning, then for a while more
    let said = |text: &str| {
        text.matches("the call log /dev/full cannot be written")
            .count()
    };
    let started = std::time::Instant::now();
    while said(&std::fs::read_to_string(&stderr).unwrap()) == 0 && started.elapsed().as_secs() < 20
    {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    let _ = p.child.kill();
    let _ = p.child.wait();
    let text = std::fs::read_to_string(&stderr).unwrap();
    assert_eq!(said(&text), 1, "{text}");
    assert!(text.contains("No space left on device"), "{text}");
}
