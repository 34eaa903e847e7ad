//! Issue 37, 3.2: one rule for a structuredContent that repeats the text. For a tool that
//! declares an `outputSchema` it is kept (shrunk if need be: a client validates that it is
//! there), otherwise a repeat is dropped; `audit` and `replay --output-schema` apply the same
//! rule to the same result and agree to the token.

use serde_json::Value;

use crate::support::{mcp_budget, repo};

/// The recorded answer to the probe of `tool` in a recording's transcripts.
fn recorded_answer(dir: &std::path::Path, tool: &str) -> String {
    let mut events = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "jsonl") {
            let text = std::fs::read_to_string(e.path()).unwrap();
            events.extend(
                text.lines()
                    .map(|l| serde_json::from_str::<Value>(l).unwrap()),
            );
        }
    }
    let lines: Vec<Value> = events
        .iter()
        .map(|e| serde_json::from_str(e["line"].as_str().unwrap()).unwrap())
        .collect();
    let id = lines
        .iter()
        .find(|m| m["method"] == "tools/call" && m["params"]["name"] == tool)
        .map(|m| m["id"].clone())
        .expect("the probe's request");
    let at = lines
        .iter()
        .position(|m| m["id"] == id && m.get("result").is_some())
        .expect("its answer");
    events[at]["line"].as_str().unwrap().to_string()
}

#[test]
fn audit_and_replay_apply_one_rule_to_a_repeated_structured_content() {
    let home = tempfile::tempdir().unwrap();
    let record = home.path().join("rec");
    let demo = repo().join("probes/demo.toml");
    let out = mcp_budget(home.path(), home.path())
        .args([
            "audit",
            demo.to_str().unwrap(),
            "--no-write",
            "--format",
            "json",
        ])
        .args(["--budget", "1000", "--record", record.to_str().unwrap()])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let probe = report["servers"][0]["probes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["tool"] == "get_forecast")
        .unwrap()
        .clone();
    let audited = probe["budgeted"]["tokens"].as_u64().unwrap();
    assert_ne!(probe["budgeted"]["strategy"], "pass_through", "{probe}");

    let line = recorded_answer(&record, "get_forecast");
    assert!(line.contains("structuredContent"), "{line}");
    let file = home.path().join("demo__get_forecast.json");
    std::fs::write(&file, &line).unwrap();
    let replay = |extra: &[&str]| -> Value {
        let out = mcp_budget(home.path(), home.path())
            .args(["replay", file.to_str().unwrap(), "--budget", "1000"])
            .args(["--format", "json"])
            .args(extra)
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["results"][0].clone()
    };
    let kept = replay(&["--output-schema"]);
    assert_eq!(kept["tokens_after"].as_u64(), Some(audited), "{kept}");
    assert!(kept["result"].get("structuredContent").is_some(), "{kept}");
    // the same result of a tool without an output schema: the repeat is dropped
    let dropped = replay(&[]);
    assert!(
        dropped["result"].get("structuredContent").is_none(),
        "{dropped}"
    );
}
