//! The engine through the proxy: a huge result arrives within the budget and reads back whole
//! through `mcp_budget_read`, denied tools are refused, every call is logged once, and 100
//! concurrent calls each get their own result.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use mcp_budget::ground::tokens::Tokenizer;
use mcp_budget::wire::demo::DemoServer;
use serde_json::{json, Value};

use crate::support::{bin_path, RawClient};

use super::*;

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
    // the demo lists 5 tools a page; the proxy lists them all on the first, so a client that
    // reads no further (Gemini CLI, Cline, Continue: `client-first-page-only`) sees every tool
    assert!(tools.get("nextCursor").is_none(), "{tools}");
    // every other definition is the server's own, field for field and in its key order
    let own: Vec<Value> = mcp_budget::wire::demo::tool_definitions()
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
    // read as a resource, it is paged as mcp_budget_read pages it (issue 26, case 9)
    let read: Value =
        serde_json::from_str(&c.request("resources/read", json!({"uri": uri}))).unwrap();
    let page = read["contents"][0]["text"].as_str().unwrap();
    assert!(Tokenizer::Cl100k.count(page) <= 4000);
    assert!(original.starts_with(page.rsplit_once("[mcp-budget: ").unwrap().0));

    // one log line per upstream call (reads are not upstream calls), secrets-free by design
    drop(c);
    let records = mcp_budget::ground::calllog::read_log(&log).unwrap();
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
            assert!(svg.contains(&mcp_budget::ground::units::thousands(r.raw_tokens)));
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
    let records = mcp_budget::ground::calllog::read_log(&log).unwrap();
    assert_eq!(records.len(), 100, "each call logged once, whole");
    assert!(records
        .iter()
        .all(|r| r.tool == "list_tickets" && r.client_name.as_deref() == Some("burst")));
}
