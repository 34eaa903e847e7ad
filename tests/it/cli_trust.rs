//! The command line keeps its word: a failed run leaves the last report alone, the gate refuses
//! a report that measured nothing, every failure exits 2, names from servers cannot drive the
//! terminal or break a table, client files are named by where they are, a BOM is accepted, a
//! damaged call log is read around its bad lines, and a closed stdout is a normal end.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::{bin_path, mcp_budget, read_report, repo};

/// A tool name with a clear-screen sequence, an OSC 52 clipboard write, a `|` and a newline.
const EVIL_TOOL: &str = "evil\u{1b}[2J\u{1b}]52;c;aGVsbG8=\u{7}|x\ny";

/// A stdio MCP server (Python) with one tool named [`EVIL_TOOL`].
const EVIL_SERVER: &str = r#"
import json, sys
NAME = "evil\x1b[2J\x1b]52;c;aGVsbG8=\x07|x\ny"
for raw in sys.stdin:
    msg = json.loads(raw)
    mid, method = msg.get("id"), msg.get("method")
    if mid is None:
        continue
    if method == "initialize":
        res = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
               "serverInfo": {"name": "esc\x1b[31m", "version": "1"}}
    elif method == "tools/list":
        res = {"tools": [{"name": NAME, "description": "says \x1b[31mred\x07",
                          "inputSchema": {"type": "object"}}]}
    elif method == "tools/call":
        res = {"content": [{"type": "text", "text": "ok"}]}
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": mid,
                          "error": {"code": -32601, "message": "no"}}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": mid, "result": res}), flush=True)
"#;

fn stdout_of(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stdout).to_string()
}

fn stderr_of(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stderr).to_string()
}

fn assert_no_controls(what: &str, text: &str) {
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}') && !text.contains('\r'),
        "{what} carries raw control characters: {text:?}"
    );
}

/// Every file in `dir` (one level) with its bytes.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p.file_name().unwrap().to_string_lossy().to_string(), bytes)
        })
        .collect();
    files.sort();
    files
}

#[test]
fn a_run_that_measures_nothing_leaves_the_last_report_untouched() {
    let home = tempfile::tempdir().unwrap();
    let out = home.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let good = std::fs::read(repo().join("reports/example/audit.json")).unwrap();
    std::fs::write(out.join("audit.json"), &good).unwrap();
    std::fs::write(out.join("tools.csv"), "server,tool\ndemo,get_time\n").unwrap();
    std::fs::write(out.join("report.md"), "# the last good report\n").unwrap();
    let before = snapshot(&out);
    let cases = [
        ("malformed.toml", "[servers.demo\nbuiltin = ", "failed to parse"),
        ("empty.toml", "[defaults]\nbudget = 8000\n", "no server to audit"),
        (
            "typo.toml",
            "[servers.demo]\nbuiltin = \"demo\"\n[[servers.demo.probes]]\ntool = \"get_time\"\ntypo_key = 1\n",
            "typo_key",
        ),
    ];
    for (name, text, says) in cases {
        let probe = home.path().join(name);
        std::fs::write(&probe, text).unwrap();
        let a = mcp_budget(home.path(), home.path())
            .arg("audit")
            .arg(&probe)
            .arg("--out")
            .arg(&out)
            .assert()
            .code(2);
        let stderr = stderr_of(&a);
        assert!(stderr.contains(says), "{name}: {stderr}");
        assert_eq!(
            stderr.matches(says).count(),
            1,
            "{name}: the error is said once: {stderr}"
        );
        assert_eq!(stdout_of(&a), "", "{name}: a config error prints no table");
        assert!(
            snapshot(&out) == before,
            "{name}: the last good report was changed"
        );
    }
}

#[test]
fn gate_refuses_a_report_that_measured_nothing_or_lost_a_server() {
    let home = tempfile::tempdir().unwrap();
    let example = repo().join("reports/example/audit.json");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&example).unwrap()).unwrap();
    let write = |name: &str, v: &serde_json::Value| {
        let p = home.path().join(name);
        std::fs::write(&p, serde_json::to_string(v).unwrap()).unwrap();
        p
    };
    let mut empty = report.clone();
    empty["servers"] = serde_json::json!([]);
    let empty = write("empty.json", &empty);
    let mut failed = report.clone();
    failed["servers"][0]["status"] = "error".into();
    failed["servers"][0]["error"] = "timed out after 60s".into();
    let failed = write("failed.json", &failed);
    let mut two = report.clone();
    let mut other = report["servers"][0].clone();
    other["name"] = "other".into();
    two["servers"].as_array_mut().unwrap().push(other);
    let two = write("two.json", &two);

    let gate = |current: &Path, baseline: &Path, code: i32| {
        let a = mcp_budget(home.path(), home.path())
            .arg("gate")
            .arg(current)
            .arg("--baseline")
            .arg(baseline)
            .assert()
            .code(code);
        stderr_of(&a)
    };
    let said = gate(&empty, &example, 2);
    assert!(said.contains("empty.json measured no server"), "{said}");
    let said = gate(&failed, &example, 2);
    assert!(said.contains("failed.json measured no server"), "{said}");
    let said = gate(&example, &two, 2);
    assert!(
        said.contains("no measurement of server `other`") && said.contains("two.json"),
        "{said}"
    );
    gate(&example, &example, 0);
    gate(&two, &example, 0);
}

