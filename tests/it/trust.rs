//! Trust (issue 12): nothing lost. A spill store that cannot be written is an error at start,
//! a spill write that fails later is loud (stderr, the call log, the exit status, the result's
//! own note), and concurrent calls that spill each get their own original back, byte for byte.

use mcp_budget::wire::demo::DemoServer;
use serde_json::{json, Value};

use crate::support::{bin_path, mcp_budget, Pipelined, RawClient};

fn big_markdown(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("page.md");
    let text: String = (0..4000)
        .map(|i| format!("line {i}: some words of a long scraped page\n"))
        .collect();
    std::fs::write(&path, text).unwrap();
    path
}

/// Item 4: `replay` into a spill folder that is a file stops before cutting anything.
#[test]
fn replay_into_an_unusable_spill_folder_fails_at_start() {
    let home = tempfile::tempdir().unwrap();
    let page = big_markdown(home.path());
    let not_a_dir = home.path().join("spill");
    std::fs::write(&not_a_dir, b"a file").unwrap();
    let out = mcp_budget(home.path(), home.path())
        .args(["replay", page.to_str().unwrap(), "--budget", "500"])
        .args(["--spill-dir", not_a_dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "the spill folder {} cannot be written",
            not_a_dir.display()
        )),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(
        out.stdout.is_empty(),
        "no table for a run that did not start"
    );
}

/// Item 4: a spill write that fails after start is loud: stderr, exit 2, the table and JSON
/// say the original was not saved, and the result's note says so too.
#[test]
fn replay_says_when_a_spill_could_not_be_saved() {
    let home = tempfile::tempdir().unwrap();
    let page = big_markdown(home.path());
    let spill = home.path().join("spill");
    std::fs::create_dir_all(&spill).unwrap();
    // where this payload's spills go is taken by a file: the write fails, the store is fine
    std::fs::write(spill.join("replay"), b"in the way").unwrap();
    let out = mcp_budget(home.path(), home.path())
        .args(["replay", page.to_str().unwrap(), "--budget", "500"])
        .args(["--spill-dir", spill.to_str().unwrap(), "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("page.md: the full original could not be saved"),
        "{err}"
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = &v["results"][0];
    assert_eq!(row["spill_path"], Value::Null);
    assert!(row["spill_error"].as_str().unwrap().contains("replay"));
    let note = row["note"].as_str().unwrap();
    assert!(
        note.contains("The full original could NOT be saved"),
        "{note}"
    );
}

/// Item 4: the proxy refuses to start with a spill folder it cannot write.
#[test]
fn the_proxy_refuses_an_unusable_spill_folder_at_start() {
    let home = tempfile::tempdir().unwrap();
    let not_a_dir = home.path().join("spill");
    std::fs::write(&not_a_dir, b"a file").unwrap();
    let bin = bin_path();
    let out = mcp_budget(home.path(), home.path())
        .args(["proxy", "--spill-dir", not_a_dir.to_str().unwrap(), "--"])
        .args([bin.to_str().unwrap(), "demo-server"])
        .write_stdin("")
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot be written"), "{err}");
}

/// Item 4: through the proxy, a spill that cannot be written reaches the client's note, the
/// call log (`spill_error`) and stderr.
#[test]
fn the_proxy_reports_a_failed_spill_to_the_client_the_log_and_stderr() {
    let home = tempfile::tempdir().unwrap();
    let (spill, log) = (home.path().join("spill"), home.path().join("calls.jsonl"));
    std::fs::create_dir_all(&spill).unwrap();
    std::fs::write(spill.join("demo"), b"in the way").unwrap();
    let bin = bin_path();
    let (spill_s, log_s, bin_s) = (
        spill.to_str().unwrap(),
        log.to_str().unwrap(),
        bin.to_str().unwrap(),
    );
    let mut proxy = Pipelined::start(
        &bin,
        &[
            "proxy",
            "--budget",
            "2000",
            "--name",
            "demo",
            "--spill-dir",
            spill_s,
            "--log",
            log_s,
            "--",
            bin_s,
            "demo-server",
        ],
        "t",
    );
    proxy.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "scrape_as_markdown", "arguments": {}}}),
    );
    let result = loop {
        let v = proxy.next();
        if v["id"] == 1 {
            break v["result"].clone();
        }
    };
    let note = result["content"].as_array().unwrap().last().unwrap()["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        note.contains("The full original could NOT be saved"),
        "{note}"
    );
    let err = proxy.finish();
    assert!(
        err.contains("warning: `demo`/scrape_as_markdown: the full original")
            && err.contains("could not be saved"),
        "{err}"
    );
    let records = mcp_budget::ground::calllog::read_log(&log).unwrap();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].spill_id, None);
    assert!(records[0].spill_error.as_deref().unwrap().contains("demo"));
}

