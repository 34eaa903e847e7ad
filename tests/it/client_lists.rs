//! Issue 28, item 3: `--client` and `MCP_BUDGET_CLIENT` mean one thing on every command, a list
//! of client ids parsed once. `replay` (like `proxy`) holds a result to the tightest limits of
//! every listed client; `measured` is `audit`'s word and is refused elsewhere.

use std::path::Path;

use serde_json::Value;

use crate::support::mcp_budget;

/// A prose result of 80,000 characters (over Codex's 12,000 bytes and Claude Code's 50,000
/// characters), as a bare tool result file.
fn payload(dir: &Path) -> std::path::PathBuf {
    let words: Vec<String> = (0..10_000).map(|i| format!("word{i:05}")).collect();
    let text = words.join(" ");
    let result = serde_json::json!({"content": [{"type": "text", "text": text}]});
    let path = dir.join("notes.json");
    std::fs::write(&path, result.to_string()).unwrap();
    path
}

/// `replay --format json` of the payload with `args`; the one row.
fn replay(home: &Path, file: &Path, args: &[&str], env: Option<&str>) -> Value {
    let mut cmd = mcp_budget(home, home);
    cmd.arg("replay")
        .arg(file)
        .args(["--format", "json", "--spill-dir"]);
    cmd.arg(home.join("spill")).args(args);
    if let Some(list) = env {
        cmd.env("MCP_BUDGET_CLIENT", list);
    }
    let out = cmd.assert().code(0).get_output().stdout.clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    v["results"][0].clone()
}

/// The bytes of the text a client is sent of a budgeted result (its text blocks).
fn text_bytes(row: &Value) -> usize {
    row["result"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["text"].as_str())
        .map(str::len)
        .sum()
}

#[test]
fn a_list_of_clients_gets_the_tightest_limits_and_the_variable_means_the_same() {
    let home = tempfile::tempdir().unwrap();
    let file = payload(home.path());
    let codex = replay(home.path(), &file, &["--client", "codex"], None);
    let claude = replay(home.path(), &file, &["--client", "claude-code"], None);
    let both = replay(home.path(), &file, &["--client", "claude-code,codex"], None);
    // Codex keeps 12,000 bytes: behind both clients, no result is larger than Codex keeps
    assert!(text_bytes(&codex) <= 12_000, "{}", text_bytes(&codex));
    assert!(text_bytes(&both) <= 12_000, "{}", text_bytes(&both));
    assert!(
        text_bytes(&both) <= text_bytes(&claude),
        "{} > {}",
        text_bytes(&both),
        text_bytes(&claude)
    );
    assert!(both["tokens_after"].as_u64() <= codex["tokens_after"].as_u64());
    // the variable is the same list
    let by_env = replay(home.path(), &file, &[], Some("claude-code,codex"));
    assert_eq!(by_env["tokens_after"], both["tokens_after"]);
    assert_eq!(by_env["result"], both["result"]);
    // and no client at all leaves the default budget alone: a larger result than behind Codex
    let none = replay(home.path(), &file, &[], None);
    assert!(text_bytes(&none) > text_bytes(&codex));
}

#[test]
fn measured_and_unknown_clients_are_refused_outside_audit() {
    let home = tempfile::tempdir().unwrap();
    let file = payload(home.path());
    let a = mcp_budget(home.path(), home.path())
        .arg("replay")
        .arg(&file)
        .args(["--client", "measured,codex"])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(err.contains("`measured` is for `audit`"), "{err}");
    let a = mcp_budget(home.path(), home.path())
        .args(["proxy", "--client", "codex,nope", "--", "true"])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(err.contains("unknown client `nope`"), "{err}");
}