#[test]
fn a_probe_that_could_not_be_made_exits_2_and_the_report_is_still_written() {
    let home = tempfile::tempdir().unwrap();
    let probe = home.path().join("probe.toml");
    std::fs::write(
        &probe,
        "[servers.demo]\nbuiltin = \"demo\"\n[[servers.demo.probes]]\ntool = \"no_such_tool\"\n[[servers.demo.probes]]\ntool = \"get_time\"\n",
    )
    .unwrap();
    let out = home.path().join("out");
    let a = mcp_budget(home.path(), home.path())
        .arg("audit")
        .arg(&probe)
        .arg("--out")
        .arg(&out)
        .args(["--no-charts"])
        .assert()
        .code(2);
    let stderr = stderr_of(&a);
    assert!(
        stderr.contains("server `demo`: probe of `no_such_tool` failed"),
        "{stderr}"
    );
    let report = read_report(&out);
    assert_eq!(report["servers"][0]["probes"][0]["status"], "error");
    assert_eq!(report["servers"][0]["probes"][1]["status"], "ok");
}

/// An era that does not exist is refused before anything runs, naming the ones that do (the
/// same parser reads `audit --protocol`, `proxy --upstream-protocol` and their variables).
#[test]
fn an_unknown_protocol_era_is_a_usage_error() {
    let home = tempfile::tempdir().unwrap();
    for args in [
        vec!["audit", "--no-write", "--protocol", "2027"],
        vec!["proxy", "--upstream-protocol", "modern-ish", "--", "true"],
    ] {
        let a = mcp_budget(home.path(), home.path())
            .args(&args)
            .assert()
            .code(2);
        let err = stderr_of(&a);
        assert!(
            err.contains("legacy, 2026-07-28, auto or handshake-first"),
            "{err}"
        );
        assert_eq!(stdout_of(&a), "");
    }
    let a = mcp_budget(home.path(), home.path())
        .args(["audit", "--no-write"])
        .env("MCP_BUDGET_PROTOCOL", "sideways")
        .assert()
        .code(2);
    assert!(stderr_of(&a).contains("unknown protocol `sideways`"));
}

#[test]
fn a_tokenizer_list_of_nothing_is_a_usage_error() {
    let home = tempfile::tempdir().unwrap();
    let demo = repo().join("probes/demo.toml");
    let a = mcp_budget(home.path(), home.path())
        .arg("audit")
        .arg(&demo)
        .args(["--tokenizer", ",,", "--no-write"])
        .assert()
        .code(2);
    assert!(
        stderr_of(&a).contains("unknown tokenizer `,,`"),
        "{}",
        stderr_of(&a)
    );
    assert_eq!(stdout_of(&a), "");
    let a = mcp_budget(home.path(), home.path())
        .args(["count", "--tokenizer", " , "])
        .write_stdin("hello")
        .assert()
        .code(2);
    assert!(
        stderr_of(&a).contains("unknown tokenizer"),
        "{}",
        stderr_of(&a)
    );
}