/// Item 32: 40 concurrent calls that spill, identical and different: each call's handle leads
/// to its own original, byte for byte (the store names files by content, writes each through
/// its own temporary file, and identical content is one file).
#[test]
fn concurrent_spilling_calls_each_get_their_own_original_back() {
    let home = tempfile::tempdir().unwrap();
    let spill = home.path().join("spill");
    let bin = bin_path();
    let (spill_s, bin_s) = (spill.to_str().unwrap(), bin.to_str().unwrap());
    let mut proxy = Pipelined::start(
        &bin,
        &[
            "proxy",
            "--budget",
            "300",
            "--name",
            "demo",
            "--spill-dir",
            spill_s,
            "--",
            bin_s,
            "demo-server",
        ],
        "burst",
    );
    let per_page = |id: u64| 20 + (id % 5) * 20;
    for id in 0..40u64 {
        proxy.send(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "search_code", "arguments": {"q": "budget", "per_page": per_page(id)}}}),
        );
    }
    let demo = DemoServer::new("demo");
    let mut handles: std::collections::BTreeMap<u64, String> = Default::default();
    while handles.len() < 40 {
        let msg = proxy.next();
        let Some(id) = msg["id"].as_u64() else {
            continue;
        };
        let content = msg["result"]["content"].as_array().unwrap();
        let note = content.last().unwrap()["text"].as_str().unwrap();
        let path = note
            .split("Full original: ")
            .nth(1)
            .and_then(|r| r.split(" (mcp-budget://spill/").next())
            .unwrap_or_else(|| panic!("call {id}: no spill in {note}"));
        let handle = note
            .split("mcp-budget://spill/")
            .nth(1)
            .and_then(|r| r.split(')').next())
            .unwrap()
            .to_string();
        let mut args = serde_json::Map::new();
        args.insert("q".into(), json!("budget"));
        args.insert("per_page".into(), json!(per_page(id)));
        let want = demo.call("search_code", &args).unwrap();
        let want = want["content"][0]["text"].as_str().unwrap();
        let got = std::fs::read(path).unwrap();
        assert!(
            got == want.as_bytes(),
            "call {id}: the spill is not its original"
        );
        assert!(
            handles.insert(id, handle).is_none(),
            "call {id} answered twice"
        );
    }
    // identical calls share one file, different ones never do
    for (a, ha) in &handles {
        for (b, hb) in &handles {
            assert_eq!(per_page(*a) == per_page(*b), ha == hb, "calls {a} and {b}");
        }
    }
    let distinct: std::collections::BTreeMap<&String, u64> =
        handles.iter().map(|(id, h)| (h, *id)).collect();
    assert_eq!(distinct.len(), 5);
    // and each handle, read back through the proxy, is its own original, byte for byte
    // (as a resource, page by page: the proxy pages resources/read of a spill, issue 26)
    let mut read_id = 1000;
    for (handle, id) in &distinct {
        let (mut got, mut start, mut start_char) = (String::new(), 1, 0);
        loop {
            read_id += 1;
            proxy.send(
                json!({"jsonrpc": "2.0", "id": read_id, "method": "resources/read",
                "params": {"uri": format!("mcp-budget://spill/{handle}?start_line={start}&start_char={start_char}")}}),
            );
            let page = loop {
                let msg = proxy.next();
                if msg["id"] == read_id {
                    break msg;
                }
            };
            let text = page["result"]["contents"][0]["text"].as_str().unwrap();
            let (body, footer) = text.rsplit_once("[mcp-budget: ").unwrap();
            let num = |key: &str| -> Option<usize> {
                let digits: String = footer
                    .split(key)
                    .nth(1)?
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                digits.parse().ok()
            };
            let at = num("start_char=");
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
        let mut args = serde_json::Map::new();
        args.insert("q".into(), json!("budget"));
        args.insert("per_page".into(), json!(per_page(*id)));
        let want = demo.call("search_code", &args).unwrap();
        let want = want["content"][0]["text"].as_str().unwrap();
        assert!(
            got.lines().eq(want.lines()),
            "{handle} is not the original of call {id}"
        );
    }
    proxy.finish();
}

