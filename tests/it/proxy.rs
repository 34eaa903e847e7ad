//! The proxy end to end: a real client (the raw JSON-RPC client of these tests) through
//! `mcp-budget proxy` to the demo server: a 237k-token result arrives within the budget, paging
//! `mcp_budget_read` to the end gives back the whole original, denied tools are invisible and
//! uncallable, every call is logged once, and 100 concurrent calls each get their own result.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use mcp_budget::demo::DemoServer;
use mcp_budget::tokens::Tokenizer;
use serde_json::{json, Value};

use crate::support::{bin_path, free_port, real_server, serve_on, RawClient};

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

#[test]
fn a_huge_result_fits_and_reads_back_whole() {
    let home = tempfile::tempdir().unwrap();
    let (spill, log) = (home.path().join("spill"), home.path().join("calls.jsonl"));
    let bin = bin_path();
    let (spill_s, log_s, bin_s) = (
        spill.to_str().unwrap(),
        log.to_str().unwrap(),
        bin.to_str().unwrap(),
    );
    let mut c = RawClient::spawn(&bin, &proxy_args(spill_s, log_s, bin_s, "4000"));

    let tools: Value = serde_json::from_str(&c.request("tools/list", json!({}))).unwrap();
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names.len(),
        13,
        "12 of the demo's 13 tools and mcp_budget_read: {names:?}"
    );
    assert!(!names.contains(&"create_ticket") && names.contains(&"mcp_budget_read"));
    // every other definition is the server's own, field for field and in its key order
    let own: Vec<Value> = mcp_budget::demo::tool_definitions()
        .into_iter()
        .filter(|t| t["name"] != "create_ticket")
        .collect();
    let shown = &tools["tools"].as_array().unwrap()[..12];
    assert_eq!(
        serde_json::to_string(shown).unwrap(),
        serde_json::to_string(&own).unwrap()
    );

    let raw = c.request(
        "tools/call",
        json!({"name": "scrape_as_markdown", "arguments": {}}),
    );
    let result: Value = serde_json::from_str(&raw).unwrap();
    let shown = texts(&result);
    assert!(
        Tokenizer::Cl100k.count(&shown) <= 4000,
        "{}",
        Tokenizer::Cl100k.count(&shown)
    );
    let handle = shown
        .split("mcp_budget_read with handle \"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .expect("the note names the handle")
        .to_string();

    // page to the end: the whole original comes back
    let original = DemoServer::new("demo")
        .call("scrape_as_markdown", &serde_json::Map::new())
        .unwrap();
    let original = original["content"][0]["text"].as_str().unwrap();
    assert!(Tokenizer::Cl100k.count(original) > 200_000);
    let mut got = String::new();
    let (mut start, mut start_char) = (1usize, 0usize);
    let mut pages = 0;
    loop {
        let page: Value = serde_json::from_str(&c.request(
            "tools/call",
            json!({"name": "mcp_budget_read", "arguments": {
                "handle": handle, "start_line": start, "start_char": start_char}}),
        ))
        .unwrap();
        let text = texts(&page);
        assert!(
            Tokenizer::Cl100k.count(&text) <= 4000,
            "a page fits the budget"
        );
        let (body, footer) = text.rsplit_once("[mcp-budget: ").unwrap();
        pages += 1;
        let num = |key: &str| -> Option<usize> {
            footer.split(key).nth(1).map(|r| {
                let digits: String = r.chars().take_while(char::is_ascii_digit).collect();
                digits.parse().unwrap()
            })
        };
        let at = num("start_char=");
        // a line longer than the budget continues on the next page
        got.push_str(if at.is_some() {
            body.strip_suffix('\n').unwrap()
        } else {
            body
        });
        match num("start_line=") {
            Some(n) => (start, start_char) = (n, at.unwrap_or(0)),
            None => break,
        }
    }
    let (got, want): (Vec<&str>, Vec<&str>) = (got.lines().collect(), original.lines().collect());
    assert_eq!(got.len(), want.len(), "line count");
    if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
        panic!(
            "line {} differs ({} vs {} bytes)",
            i + 1,
            got[i].len(),
            want[i].len()
        );
    }
    assert!(pages > 50, "{pages} pages");

    // grep: numbered matching lines
    let found: Value = serde_json::from_str(&c.request(
        "tools/call",
        json!({"name": "mcp_budget_read", "arguments": {"handle": handle, "grep": "^## "}}),
    ))
    .unwrap();
    let found = texts(&found);
    let first = original.lines().position(|l| l.starts_with("## ")).unwrap() + 1;
    assert!(found.starts_with(&format!("{first}: ## ")), "{found}");

    // the spill is a resource too
    let resources: Value = serde_json::from_str(&c.request("resources/list", json!({}))).unwrap();
    let uri = format!("mcp-budget://spill/{handle}");
    assert!(resources["resources"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["uri"] == uri));
    let read: Value =
        serde_json::from_str(&c.request("resources/read", json!({"uri": uri}))).unwrap();
    assert_eq!(read["contents"][0]["text"].as_str().unwrap(), original);

    // one log line per upstream call (reads are not upstream calls), secrets-free by design
    drop(c);
    let records = mcp_budget::proxy::read_log(&log).unwrap();
    assert_eq!(records.len(), 1, "{records:?}");
    let r = &records[0];
    assert_eq!(
        (
            r.tool.as_str(),
            r.client_name.as_deref(),
            r.strategy.as_str()
        ),
        ("scrape_as_markdown", Some("raw-test-client"), "spilled")
    );
    assert_eq!(r.spill_id.as_deref(), Some(handle.as_str()));
    // raw tokens are the model view of the upstream's result: here its one text, counted apart
    assert_eq!(r.raw_tokens, Tokenizer::Cl100k.count(original), "{r:?}");
    assert!(r.returned_tokens <= 4000, "{r:?}");

    // and `stats` summarises the log
    let out = crate::support::mcp_budget(home.path(), home.path())
        .args(["stats", log_s, "--format", "json"])
        .assert()
        .success();
    let rows: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(rows[0]["tool"], "scrape_as_markdown");
    assert_eq!(rows[0]["calls"], 1);
    assert_eq!(rows[0]["raw_tokens_max"], r.raw_tokens);
    assert_eq!(rows[0]["spilled"], 1);

    // and draws it: SVG or PNG by the file's extension, anything else refused before reading
    for name in ["calls.svg", "calls.png"] {
        let chart = home.path().join(name);
        crate::support::mcp_budget(home.path(), home.path())
            .args(["stats", log_s, "--chart"])
            .arg(&chart)
            .assert()
            .success();
        let bytes = std::fs::read(&chart).unwrap();
        if name.ends_with(".svg") {
            let svg = String::from_utf8(bytes).unwrap();
            assert!(svg.contains("demo/scrape_as_markdown (1 call)"));
            assert!(svg.contains(&mcp_budget::report::thousands(r.raw_tokens)));
        } else {
            assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        }
    }
    let out = crate::support::mcp_budget(home.path(), home.path())
        .args(["stats", log_s, "--chart", "calls.jpg"])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("calls.jpg") && err.contains(".svg or .png"),
        "{err}"
    );
    assert!(!home.path().join("calls.jpg").exists());
}