#[test]
fn escape_sequences_in_names_are_shown_not_run() {
    let home = tempfile::tempdir().unwrap();
    let script = home.path().join("evil.py");
    std::fs::write(&script, EVIL_SERVER).unwrap();
    let probe = home.path().join("probe.toml");
    std::fs::write(
        &probe,
        format!(
            "[servers.\"srv\\u001b]0;title\\u0007\"]\ncommand = \"python3\"\nargs = [{:?}]\n[[servers.\"srv\\u001b]0;title\\u0007\".probes]]\ntool = {}\n",
            script.display().to_string(),
            toml::Value::String(EVIL_TOOL.into())
        ),
    )
    .unwrap();
    let out = home.path().join("out");
    let a = mcp_budget(home.path(), home.path())
        .arg("audit")
        .arg(&probe)
        .arg("--out")
        .arg(&out)
        .args(["--no-charts", "--format", "table"])
        .assert()
        .code(0);
    let table = stdout_of(&a);
    assert_no_controls("the audit table", &table);
    assert_no_controls("the audit's stderr", &stderr_of(&a));
    assert!(
        table.contains("evil\\x1b[2J\\x1b]52;c;aGVsbG8=\\x07|x\\ny"),
        "{table}"
    );
    assert!(table.contains("srv\\x1b]0;title\\x07"), "{table}");

    // Markdown: the row keeps its columns; CSV: the name comes back from a CSV reader, escaped
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert_no_controls("report.md", &md);
    let rows: Vec<&str> = md.lines().filter(|l| l.contains("evil")).collect();
    assert!(!rows.is_empty(), "{md}");
    for row in rows.iter().filter(|l| l.starts_with('|')) {
        assert!(row.ends_with('|') && row.contains("\\|x y"), "{row}");
    }
    let mut csv = csv::Reader::from_path(out.join("tools.csv")).unwrap();
    let headers = csv.headers().unwrap().clone();
    let tool_col = headers.iter().position(|h| h == "tool").unwrap();
    let records: Vec<csv::StringRecord> = csv.records().map(Result::unwrap).collect();
    assert_eq!(records.len(), 1);
    // control characters escaped as in the terminal; the line break kept (the cell is quoted)
    assert_eq!(
        &records[0][tool_col],
        "evil\\x1b[2J\\x1b]52;c;aGVsbG8=\\x07|x\ny"
    );

    for format in ["markdown", "csv"] {
        let a = mcp_budget(home.path(), home.path())
            .arg("audit")
            .arg(&probe)
            .args(["--no-write", "--format", format])
            .assert()
            .code(0);
        assert_no_controls(format, &stdout_of(&a));
    }

    // `stats` on a call log of that tool, `servers` on a client config naming such a server
    let record = serde_json::json!({"ts": "2026-01-01T00:00:00Z", "server": "srv\u{1b}[31m",
        "tool": EVIL_TOOL, "client_name": null, "client_version": null, "transport": "stdio",
        "raw_bytes": 10, "raw_tokens": 5, "returned_tokens": 5, "strategy": "pass_through",
        "spill_id": null, "upstream_ms": 1.0, "engine_ms": 0.1, "is_error": false});
    let log = home.path().join("calls.jsonl");
    std::fs::write(&log, format!("{record}\n")).unwrap();
    let a = mcp_budget(home.path(), home.path())
        .arg("stats")
        .arg(&log)
        .assert()
        .code(0);
    assert_no_controls("the stats table", &stdout_of(&a));
    assert!(stdout_of(&a).contains("evil\\x1b[2J"), "{}", stdout_of(&a));
    let config = home.path().join("config.json");
    std::fs::write(
        &config,
        r#"{"mcpServers": {"a\u001b[2Jb": {"command": "srv\u001b]52;c;eA==\u0007"}}}"#,
    )
    .unwrap();
    let a = mcp_budget(home.path(), home.path())
        .args(["servers", "--config"])
        .arg(&config)
        .assert()
        .code(0);
    assert_no_controls("the servers table", &stdout_of(&a));
    assert!(stdout_of(&a).contains("a\\x1b[2Jb"), "{}", stdout_of(&a));
}

/// `servers --config FILE --format json`: each server's (name, client).
fn clients_of(home: &Path, file: &Path) -> Vec<(String, String)> {
    let a = mcp_budget(home, home)
        .args(["servers", "--format", "json", "--config"])
        .arg(file)
        .assert()
        .code(0);
    let v: serde_json::Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    v["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["client"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_client_is_named_only_when_the_file_is_at_its_known_place() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let text = r#"{"mcpServers": {"fs": {"command": "mcp-fs"}}}"#;
    let at = |rel: &str| {
        let p = h.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    };
    let cases = [
        ("mcp_config.json", "generic"),
        ("generic.json", "generic"),
        ("elsewhere/claude_desktop_config.json", "generic"),
        (".codeium/windsurf/mcp_config.json", "windsurf"),
        (
            ".config/Claude/claude_desktop_config.json",
            "claude-desktop",
        ),
        ("project/.cursor/mcp.json", "cursor"),
        ("project/.mcp.json", "claude-code"),
    ];
    for (rel, client) in cases {
        assert_eq!(
            clients_of(h, &at(rel)),
            [("fs".to_string(), client.to_string())],
            "{rel}"
        );
    }
}

#[test]
fn configs_saved_with_a_byte_order_mark_are_read() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let json = h.join(".cursor/mcp.json");
    std::fs::create_dir_all(json.parent().unwrap()).unwrap();
    std::fs::write(
        &json,
        "\u{feff}{\"mcpServers\": {\"fs\": {\"command\": \"mcp-fs\"}}}",
    )
    .unwrap();
    assert_eq!(clients_of(h, &json), [("fs".into(), "cursor".into())]);
    // found by discovery too
    let a = mcp_budget(h, h)
        .args(["servers", "--format", "json"])
        .assert()
        .code(0);
    assert!(stdout_of(&a).contains("\"fs\""), "{}", stdout_of(&a));
    let probe = h.join("probe.toml");
    std::fs::write(&probe, "\u{feff}[servers.demo]\nbuiltin = \"demo\"\n").unwrap();
    assert_eq!(clients_of(h, &probe).len(), 1);
}

