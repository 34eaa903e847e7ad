//! The tools the proxy shows: hidden and shortened by policy, and counted as `audit` counts them.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::support::{bin_path, RawClient};

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

/// Issue 30: the policy's `hide_params` takes optional parameters out of what the client sees
/// and `fixed_arguments` supplies their values on every call; a required one is refused at start,
/// naming the tool.
#[test]
fn hidden_parameters_are_supplied_by_the_policy_and_a_required_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let hostile = crate::support::repo().join("tests/fixtures/hostile_server.py");
    let policy = dir.path().join("policy.toml");
    std::fs::write(
        &policy,
        "[policy.tools.probe]\nhide_params = [\"ten*\"]\nfixed_arguments = { tenant = \"acme\", region = \"eu\" }\n",
    )
    .unwrap();
    let spill = dir.path().join("spill");
    let mut p = crate::support::Pipelined::start(
        &bin_path(),
        &[
            "proxy",
            "--spill-dir",
            spill.to_str().unwrap(),
            "--policy",
            policy.to_str().unwrap(),
            "--",
            "python3",
            hostile.to_str().unwrap(),
            "echo-args",
        ],
        "hide-test",
    );
    let listed = p.call(1, "tools/list", json!({}));
    let probe = &listed["result"]["tools"][0];
    assert_eq!(probe["name"], "probe");
    let props = probe["inputSchema"]["properties"].as_object().unwrap();
    assert!(!props.contains_key("tenant"), "{probe}");
    assert!(
        props.contains_key("query") && props.contains_key("id"),
        "{probe}"
    );
    // the upstream gets the policy's values, and what the client gave wins where it gave one
    let got = p.call(
        2,
        "tools/call",
        json!({"name": "probe", "arguments": {"id": "r1", "region": "us"}}),
    );
    let args: Value = serde_json::from_str(super::texts(&got["result"]).as_str()).unwrap();
    assert_eq!(args, json!({"id": "r1", "region": "us", "tenant": "acme"}));
    p.finish();
    // a required parameter cannot be hidden: the proxy does not start
    std::fs::write(&policy, "[policy.tools.probe]\nhide_params = [\"id\"]\n").unwrap();
    let out = Command::new(bin_path())
        .args(["proxy", "--spill-dir"])
        .arg(&spill)
        .arg("--policy")
        .arg(&policy)
        .args(["--", "python3"])
        .arg(&hostile)
        .arg("echo-args")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("tool `probe`: `id` is required, so `hide_params` cannot hide it"),
        "{err}"
    );
}