#[test]
fn denied_tools_are_refused_and_100_concurrent_calls_each_get_their_result() {
    let home = tempfile::tempdir().unwrap();
    let (spill, log) = (home.path().join("spill"), home.path().join("calls.jsonl"));
    let bin = bin_path();
    let mut child = Command::new(&bin)
        .args(proxy_args(
            spill.to_str().unwrap(),
            log.to_str().unwrap(),
            bin.to_str().unwrap(),
            "8000",
        ))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |v: Value| {
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "burst", "version": "1"}}}),
    );
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    // all at once, without waiting: list_tickets pages of different sizes, and a denied tool
    for i in 0..100u64 {
        send(
            json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
            "name": "list_tickets", "arguments": {"limit": i % 50 + 1}}}),
        );
    }
    send(
        json!({"jsonrpc": "2.0", "id": "denied", "method": "tools/call", "params": {
        "name": "create_ticket", "arguments": {"title": "x"}}}),
    );
    let demo = DemoServer::new("demo");
    let mut seen = std::collections::BTreeSet::new();
    while seen.len() < 101 {
        line.clear();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "the proxy closed stdout"
        );
        let msg: Value = serde_json::from_str(&line).unwrap();
        if msg["id"] == "denied" {
            assert_eq!(msg["error"]["code"], -32602);
            assert!(msg["error"]["message"]
                .as_str()
                .unwrap()
                .contains("create_ticket"));
            seen.insert(u64::MAX);
            continue;
        }
        let Some(id) = msg["id"].as_u64() else {
            continue;
        };
        let mut args = serde_json::Map::new();
        args.insert("limit".into(), json!(id % 50 + 1));
        let want = demo.call("list_tickets", &args).unwrap();
        assert_eq!(msg["result"]["content"], want["content"], "call {id}");
        assert!(seen.insert(id), "call {id} answered twice");
    }
    drop(stdin);
    let _ = child.wait();
    let records = mcp_budget::proxy::read_log(&log).unwrap();
    assert_eq!(records.len(), 100, "each call logged once, whole");
    assert!(records
        .iter()
        .all(|r| r.tool == "list_tickets" && r.client_name.as_deref() == Some("burst")));
}

