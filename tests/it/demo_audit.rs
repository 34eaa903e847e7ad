//! The README's main command: `audit probes/demo.toml` against the embedded demo server, with
//! its numbers checked against an independent client and count.

use mcp_budget::ground::tokens::Tokenizer;

use serde_json::Value;

use crate::support::{bin_path, mcp_budget, read_report, repo, RawClient};

/// `audit probes/demo.toml --out HOME/out` with `args`, exit 0: its stdout and the report folder.
fn audit_demo(home: &std::path::Path, args: &[&str]) -> (String, std::path::PathBuf) {
    let out = home.join("out");
    let probe = repo().join("probes/demo.toml");
    let assert = mcp_budget(home, home)
        .arg("audit")
        .arg(probe)
        .arg("--out")
        .arg(&out)
        .args(args)
        .assert()
        .code(0);
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    (stdout, out)
}

#[test]
fn demo_audit_writes_a_full_report_and_exits_zero() {
    let home = tempfile::tempdir().unwrap();
    let (stdout, out) = audit_demo(home.path(), &["--width", "160"]);
    assert!(
        stdout.contains("scrape_as_markdown") && stdout.contains("Schema tax per server"),
        "{stdout}"
    );

    let report = read_report(&out);
    assert_eq!(report["schema_version"], 1);
    let demo = &report["servers"][0];
    assert_eq!(demo["status"], "ok");
    assert_eq!(demo["tools_list"]["pages"], 3);
    assert_eq!(demo["tools_list"]["tool_count"], 13);
    assert!(demo["instructions_tokens"].as_u64().unwrap() > 10);
    assert_eq!(demo["prompts"]["count"], 2);
    assert_eq!(demo["resources"]["count"], 3);
    let probes = demo["probes"].as_array().unwrap();
    assert_eq!(probes.len(), 10);
    let by_tool = |t: &str| probes.iter().find(|p| p["tool"] == t).unwrap();
    assert!(
        by_tool("scrape_as_markdown")["raw"]["text_tokens"]
            .as_u64()
            .unwrap()
            > 200_000
    );
    assert_eq!(by_tool("get_forecast")["raw"]["structured_duplicate"], true);
    assert_eq!(by_tool("run_query")["status"], "tool_error");
    let shot = &by_tool("take_screenshot")["raw"];
    assert_eq!(shot["blocks"][1]["width_px"], 1280);
    assert_eq!(
        shot["image_tokens"],
        mcp_budget::ground::tokens::claude_image_tokens(1280, 800).0
    );
    let blob = &by_tool("download_archive")["raw"];
    assert_eq!(blob["model_tokens"], 0, "a blob is never counted as text");
    for f in ["servers.csv", "tools.csv", "probes.csv"] {
        let csv = std::fs::read_to_string(out.join(f)).unwrap();
        assert!(csv.lines().count() > 1, "{f} has rows");
    }
}