/// Item 10: a link planted in the spill store is neither read (`mcp_budget_read`,
/// `resources/read`) nor listed (`resources/list`) by the proxy.
#[cfg(unix)]
#[test]
fn the_proxy_serves_no_link_planted_in_the_store() {
    let home = tempfile::tempdir().unwrap();
    let spill = home.path().join("spill");
    let secret = home.path().join("passwd");
    std::fs::write(&secret, "root:x:0:0:secret\n").unwrap();
    let outside = home.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("t-0123456789abcdef.md"), "outside the store\n").unwrap();
    std::fs::create_dir_all(spill.join("demo")).unwrap();
    std::os::unix::fs::symlink(&secret, spill.join("demo/t-00000000000000aa.md")).unwrap();
    std::os::unix::fs::symlink(&outside, spill.join("linked")).unwrap();
    let bin = bin_path();
    let mut c = RawClient::spawn(
        &bin,
        &[
            "proxy",
            "--spill-dir",
            spill.to_str().unwrap(),
            "--name",
            "demo",
            "--",
            bin.to_str().unwrap(),
            "demo-server",
        ],
    );
    for handle in ["demo/t-00000000000000aa.md", "linked/t-0123456789abcdef.md"] {
        let page: Value = serde_json::from_str(&c.request(
            "tools/call",
            json!({"name": "mcp_budget_read", "arguments": {"handle": handle}}),
        ))
        .unwrap();
        assert_eq!(page["isError"], true, "{handle}: {page}");
        let text = page["content"][0]["text"].as_str().unwrap();
        assert!(
            !text.contains("secret") && !text.contains("outside the store"),
            "{text}"
        );
    }
    let listed = c.request("resources/list", json!({}));
    assert!(
        !listed.contains("t-00000000000000aa") && !listed.contains("linked"),
        "{listed}"
    );
    let read = c.request_raw(
        "resources/read",
        json!({"uri": "mcp-budget://spill/demo/t-00000000000000aa.md"}),
    );
    assert!(
        read.contains("\"error\"") && !read.contains("secret"),
        "{read}"
    );
}

/// Item 4: an audit whose probe spill cannot be written exits 2, says so on stderr and keeps
/// the reason in the report; the other probes are measured as usual.
#[test]
fn an_audit_with_a_failed_spill_exits_2_and_says_why() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("spill")).unwrap();
    std::fs::write(home.path().join("spill/demo"), b"in the way").unwrap();
    let toml = r#"
[servers.demo]
builtin = "demo"

[[servers.demo.probes]]
tool = "scrape_as_markdown"

[[servers.demo.probes]]
tool = "list_tickets"
arguments = { limit = 3 }
"#;
    let (report, err) = crate::support::audit_probe(home.path(), toml, &[], &[], 2);
    assert!(
        err.contains("probe `scrape_as_markdown`: the full original could not be saved"),
        "{err}"
    );
    let probes = report["servers"][0]["probes"].as_array().unwrap();
    let scrape = probes
        .iter()
        .find(|p| p["tool"] == "scrape_as_markdown")
        .unwrap();
    assert!(scrape["budgeted"]["spill_error"]
        .as_str()
        .unwrap()
        .contains("demo"));
    assert_eq!(scrape["budgeted"]["spill_path"], Value::Null);
    let tickets = probes.iter().find(|p| p["tool"] == "list_tickets").unwrap();
    assert_eq!(tickets["budgeted"]["strategy"], "pass_through");
}
