//! Every listing fits an 80-column terminal (`--width 80`): count, servers, replay, gate's
//! changes and the engine's comparison lose columns by rank and cut text with `…`, never a
//! number, and say what they left out; the count and the gate at 80 columns are snapshots.

use std::path::Path;

use unicode_width::UnicodeWidthStr;

use crate::support::{mcp_budget, repo};

fn run(dir: &Path, args: &[&str]) -> String {
    let o = mcp_budget(dir, dir).args(args).output().unwrap();
    assert!(
        o.status.code().is_some_and(|c| c <= 1),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn fits(text: &str, width: usize) {
    for line in text.lines() {
        assert!(
            line.width() <= width,
            "{} columns: {line:?}\n{text}",
            line.width()
        );
    }
}

#[test]
fn count_and_servers_fit_80_columns() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path();
    let long = "a-file-whose-name-is-far-too-long-for-any-terminal-column-at-all.md";
    std::fs::write(dir.join(long), "word ".repeat(20_000)).unwrap();
    std::fs::write(dir.join("b.md"), "short").unwrap();
    let count = run(
        dir,
        &[
            "count",
            long,
            "b.md",
            "--tokenizer",
            "cl100k_base,o200k_base,claude-estimate",
            "--width",
            "80",
        ],
    );
    fits(&count, 80);
    // the primary count whole; the name cut with …; the columns left out named
    assert!(count.contains("20,001"), "{count}");
    assert!(count.contains('…'), "{count}");
    insta::assert_snapshot!("count_80", count);

    std::fs::create_dir_all(dir.join(".cursor")).unwrap();
    std::fs::write(
        dir.join(".cursor/mcp.json"),
        r#"{"mcpServers": {"playwright": {"command": "npx", "args": ["-y", "@playwright/mcp@0.0.99", "--browser", "chromium", "--headless", "--isolated", "--output-dir", "/tmp/a/very/long/folder/for/the/output"]}}}"#,
    )
    .unwrap();
    let servers = run(dir, &["servers", "--width", "80"]);
    fits(&servers, 80);
    assert!(
        servers.contains("playwright") && servers.contains("npx -y"),
        "{servers}"
    );
    assert!(servers.contains("left out to fit the width"), "{servers}");
}

#[test]
fn gate_changes_and_replay_fit_80_columns() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path();
    // the committed example, with list_docs (and its server) 16 tokens smaller: the demo grew
    let mut r: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("reports/example/audit.json")).unwrap(),
    )
    .unwrap();
    let s = &mut r["servers"][0];
    for t in s["tools"].as_array_mut().unwrap() {
        if t["name"] == "list_docs" {
            t["model_tokens"] = (t["model_tokens"].as_u64().unwrap() - 16).into();
        }
    }
    s["tools_list"]["model_tokens"] =
        (s["tools_list"]["model_tokens"].as_u64().unwrap() - 16).into();
    let base = dir.join("base.json");
    std::fs::write(&base, serde_json::to_string(&r).unwrap()).unwrap();
    let example = repo().join("reports/example/audit.json");
    let gate = run(
        dir,
        &[
            "gate",
            example.to_str().unwrap(),
            "--baseline",
            base.to_str().unwrap(),
            "--max-regression-pct",
            "1",
            "--width",
            "80",
        ],
    );
    fits(&gate, 80);
    assert!(gate.contains("list_docs") && gate.contains("+16"), "{gate}");
    insta::assert_snapshot!("gate_80", gate.replace(base.to_str().unwrap(), "BASE"));

    let result = dir.join("github__search_code.json");
    let items: Vec<serde_json::Value> = (0..400)
        .map(|i| serde_json::json!({"id": i, "path": format!("src/module_{i}/a/deeply/nested/file_{i}.rs"), "score": 1.5}))
        .collect();
    let text = serde_json::json!({"total_count": 400, "items": items}).to_string();
    std::fs::write(
        &result,
        serde_json::json!({"content": [{"type": "text", "text": text}]}).to_string(),
    )
    .unwrap();
    let spill = dir.join("spill");
    let replay = run(
        dir,
        &[
            "replay",
            result.to_str().unwrap(),
            "--budget",
            "1000",
            "--spill-dir",
            spill.to_str().unwrap(),
            "--width",
            "80",
        ],
    );
    fits(&replay, 80);
    assert!(replay.contains("1,000"), "{replay}");
    let compare = run(
        dir,
        &[
            "replay",
            result.to_str().unwrap(),
            "--budget",
            "1000",
            "--compare",
            "--spill-dir",
            spill.to_str().unwrap(),
            "--width",
            "80",
        ],
    );
    fits(&compare, 80);
}