/// The demo's wire counts, in each era, equal what a client written without rmcp receives: the
/// 2026-07-28 era's results carry more (`resultType`, `ttlMs`, `cacheScope`), and are counted.
#[test]
fn demo_wire_counts_equal_an_independent_client() {
    let mut wires = Vec::new();
    for (era, mut raw) in [
        ("legacy", RawClient::spawn(&bin_path(), &["demo-server"])),
        (
            "auto",
            RawClient::spawn_modern(&bin_path(), &["demo-server"]),
        ),
    ] {
        let pages = raw.tools_pages();
        assert_eq!(pages.len(), 3);
        let scrape = raw.request(
            "tools/call",
            serde_json::json!({"name": "scrape_as_markdown", "arguments": {"url": "demo://shop/search?q=wireless+earbuds"}}),
        );
        drop(raw);

        let home = tempfile::tempdir().unwrap();
        let out = home.path().join("out");
        let probe = repo().join("probes/demo.toml");
        mcp_budget(home.path(), home.path())
            .args(["audit", probe.to_str().unwrap(), "--out"])
            .arg(&out)
            .args(["--format", "json", "--protocol", era])
            .assert()
            .code(0);
        let report = read_report(&out);
        let demo = &report["servers"][0];
        let want = if era == "auto" {
            "2026-07-28"
        } else {
            "2025-11-25"
        };
        assert_eq!(demo["protocol_version"], want);
        let wire: usize = pages.iter().map(|p| Tokenizer::Cl100k.count(p)).sum();
        let bytes: usize = pages.iter().map(String::len).sum();
        assert_eq!(demo["tools_list"]["wire_tokens"], wire, "{era}");
        assert_eq!(demo["tools_list"]["wire_bytes"], bytes, "{era}");
        let probe = demo["probes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["tool"] == "scrape_as_markdown")
            .unwrap();
        assert_eq!(probe["raw"]["wire_bytes"], scrape.len(), "{era}");
        assert_eq!(
            probe["raw"]["wire_tokens"],
            Tokenizer::Cl100k.count(&scrape)
        );
        let page: Value = serde_json::from_str(&pages[0]).unwrap();
        assert_eq!(
            page.get("resultType").is_some(),
            era == "auto",
            "{era}: {:?}",
            page.as_object().map(|o| o.keys().collect::<Vec<_>>())
        );
        wires.push(wire);
    }
    assert!(wires[1] > wires[0], "{wires:?}");
}

#[test]
fn no_config_anywhere_falls_back_to_the_embedded_demo() {
    let home = tempfile::tempdir().unwrap();
    let assert = mcp_budget(home.path(), home.path())
        .args([
            "audit",
            "--no-write",
            "--format",
            "json",
            "--tokenizer",
            "o200k_base,cl100k_base,claude-estimate",
        ])
        .assert()
        .code(0);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).to_string();
    assert!(stderr.contains("embedded demo"), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&assert.get_output().stdout).unwrap();
    assert_eq!(report["tokenizers"][0], "o200k_base");
    assert!(report["tokenizers"][2].as_str().unwrap().contains("1.23"));
    let demo = &report["servers"][0];
    let cl = demo["by_tokenizer"]["cl100k_base"]["tools_model_tokens"]
        .as_u64()
        .unwrap();
    let est = demo["by_tokenizer"]["claude-estimate"]["tools_model_tokens"]
        .as_u64()
        .unwrap();
    assert!(est > cl && demo["tools_list"]["model_tokens"].as_u64().unwrap() > 0);
    assert!(
        !home.path().join("reports").exists(),
        "--no-write writes nothing"
    );
}

#[test]
fn concurrency_runs_servers_side_by_side() {
    let home = tempfile::tempdir().unwrap();
    let mut toml = String::new();
    for i in 0..6 {
        toml.push_str(&format!("[servers.demo{i}]\nbuiltin = \"demo\"\n[[servers.demo{i}.probes]]\ntool = \"get_time\"\n"));
    }
    let probe = home.path().join("many.toml");
    std::fs::write(&probe, toml).unwrap();
    let assert = mcp_budget(home.path(), home.path())
        .args([
            "audit",
            probe.to_str().unwrap(),
            "--no-write",
            "--format",
            "csv",
            "--concurrency",
            "3",
        ])
        .assert()
        .code(0);
    let csv = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    assert_eq!(
        csv.lines().count(),
        1 + 6 * 13,
        "tools.csv rows: header + 6 servers x 13 tools"
    );
    assert!(csv.starts_with("server,tool,model_tokens,"));
}

#[test]
fn fifty_servers_in_one_audit() {
    let home = tempfile::tempdir().unwrap();
    let toml: String = (0..50)
        .map(|i| format!("[servers.s{i:02}]\nbuiltin = \"demo\"\n[[servers.s{i:02}.probes]]\ntool = \"list_tickets\"\n"))
        .collect();
    let (report, _) =
        crate::support::audit_probe(home.path(), &toml, &["--concurrency", "50"], &[], 0);
    let servers = report["servers"].as_array().unwrap();
    assert_eq!(servers.len(), 50);
    let names: Vec<&str> = servers
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "rows come back in the order given");
    assert!(servers
        .iter()
        .all(|s| s["status"] == "ok" && s["probes"][0]["status"] == "ok"));
}

