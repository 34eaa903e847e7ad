//! Real third-party servers from npm (installed, pinned, by `.ci/run`): counts by mcp-budget
//! equal an independent client's raw capture counted separately.

use mcp_budget::ground::tokens::Tokenizer;

use crate::support::{mcp_budget, read_report, real_server, RawClient};

/// Audit one stdio server and compare with a raw JSON-RPC client's tools/list.
fn compare(bin: &std::path::Path, args: &[&str], expect_tools: usize) -> serde_json::Value {
    let mut raw = RawClient::spawn(bin, args);
    let pages = raw.tools_pages();
    drop(raw);
    let independent_tools: usize = pages
        .iter()
        .map(|p| {
            serde_json::from_str::<serde_json::Value>(p).unwrap()["tools"]
                .as_array()
                .unwrap()
                .len()
        })
        .sum();
    assert_eq!(independent_tools, expect_tools);

    let home = tempfile::tempdir().unwrap();
    let probe = home.path().join("p.toml");
    let args_toml: Vec<String> = args.iter().map(|a| format!("{a:?}")).collect();
    std::fs::write(
        &probe,
        format!(
            "[servers.real]\ncommand = {:?}\nargs = [{}]\n",
            bin.display().to_string(),
            args_toml.join(", ")
        ),
    )
    .unwrap();
    let out = home.path().join("out");
    mcp_budget(home.path(), home.path())
        .args([
            "audit",
            probe.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--auto-probe",
            "--format",
            "json",
        ])
        .assert()
        .code(0);
    let report = read_report(&out);
    let s = report["servers"][0].clone();
    assert_eq!(s["tools_list"]["tool_count"], expect_tools);
    let wire: usize = pages.iter().map(|p| Tokenizer::Cl100k.count(p)).sum();
    assert_eq!(s["tools_list"]["wire_tokens"], wire);
    assert_eq!(
        s["tools_list"]["wire_bytes"],
        pages.iter().map(String::len).sum::<usize>()
    );
    s
}

#[test]
fn server_everything_counts_match_a_raw_client() {
    let Some(bin) = real_server("mcp-server-everything") else {
        return;
    };
    let s = compare(&bin, &["stdio"], 13);
    assert!(s["protocol_version"].as_str().is_some());
    // the 2025-11-25 `execution` field survives: it is on the wire, outside the model view
    let other: u64 = s["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["other_tokens"].as_u64().unwrap())
        .sum();
    assert!(other > 0, "unknown fields such as `execution` are counted");
    assert!(
        s["probes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["status"] != "error"),
        "{}",
        s["probes"]
    );
}

#[test]
fn server_filesystem_counts_match_a_raw_client() {
    let Some(bin) = real_server("mcp-server-filesystem") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.md"), "# Notes\n\nhello ".repeat(500)).unwrap();
    let root = dir.path().to_str().unwrap();
    let s = compare(&bin, &[root], 14);
    let probes = s["probes"].as_array().unwrap();
    assert!(
        probes
            .iter()
            .any(|p| p["tool"] == "list_allowed_directories" && p["status"] == "ok"),
        "{probes:?}"
    );
}