#[test]
fn stats_skips_bad_lines_and_says_which() {
    let home = tempfile::tempdir().unwrap();
    let record = |tool: &str, raw: usize| {
        serde_json::json!({"ts": "2026-01-01T00:00:00Z", "server": "s", "tool": tool,
            "client_name": null, "client_version": null, "transport": "stdio",
            "raw_bytes": raw * 4, "raw_tokens": raw, "returned_tokens": raw,
            "strategy": "pass_through", "spill_id": null, "upstream_ms": 1.0,
            "engine_ms": 0.1, "is_error": false})
        .to_string()
    };
    let good = record("search", 120);
    let log = home.path().join("calls.jsonl");
    // a line cut short by a crash, a line of something else, a cut multi-byte character
    let mut bytes = format!(
        "{good}\n{}\nnot json\n{}\n",
        &good[..good.len() / 2],
        record("search", 80)
    )
    .into_bytes();
    bytes.extend_from_slice(b"{\"ts\": \"\xe2\x82");
    std::fs::write(&log, &bytes).unwrap();
    let a = mcp_budget(home.path(), home.path())
        .args(["stats", "--format", "json"])
        .arg(&log)
        .assert()
        .code(0);
    let rows: serde_json::Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    assert_eq!(rows[0]["tool"], "search");
    assert_eq!(rows[0]["calls"], 2);
    assert_eq!(rows[0]["raw_tokens_max"], 120);
    let stderr = stderr_of(&a);
    assert!(
        stderr.contains("skipped 3 lines that are not call records (lines 2, 3, 5)"),
        "{stderr}"
    );
    std::fs::write(&log, "{\"ts\": \n").unwrap();
    let a = mcp_budget(home.path(), home.path())
        .arg("stats")
        .arg(&log)
        .assert()
        .code(2);
    assert!(
        stderr_of(&a).contains("has no call record"),
        "{}",
        stderr_of(&a)
    );
}

/// Run the binary with `args`, its stdout a pipe whose reading end is closed at once; returns
/// the exit code and stderr.
fn into_a_closed_pipe(cwd: &Path, args: &[&std::ffi::OsStr]) -> (Option<i32>, String) {
    let mut child = Command::new(bin_path())
        .args(args)
        .env("HOME", cwd)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (child.wait().unwrap().code(), stderr)
}

#[test]
fn a_closed_stdout_is_a_normal_end() {
    let home = tempfile::tempdir().unwrap();
    let big = home.path().join("big.txt");
    std::fs::write(&big, "lorem ipsum dolor sit amet\n".repeat(2_000)).unwrap();
    let os = |s: &str| std::ffi::OsString::from(s);
    let mut count = vec![os("count")];
    count.extend(std::iter::repeat_n(big.clone().into_os_string(), 20));
    let config = home.path().join("config.json");
    let servers: serde_json::Map<String, serde_json::Value> = (0..2000)
        .map(|i| (format!("server-{i}"), serde_json::json!({"command": "x"})))
        .collect();
    std::fs::write(
        &config,
        serde_json::json!({ "mcpServers": servers }).to_string(),
    )
    .unwrap();
    let demo = repo().join("probes/demo.toml");
    let runs: Vec<Vec<std::ffi::OsString>> = vec![
        count,
        vec![os("servers"), os("--config"), config.into_os_string()],
        vec![
            os("audit"),
            demo.into_os_string(),
            os("--no-write"),
            os("--format"),
            os("table"),
        ],
    ];
    for args in runs {
        let refs: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        let (code, stderr) = into_a_closed_pipe(home.path(), &refs);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(!stderr.contains("Broken pipe"), "{args:?}: {stderr}");
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
    }
}

#[test]
fn servers_with_nothing_found_says_where_it_looked_and_what_to_run() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let a = mcp_budget(h, h).args(["servers"]).assert().code(0);
    let out = a.get_output();
    // no empty table: the places looked in, each with its client, and the next step
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no MCP client config found; looked in"),
        "{err}"
    );
    assert!(err.contains("~/.claude.json (claude-code)"), "{err}");
    assert!(err.contains("~/.codex/config.toml (codex)"), "{err}");
    assert!(
        err.contains("`mcp-budget audit` audits the embedded demo server"),
        "{err}"
    );
    // JSON still answers, empty
    let a = mcp_budget(h, h)
        .args(["servers", "--format", "json"])
        .assert()
        .code(0);
    assert!(stdout_of(&a).contains('['), "{}", stdout_of(&a));
}