/// Issue 14: the engine's start-up (the tokenizer's tables, compiled patterns) is paid once,
/// before the first probe, and reported once at the top of the report, in no server or probe
/// row; a small result is passed a few times for its median, and its spill, named by its
/// content, is still one file.
#[test]
fn issue_14_engine_startup_is_reported_once_outside_every_probe() {
    let home = tempfile::tempdir().unwrap();
    let toml: String = ["a", "b"]
        .iter()
        .map(|s| {
            format!(
                "[servers.{s}]\nbuiltin = \"demo\"\n\
                 [[servers.{s}.probes]]\ntool = \"list_tickets\"\n\
                 [[servers.{s}.probes]]\ntool = \"get_time\"\n"
            )
        })
        .collect();
    let (report, _) = crate::support::audit_probe(home.path(), &toml, &["--budget", "200"], &[], 0);
    let startup = report["engine_startup_us"].as_u64();
    assert!(startup.is_some_and(|us| us > 0), "{report:#}");
    let servers = report["servers"].as_array().unwrap();
    assert_eq!(servers.len(), 2);
    let mut spilled = std::collections::BTreeSet::new();
    for s in servers {
        assert!(s.get("engine_startup_us").is_none());
        for p in s["probes"].as_array().unwrap() {
            let b = &p["budgeted"];
            assert!(b["engine_us"].is_u64() && b.get("engine_startup_us").is_none());
            spilled.extend(b["spill_path"].as_str().map(str::to_string));
        }
    }
    assert!(!spilled.is_empty(), "a budget of 200 cuts some result");
    let files = walkdir(&home.path().join("spill"));
    assert_eq!(files, spilled.into_iter().collect::<Vec<_>>());
}

#[test]
fn issue_15_probe_labels_tell_calls_of_one_tool_apart() {
    let home = tempfile::tempdir().unwrap();
    let probe = home.path().join("probe.toml");
    std::fs::write(
        &probe,
        "[servers.demo]\nbuiltin = \"demo\"\n\
         [[servers.demo.probes]]\ntool = \"get_forecast\"\narguments = { city = \"Lisbon\" }\nlabel = \"lisbon\"\n\
         [[servers.demo.probes]]\ntool = \"get_forecast\"\narguments = { city = \"Oslo\" }\nlabel = \"oslo\"\n",
    )
    .unwrap();
    let out = home.path().join("out");
    let assert = mcp_budget(home.path(), home.path())
        .args([
            "audit",
            probe.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .args(["--width", "160"])
        .assert()
        .code(0);
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    assert!(
        stdout.contains("get_forecast (lisbon)") && stdout.contains("get_forecast (oslo)"),
        "{stdout}"
    );
    let report = read_report(&out);
    let labels: Vec<&str> = report["servers"][0]["probes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["lisbon", "oslo"]);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("`get_forecast (oslo)`") || md.contains("get_forecast (oslo)"),
        "{md}"
    );
    let csv = std::fs::read_to_string(out.join("probes.csv")).unwrap();
    assert!(csv.lines().next().unwrap().contains(",label,"), "{csv}");
    assert!(csv.contains(",get_forecast,oslo,"), "{csv}");

    // a label that could drive the terminal is refused, naming the server
    std::fs::write(
        &probe,
        "[servers.demo]\nbuiltin = \"demo\"\n[[servers.demo.probes]]\ntool = \"get_forecast\"\nlabel = \"a\\u001b[2Jb\"\n",
    )
    .unwrap();
    let assert = mcp_budget(home.path(), home.path())
        .args(["audit", probe.to_str().unwrap(), "--no-write"])
        .assert();
    let out = assert.get_output();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(all.contains("probe label") && all.contains("demo"), "{all}");
    assert!(!all.contains('\u{1b}'), "{all}");
}

/// Every file under `dir`, sorted.
fn walkdir(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walkdir(&path));
        } else {
            out.push(path.display().to_string());
        }
    }
    out.sort();
    out
}

