//! Issue 38: what the model gets, through the binary. A long list fills the budget with whole
//! rows (it kept 20 rows in 21% of it), a projection picked by the tool's name is not used on
//! rows it does not fit (it wrote `null` in every row), and `replay --compare` judges every
//! contender on the same planted facts.

use serde_json::Value;

use crate::support::mcp_budget;

/// 60,000 rows of flat objects, as a JSON-RPC response line; the rows too.
fn rows_file(dir: &std::path::Path) -> (std::path::PathBuf, Vec<Value>) {
    let rows: Vec<Value> = (0..60_000)
        .map(|i| {
            serde_json::json!({
                "id": i,
                "title": format!("Row {i} title words"),
                "state": if i % 3 == 0 { "open" } else { "closed" },
                "amount": format!("{}.{:02}", i * 7, i % 100).parse::<f64>().unwrap(),
                "body": "alpha beta gamma delta eps alpha beta gamma delta eps",
            })
        })
        .collect();
    let text = serde_json::to_string(&rows).unwrap();
    let line = serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}]}});
    let path = dir.join("rows.jsonl");
    std::fs::write(&path, format!("{line}\n")).unwrap();
    (path, rows)
}

fn replay(dir: &std::path::Path, file: &std::path::Path, extra: &[&str]) -> Value {
    let spill = dir.join("spill");
    let out = mcp_budget(dir, dir)
        .arg("replay")
        .arg(file)
        .args(["--budget", "8000", "--format", "json", "--spill-dir"])
        .arg(&spill)
        .args(extra)
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
fn issue_38_a_long_list_fills_the_budget_with_whole_rows() {
    let dir = tempfile::tempdir().unwrap();
    let (file, rows) = rows_file(dir.path());
    for tool in ["rows", "list_issues"] {
        let got = replay(dir.path(), &file, &["--tool", tool]);
        let r = &got["results"][0];
        assert_eq!(r["strategy"], "shrunk", "{tool}: {}", r["note"]);
        let fill = r["fill"].as_f64().unwrap();
        assert!((0.9..=1.0).contains(&fill), "{tool}: fill {fill}");
        let text = r["result"]["content"][0]["text"].as_str().unwrap();
        let kept: Vec<Value> = serde_json::from_str(text).expect("valid JSON");
        // whole rows, the original's first ones, and no field the data does not have
        assert!(kept.len() > 150, "{tool}: {} rows", kept.len());
        assert_eq!(kept[..], rows[..kept.len()], "{tool}");
        assert!(!text.contains("null"), "{tool}");
        assert_eq!(r["items"]["whole"], kept.len(), "{tool}");
        assert_eq!(r["items"]["total"], 60_000, "{tool}");
        let note = r["note"].as_str().unwrap();
        let said = format!("(top level): items 1-{} of 60,000 kept whole", kept.len());
        assert!(note.contains(&said), "{tool}: {note}");
        if tool == "list_issues" {
            assert!(
                note.contains("the built-in projection for this tool's name not used: the data has no `assignees` at [0]"),
                "{note}"
            );
        }
    }
}

#[test]
fn issue_38_compare_judges_every_contender_on_the_same_planted_facts() {
    let dir = tempfile::tempdir().unwrap();
    let (file, _) = rows_file(dir.path());
    let got = replay(
        dir.path(),
        &file,
        &[
            "--compare",
            "--client",
            "codex,claude-code",
            "--needles",
            "12",
        ],
    );
    let r = &got["results"][0];
    let needles = r["needles"].as_array().unwrap();
    assert!(needles.len() >= 10, "{needles:?}");
    let views = r["views"].as_array().unwrap();
    let names: Vec<&str> = views
        .iter()
        .map(|v| v["contender"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        // the clients in the profiles' order, each raw then behind the engine
        [
            "mcp-budget",
            "claude-code",
            "claude-code behind mcp-budget",
            "codex",
            "codex behind mcp-budget"
        ]
    );
    let engine = &views[0];
    assert_eq!(engine["json"], "valid");
    assert!(
        engine["fill"].as_f64().unwrap() >= 0.9,
        "{}",
        engine["fill"]
    );
    // every planted fact is reachable through the handle, whatever is shown inline
    assert_eq!(
        engine["reachable"],
        serde_json::json!([needles.len(), needles.len()])
    );
    // Codex keeps a head and a tail of the raw text: a preview, not JSON
    assert_eq!(views[3]["json"], "labelled_preview");
    assert_eq!(views[3]["outcome"], "truncated");
    for v in views {
        assert!(
            v["cut_number"].is_null() || v["contender"] != "mcp-budget",
            "{v}"
        );
    }
}