/// The official Python SDK's client (`mcp` from PyPI, installed by `.ci/run` into
/// target/test-venv), or a skip (fatal under MCP_BUDGET_REQUIRE_REAL_SERVERS).
fn python_sdk() -> Option<std::path::PathBuf> {
    let python = crate::support::repo().join("target/test-venv/bin/python");
    let ok = python.exists()
        && Command::new(&python)
            .args(["-c", "import mcp"])
            .status()
            .is_ok_and(|s| s.success());
    if ok {
        return Some(python);
    }
    assert!(
        std::env::var_os("MCP_BUDGET_REQUIRE_REAL_SERVERS").is_none(),
        "the Python mcp SDK is missing in target/test-venv but MCP_BUDGET_REQUIRE_REAL_SERVERS is set"
    );
    eprintln!("SKIP: the Python mcp SDK is not installed (run .ci/run)");
    None
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
    let out = Command::new(python)
        .arg(crate::support::repo().join("tests/fixtures/sdk_client.py"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_python_sdk_client_works_through_the_proxy() {
    let Some(python) = python_sdk() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let spill = home.path().join("spill");
    let bin = bin_path();
    let (spill_s, bin_s) = (spill.to_str().unwrap(), bin.to_str().unwrap());

    // the demo: a 237k-token scrape arrives within 4,000 tokens and pages back whole
    let got = sdk_run(
        &python,
        "scrape_as_markdown",
        &[
            "proxy",
            "--spill-dir",
            spill_s,
            "--budget",
            "4000",
            "--",
            bin_s,
            "demo-server",
        ],
    );
    assert_eq!(
        got["server_name"], "mcp-budget-demo",
        "the upstream's own name"
    );
    assert_eq!(got["tools"].as_array().unwrap().len(), 14);
    let shown = got["shown"].as_str().unwrap();
    assert!(Tokenizer::Cl100k.count(shown) <= 4000);
    let original = DemoServer::new("demo")
        .call("scrape_as_markdown", &serde_json::Map::new())
        .unwrap();
    let original = original["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        got["paged"].as_str().unwrap().lines().count(),
        original.lines().count()
    );
    assert!(got["paged"].as_str().unwrap().lines().eq(original.lines()));
    assert_eq!(got["resource"].as_str().unwrap(), original);

    // the real server-everything: its tools pass through, a small result untouched
    if let Some(everything) = crate::support::real_server("mcp-server-everything") {
        let got = sdk_run(
            &python,
            "get-tiny-image",
            &[
                "proxy",
                "--spill-dir",
                spill_s,
                "--",
                everything.to_str().unwrap(),
                "stdio",
            ],
        );
        let tools: Vec<&str> = got["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        assert!(tools.contains(&"get-tiny-image") && tools.contains(&"mcp_budget_read"));
        // the proxy offers the server sampling, elicitation and roots (passing them on to its
        // client), so server-everything adds the four tools it keeps for such clients
        for t in EVERYTHING_CLIENT_TOOLS {
            assert!(tools.contains(&t), "{t} missing from {tools:?}");
        }
        assert_eq!(
            tools.len(),
            18,
            "server-everything's 13 tools, its 4 for capable clients, and mcp_budget_read"
        );
        assert_eq!(got["is_error"], false);
        assert_eq!(got["handle"], Value::Null, "a small result is not cut");
    }
}

#[test]
fn an_upstream_that_dies_mid_call_is_a_clear_error_not_a_hang() {
    let home = tempfile::tempdir().unwrap();
    let hostile = crate::support::repo().join("tests/fixtures/hostile_server.py");
    let toml = format!(
        "[servers.p]\ncommand = {:?}\nargs = [\"proxy\", \"--spill-dir\", {:?}, \"--\", \"python3\", {:?}, \"crash-call\"]\n[[servers.p.probes]]\ntool = \"probe\"\n",
        bin_path().display().to_string(),
        home.path().join("spill").display().to_string(),
        hostile.display().to_string()
    );
    let started = std::time::Instant::now();
    // the failed probe exits 2, with the report still written
    let (report, _) = crate::support::audit_probe(home.path(), &toml, &["--timeout", "30"], &[], 2);
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    let probe = &report["servers"][0]["probes"][0];
    assert_eq!(probe["status"], "error", "{probe}");
    let error = probe["error"].as_str().unwrap();
    assert!(error.contains("upstream server `python3`"), "{error}");
}

#[test]
fn a_dead_upstream_is_restarted_and_the_next_call_works() {
    let home = tempfile::tempdir().unwrap();
    let marker = home.path().join("crashed-once");
    let mut p = HostileProxy::start(
        &home.path().join("spill"),
        "crash-once",
        &[("HOSTILE_MARKER", &marker)],
    );
    let first = p.call(1, "tools/call", json!({"name": "probe", "arguments": {}}));
    let error = first["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        error.contains("has stopped") && error.contains("restarting"),
        "{first}"
    );
    assert!(marker.exists());
    // the proxy starts the server again; a later call is answered by the new process
    let mut answered = None;
    for id in 2..40 {
        let msg = p.call(id, "tools/call", json!({"name": "probe", "arguments": {}}));
        if msg.get("result").is_some() {
            answered = Some(msg);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
    let msg = answered.expect("the restarted upstream answers within 10 s");
    assert_eq!(msg["result"]["content"][0]["text"], "back up");
}

#[test]
fn upstream_notifications_reach_the_client_and_list_changes_refresh_the_tools() {
    let home = tempfile::tempdir().unwrap();
    let mut p = HostileProxy::start(&home.path().join("spill"), "notify", &[]);
    let tools = |v: &Value| -> Vec<String> {
        v["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    let before = p.call(1, "tools/list", json!({}));
    assert_eq!(tools(&before), vec!["probe", "mcp_budget_read"]);
    p.call(2, "tools/call", json!({"name": "probe", "arguments": {}}));
    // the notifications may trail the result: wait for them with pings
    for id in 3..50 {
        if p.notes.len() >= 2 {
            break;
        }
        p.call(id, "ping", json!({}));
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let notes = &p.notes;
    let methods: Vec<&str> = notes
        .iter()
        .map(|n| n["method"].as_str().unwrap())
        .collect();
    assert!(methods.contains(&"notifications/message"), "{notes:?}");
    assert!(
        methods.contains(&"notifications/tools/list_changed"),
        "{notes:?}"
    );
    let log = notes
        .iter()
        .find(|n| n["method"] == "notifications/message")
        .unwrap();
    assert_eq!(log["params"]["data"], "disk almost full");
    let after = p.call(60, "tools/list", json!({}));
    assert_eq!(tools(&after), vec!["probe", "probe2", "mcp_budget_read"]);
}

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

#[test]
fn the_policy_hides_tools_and_shortens_descriptions() {
    let home = tempfile::tempdir().unwrap();
    let policy = home.path().join("policy.toml");
    std::fs::write(
        &policy,
        r#"[policy.tools."create_ticket"]
hide = true
[policy.tools."scrape_as_markdown"]
description = "Scrape a page as Markdown."
[policy.tools."search_*"]
max_description_chars = 40
"#,
    )
    .unwrap();
    let bin = bin_path();
    let spill = home.path().join("spill");
    let mut c = RawClient::spawn(
        &bin,
        &[
            "proxy",
            "--policy",
            policy.to_str().unwrap(),
            "--spill-dir",
            spill.to_str().unwrap(),
            "--",
            bin.to_str().unwrap(),
            "demo-server",
        ],
    );
    let tools: Value = serde_json::from_str(&c.request("tools/list", json!({}))).unwrap();
    let tools = tools["tools"].as_array().unwrap();
    let desc = |n: &str| {
        tools
            .iter()
            .find(|t| t["name"] == n)
            .map(|t| t["description"].as_str().unwrap().to_string())
    };
    assert_eq!(desc("create_ticket"), None, "hidden");
    assert_eq!(
        desc("scrape_as_markdown").unwrap(),
        "Scrape a page as Markdown."
    );
    let search = desc("search_code").unwrap();
    assert!(search.chars().count() <= 40, "{search}");
    assert_eq!(tools.len(), 13, "12 shown and mcp_budget_read");
}

#[test]
fn a_clients_cancellation_reaches_the_upstream() {
    let home = tempfile::tempdir().unwrap();
    let marker = home.path().join("cancelled.jsonl");
    let mut p = HostileProxy::start(
        &home.path().join("spill"),
        "hang-listen",
        &[("HOSTILE_MARKER", &marker)],
    );
    p.send(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "probe", "arguments": {}}}));
    std::thread::sleep(std::time::Duration::from_millis(300));
    p.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 7, "reason": "user pressed stop"}}),
    );
    let started = std::time::Instant::now();
    let seen = loop {
        if let Ok(text) = std::fs::read_to_string(&marker) {
            if !text.is_empty() {
                break text;
            }
        }
        assert!(
            started.elapsed().as_secs() < 10,
            "the upstream never heard of the cancellation"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let note: Value = serde_json::from_str(seen.lines().next().unwrap()).unwrap();
    assert!(
        note["requestId"].is_number() || note["requestId"].is_string(),
        "{note}"
    );
    assert_eq!(note["reason"], "cancelled by the client");
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

#[test]
fn progress_reaches_the_client_that_asked_under_its_own_token() {
    let (Some(python), Some(everything)) = (python_sdk(), real_server("mcp-server-everything"))
    else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let spill = home.path().join("spill");
    let (bin, everything) = (bin_path(), everything.to_str().unwrap().to_string());
    let done = "Long running operation completed. Duration: 0.4 seconds, Steps: 4.";

    // stdio: the SDK only calls back for its own token, so every step arriving shows the proxy
    // put the client's token back; logging/setLevel is forwarded too (the SDK fails otherwise)
    let got = sdk(
        &python,
        &[
            "--args",
            LONG_RUN,
            "--log-level",
            "debug",
            "trigger-long-running-operation",
            bin.to_str().unwrap(),
            "proxy",
            "--spill-dir",
            spill.to_str().unwrap(),
            "--",
            &everything,
            "stdio",
        ],
    );
    assert_eq!(got["shown"], done);
    assert_eq!(progress(&got), four_steps());

    // streamable HTTP: the same, and another session on the proxy is not sent the progress
    let (url, _proxy) = proxy_on_http(&spill, &[&everything, "stdio"]);
    let got = sdk(
        &python,
        &[
            "--args",
            LONG_RUN,
            "--watchers",
            "1",
            "--url",
            &url,
            "trigger-long-running-operation",
        ],
    );
    assert_eq!(got["shown"], done);
    assert_eq!(progress(&got), four_steps());
    assert!(
        !methods(&got["watchers"][0]).contains(&"notifications/progress"),
        "{}",
        got["watchers"]
    );
}

#[test]
fn over_http_every_session_gets_the_upstreams_notifications() {
    let Some(python) = python_sdk() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let hostile = crate::support::repo().join("tests/fixtures/hostile_server.py");
    let (url, _proxy) = proxy_on_http(
        &home.path().join("spill"),
        &["python3", hostile.to_str().unwrap(), "notify"],
    );
    let got = sdk(
        &python,
        &["--watchers", "2", "--settle", "1.5", "--url", &url, "probe"],
    );
    assert_eq!(got["is_error"], false);
    let sessions = [&got["notes"], &got["watchers"][0], &got["watchers"][1]];
    for notes in sessions {
        let m = methods(notes);
        assert!(m.contains(&"notifications/message"), "{notes}");
        assert!(m.contains(&"notifications/tools/list_changed"), "{notes}");
        let log = notes
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["method"] == "notifications/message")
            .unwrap();
        assert_eq!(log["params"]["data"], "disk almost full");
    }
}

#[test]
fn the_upstream_can_be_a_url_with_or_without_sse_or_a_named_server() {
    let (Some(python), Some(everything)) = (python_sdk(), real_server("mcp-server-everything"))
    else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let spill = home.path().join("spill");
    let spill = spill.to_str().unwrap();
    let bin = bin_path();
    let bin = bin.to_str().unwrap();
    let serve_everything = |mode: &str| {
        let port = free_port();
        let mut cmd = Command::new(&everything);
        cmd.arg(mode).env("PORT", port.to_string());
        (port, serve_on(cmd, port))
    };

    // streamable HTTP upstream: tools, a call, and progress across both hops
    let (port, _http) = serve_everything("streamableHttp");
    let url = format!("http://127.0.0.1:{port}/mcp");
    let got = sdk(
        &python,
        &[
            "--args",
            LONG_RUN,
            "trigger-long-running-operation",
            bin,
            "proxy",
            "--spill-dir",
            spill,
            "--upstream-url",
            &url,
        ],
    );
    assert_eq!(
        got["tools"].as_array().unwrap().len(),
        18,
        "{}",
        got["tools"]
    );
    assert_eq!(progress(&got), four_steps());

    // legacy HTTP+SSE upstream
    let (port, _sse) = serve_everything("sse");
    let url = format!("http://127.0.0.1:{port}/sse");
    let got = sdk(
        &python,
        &[
            "--args",
            r#"{"a": 2, "b": 3}"#,
            "get-sum",
            bin,
            "proxy",
            "--spill-dir",
            spill,
            "--upstream-url",
            &url,
            "--sse",
        ],
    );
    assert_eq!(got["shown"], "The sum of 2 and 3 is 5.");

    // a server named in a probe file; its name is the one logged
    let probes = home.path().join("probes.toml");
    std::fs::write(
        &probes,
        format!("[servers.everything]\ncommand = {everything:?}\nargs = [\"stdio\"]\n"),
    )
    .unwrap();
    let log = home.path().join("calls.jsonl");
    let got = sdk(
        &python,
        &[
            "--args",
            r#"{"message": "through a named server"}"#,
            "echo",
            bin,
            "proxy",
            "--spill-dir",
            spill,
            "--log",
            log.to_str().unwrap(),
            "--server",
            "everything",
            "--config",
            probes.to_str().unwrap(),
        ],
    );
    assert_eq!(got["shown"], "Echo: through a named server");
    let records = mcp_budget::proxy::read_log(&log).unwrap();
    assert_eq!(records.len(), 1);
    assert_eq!(
        (records[0].server.as_str(), records[0].tool.as_str()),
        ("everything", "echo")
    );
    assert_eq!(records[0].client_name.as_deref(), Some("mcp"));

    // an unknown name is a one-line error naming it
    let out = Command::new(bin)
        .args(["proxy", "--server", "nope", "--config"])
        .arg(&probes)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "a usage error");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nope") && err.lines().count() == 1, "{err}");
}

#[test]
fn the_upstreams_requests_of_its_client_reach_the_client() {
    let (Some(python), Some(everything)) = (python_sdk(), real_server("mcp-server-everything"))
    else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let spill = home.path().join("spill");
    let (bin, everything) = (bin_path(), everything.to_str().unwrap().to_string());
    let run = |offer: bool, tool: &str, args: &str| {
        let mut a = vec!["--args", args];
        if offer {
            a.push("--offer");
        }
        a.extend([
            tool,
            bin.to_str().unwrap(),
            "proxy",
            "--spill-dir",
            spill.to_str().unwrap(),
            "--",
            &everything,
            "stdio",
        ]);
        sdk(&python, &a)
    };

    // sampling: the server's request reaches the SDK client, and its reply the server
    let got = run(
        true,
        "trigger-sampling-request",
        r#"{"prompt": "name a colour", "maxTokens": 20}"#,
    );
    assert_eq!(got["is_error"], false, "{got}");
    assert_shown(&got, "a reply sampled by the test client");
    assert!(
        got["asked"].as_array().unwrap().contains(&json!([
            "sampling",
            "Resource trigger-sampling-request context: name a colour"
        ])),
        "{got}"
    );

    // elicitation: the user's answer reaches the server
    let got = run(true, "trigger-elicitation-request", "{}");
    assert_shown(&got, "- Name: Ada Lovelace");

    // roots: the server asks when the client connects and lists what the client gave
    let got = run(true, "get-roots-list", "{}");
    assert_shown(&got, "file:///tmp/mcp-budget-test-root");

    // a client that does not offer sampling: a clear error in the tool's result, no hang
    let got = run(
        false,
        "trigger-sampling-request",
        r#"{"prompt": "name a colour", "maxTokens": 20}"#,
    );
    assert_eq!(got["is_error"], true, "{got}");
    assert_shown(&got, "of the mcp-budget proxy does not support sampling");
}

#[test]
fn progress_comes_before_the_result_and_only_to_its_caller() {
    // stdio: the upstream sends three progress notes and a log line right before its result;
    // all of them reach the client before the result, under the client's own token
    let home = tempfile::tempdir().unwrap();
    let spill = home.path().join("spill");
    let mut p = HostileProxy::start(&spill, "progress", &[]);
    let answer = p.call(
        1,
        "tools/call",
        json!({"name": "probe", "arguments": {}, "_meta": {"progressToken": "tok-7"}}),
    );
    assert_eq!(answer["result"]["content"][0]["text"], "done");
    let steps: Vec<(Value, f64)> = p
        .notes
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .map(|n| {
            (
                n["params"]["progressToken"].clone(),
                n["params"]["progress"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        steps,
        [1.0, 2.0, 3.0].map(|i| (json!("tok-7"), i)),
        "{:?}",
        p.notes
    );
    assert!(methods(&json!(p.notes)).contains(&"notifications/message"));

    // HTTP: the caller gets its progress, another session only the log line
    let Some(python) = python_sdk() else {
        return;
    };
    let hostile = crate::support::repo().join("tests/fixtures/hostile_server.py");
    let (url, _proxy) = proxy_on_http(&spill, &["python3", hostile.to_str().unwrap(), "progress"]);
    let got = sdk(
        &python,
        &["--watchers", "1", "--settle", "1", "--url", &url, "probe"],
    );
    assert_eq!(
        progress(&got),
        [(1.0, 3.0), (2.0, 3.0), (3.0, 3.0)],
        "{got}"
    );
    let watcher = methods(&got["watchers"][0]);
    assert!(watcher.contains(&"notifications/message"), "{watcher:?}");
    assert!(!watcher.contains(&"notifications/progress"), "{watcher:?}");
}

#[test]
fn over_http_the_upstreams_requests_go_to_the_right_session() {
    let (Some(python), Some(everything)) = (python_sdk(), real_server("mcp-server-everything"))
    else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let everything = everything.to_str().unwrap().to_string();
    let (url, _proxy) = proxy_on_http(&home.path().join("spill"), &[&everything, "stdio"]);
    let sampling = r#"{"prompt": "name a colour", "maxTokens": 20}"#;

    // an idle session beside the caller: sampling reaches the caller
    let got = sdk(
        &python,
        &[
            "--offer",
            "--watchers",
            "1",
            "--args",
            sampling,
            "--url",
            &url,
            "trigger-sampling-request",
        ],
    );
    assert_eq!(got["is_error"], false, "{got}");
    assert_shown(&got, "a reply sampled by the test client");

    // roots: a session without roots called first; the session with roots that connects
    // after it is the one whose roots the upstream sees
    let got = sdk(
        &python,
        &[
            "--offer",
            "--watchers",
            "1",
            "--watcher-first",
            "get-tiny-image",
            "--url",
            &url,
            "get-roots-list",
        ],
    );
    assert_shown(&got, "file:///tmp/mcp-budget-test-root");

    // two sessions with calls running: the proxy cannot tell whose sampling request it is, and
    // says so instead of asking the wrong user
    let got = sdk(
        &python,
        &[
            "--offer",
            "--watchers",
            "1",
            "--watcher-during",
            "trigger-long-running-operation",
            r#"{"duration": 5, "steps": 5}"#,
            "--args",
            sampling,
            "--url",
            &url,
            "trigger-sampling-request",
        ],
    );
    assert_eq!(got["is_error"], true, "{got}");
    assert_shown(&got, "2 clients have calls running");
    assert!(
        !got["asked"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a[0] == "sampling"),
        "{got}"
    );
    assert_eq!(got["watcher_calls"][0]["is_error"], false, "{got}");
}

#[test]
fn over_http_each_session_gets_its_own_log_level_and_subscriptions() {
    let Some(python) = python_sdk() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let marker = home.path().join("asked.jsonl");
    let hostile = crate::support::repo().join("tests/fixtures/hostile_server.py");
    let (url, _proxy) = proxy_on_http_with(
        &home.path().join("spill"),
        &["python3", hostile.to_str().unwrap(), "levels"],
        &[("HOSTILE_MARKER", &marker)],
    );
    // the caller wants warnings and up, and res://a; the other session set neither
    let got = sdk(
        &python,
        &[
            "--log-level",
            "warning",
            "--subscribe",
            "res://a",
            "--watchers",
            "1",
            "--settle",
            "1",
            "--url",
            &url,
            "probe",
        ],
    );
    let logs = |notes: &Value| -> Vec<String> {
        notes
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n["method"] == "notifications/message")
            .map(|n| n["params"]["data"].as_str().unwrap().to_string())
            .collect()
    };
    let updated = |notes: &Value| methods(notes).contains(&"notifications/resources/updated");
    assert_eq!(logs(&got["notes"]), ["a warning line"], "{got}");
    assert!(updated(&got["notes"]), "{got}");
    assert_eq!(
        logs(&got["watchers"][0]),
        ["a info line", "a warning line"],
        "{got}"
    );
    assert!(!updated(&got["watchers"][0]), "{got}");
    // the upstream was asked once for each
    let asked = std::fs::read_to_string(&marker).unwrap();
    let asked: Vec<Value> = asked
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        asked,
        [
            json!(["logging/setLevel", {"level": "warning"}]),
            json!(["resources/subscribe", {"uri": "res://a"}])
        ]
    );
}

#[test]
fn a_restarted_upstream_is_subscribed_and_levelled_again() {
    let home = tempfile::tempdir().unwrap();
    let marker = home.path().join("asked.jsonl");
    let mut p = HostileProxy::start(
        &home.path().join("spill"),
        "levels",
        &[("HOSTILE_MARKER", &marker)],
    );
    p.call(1, "logging/setLevel", json!({"level": "warning"}));
    p.call(2, "resources/subscribe", json!({"uri": "res://a"}));
    let asked = |n: usize| -> Vec<Value> {
        let text = std::fs::read_to_string(&marker).unwrap_or_default();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), n, "{lines:?}");
        lines
    };
    asked(2);
    let crashed = p.call(3, "tools/call", json!({"name": "crash", "arguments": {}}));
    assert!(crashed.get("error").is_some(), "{crashed}");
    // once the server is back, it has been told again what the client wants
    let mut back = false;
    for id in 4..40 {
        let msg = p.call(id, "tools/call", json!({"name": "probe", "arguments": {}}));
        if msg.get("result").is_some() {
            back = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
    assert!(back, "the restarted upstream answers within 10 s");
    let again = asked(4);
    assert_eq!(
        again[2..],
        [
            json!(["resources/subscribe", {"uri": "res://a"}]),
            json!(["logging/setLevel", {"level": "warning"}])
        ]
    );
    // and the client's level still filters: the warning reached it, the info line did not
    let logs: Vec<&str> = p
        .notes
        .iter()
        .filter(|n| n["method"] == "notifications/message")
        .filter_map(|n| n["params"]["data"].as_str())
        .collect();
    assert!(logs.contains(&"a warning line"), "{:?}", p.notes);
    assert!(!logs.contains(&"a info line"), "{:?}", p.notes);
}

/// Issue 13: the proxy counts a tool's schema as `audit` does (one model view): a tool without
/// a description costs the same in the proxy's start-up line as in the audit, with no
/// `"description": null` counted.
#[test]
fn the_start_up_figure_is_audits_for_a_tool_without_a_description() {
    let home = tempfile::tempdir().unwrap();
    let script = crate::support::repo()
        .join("tests/fixtures/hostile_lists.py")
        .display()
        .to_string();
    let toml = format!("[servers.bare]\ncommand = \"python3\"\nargs = [{script:?}, \"bare\"]\n");
    let (report, _) = crate::support::audit_probe(home.path(), &toml, &[], &[], 0);
    let audited = report["servers"][0]["tools_list"]["model_tokens"]
        .as_u64()
        .unwrap();
    let mut child = Command::new(bin_path())
        .args(["proxy", "--spill-dir"])
        .arg(home.path().join("spill"))
        .args(["--", "python3", &script, "bare"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let line = stderr
        .lines()
        .map_while(Result::ok)
        .find(|l| l.contains("tokens per turn"));
    child.kill().unwrap();
    child.wait().unwrap();
    let line = line.expect("the proxy's start-up line");
    // `... schema {upstream} -> {shown} tokens per turn ...`
    let upstream: u64 = line
        .split("schema ")
        .nth(1)
        .unwrap()
        .split(" ->")
        .next()
        .unwrap()
        .replace(',', "")
        .parse()
        .unwrap();
    assert_eq!(upstream, audited, "{line}");
}