/// Issue 39: Continue CLI can be used in `audit --client` (the lab measured it and it had no
/// profile). The expected numbers are what the real client sent its model in the lab (Continue
/// CLI 1.5.47, `mcp-budget lab --client continue-cli` on the demo, 2026-12-04): the content
/// array's JSON (browser_snapshot 209,813 characters, 61,428 tokens; read_file's embedded
/// resource 108,338 and 28,937), and nothing of a result over the model's context.
#[test]
fn continue_cli_is_audited_as_the_lab_measured_it() {
    let home = tempfile::tempdir().unwrap();
    let (stdout, out) = audit_demo(home.path(), &["--client", "continue-cli"]);
    assert!(
        stdout.contains(
            "sends its model nothing of this 130,130-token result: over its 104,000-token cap"
        ),
        "{stdout}"
    );
    let report = read_report(&out);
    let view = |tool: &str| {
        let probe = report["servers"][0]["probes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["tool"] == tool)
            .unwrap_or_else(|| panic!("no probe {tool}"));
        let c = &probe["clients"][0];
        assert_eq!(c["client"], "continue-cli");
        c.clone()
    };
    for (tool, tokens, bytes) in [
        ("browser_snapshot", 61_428, 209_813),
        ("read_file", 28_937, 108_338),
    ] {
        let c = view(tool);
        assert_eq!(c["raw"]["outcome"], "full", "{tool}");
        assert_eq!(c["raw"]["tokens_to_model"], tokens, "{tool}");
        assert_eq!(c["raw"]["bytes_to_model"], bytes, "{tool}");
    }
    for tool in ["scrape_as_markdown", "search_code", "list_pull_requests"] {
        let c = view(tool);
        assert_eq!(c["raw"]["outcome"], "refused", "{tool}");
        assert_eq!(c["raw"]["tokens_to_model"], 0, "{tool}");
        // behind the engine the whole budgeted result reaches it
        assert_eq!(c["budgeted"]["outcome"], "full", "{tool}");
    }
}

/// report.md's summary and its client table say the same about what the engine leaves cut: the
/// results the summary names are those some client's budgeted view still cuts in audit.json,
/// and each client's "budgeted" cell counts that client's share of them.
#[test]
fn the_summary_and_the_client_table_agree_on_what_is_still_cut() {
    let home = tempfile::tempdir().unwrap();
    let (_, out) = audit_demo(home.path(), &["--no-charts"]);
    let report = read_report(&out);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let probes = report["servers"][0]["probes"].as_array().unwrap();
    let cut_in = |p: &Value, client: &str| {
        p["clients"].as_array().unwrap().iter().any(|c| {
            c["client"] == client
                && c["unlisted"] != true
                && c["budgeted"]["outcome"]
                    .as_str()
                    .is_some_and(|o| o != "full")
        })
    };
    let clients: Vec<&str> = report["clients"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    let still: Vec<&str> = probes
        .iter()
        .filter(|p| clients.iter().any(|c| cut_in(p, c)))
        .map(|p| p["tool"].as_str().unwrap())
        .collect();
    assert!(
        !still.is_empty(),
        "the demo has results no engine can make fit every client"
    );
    let summary = md.lines().nth(2).unwrap();
    let said = format!(
        "With each client's own limits, {} result{} still reach",
        still.len(),
        if still.len() == 1 { "" } else { "s" }
    );
    assert!(summary.contains(&said), "{summary}");
    for tool in &still {
        assert!(
            summary.contains(&format!("`{tool}` (")),
            "{tool}: {summary}"
        );
    }
    for client in &clients {
        let n = probes.iter().filter(|p| cut_in(p, client)).count();
        let row = md
            .lines()
            .find(|l| l.starts_with(&format!("| `{client}")))
            .unwrap_or_else(|| panic!("no row for {client}"));
        let cell = row.split(" | ").nth(5).unwrap();
        let expected = if n == 0 {
            "none".to_string()
        } else {
            format!("{n} of ")
        };
        assert!(cell.starts_with(&expected), "{client}: {cell:?} vs {n}");
    }
}
