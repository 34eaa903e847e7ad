//! `mcp-budget intercept` fed the exact payloads the Docker MCP Gateway's `after:exec`
//! interceptor sends (docker/mcp-gateway v0.43.3, pkg/interceptors/interceptors.go): the bare
//! `CallToolResult` JSON on stdin, `null` for a call that failed; a non-empty stdout replaces
//! the result and an empty one keeps it.

use serde_json::{json, Value};

use crate::support::mcp_budget;

fn intercept(dir: &std::path::Path, input: &str, extra: &[&str]) -> (i32, String, String) {
    let a = mcp_budget(dir, dir)
        .arg("intercept")
        .arg("--spill-dir")
        .arg(dir.join("spill"))
        .args(extra)
        .write_stdin(input.to_string())
        .assert();
    let out = a.get_output();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[test]
fn a_result_over_the_budget_is_replaced_one_within_it_is_kept_and_nothing_fails_a_call() {
    let dir = tempfile::tempdir().unwrap();
    let words: Vec<String> = (0..20_000).map(|i| format!("word{i}")).collect();
    // as the go-sdk marshals a CallToolResult: content items with their type
    let big = json!({"content": [{"type": "text", "text": words.join(" ")}]}).to_string();
    let (code, out, err) = intercept(dir.path(), &big, &["--budget", "1000"]);
    assert_eq!(code, 0, "{err}");
    let replaced: Value = serde_json::from_str(out.trim()).expect("a bare CallToolResult");
    let texts: Vec<&str> = replaced["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            assert_eq!(b["type"], "text", "{b}");
            b["text"].as_str().unwrap()
        })
        .collect();
    let tokens: usize = texts
        .iter()
        .map(|t| mcp_budget::ground::tokens::Tokenizer::Cl100k.count(t))
        .sum();
    assert!(tokens <= 1_000, "{tokens}");
    // the original is on disk, and the note says where
    let spilled: Vec<_> = std::fs::read_dir(dir.path().join("spill"))
        .unwrap()
        .flatten()
        .collect();
    assert!(!spilled.is_empty());
    assert!(
        texts
            .iter()
            .any(|t| t.contains("mcp_budget_read") || t.contains("spill")),
        "{texts:?}"
    );
    // within the budget: nothing printed, the gateway keeps the original
    let small =
        json!({"content": [{"type": "text", "text": "fine"}], "isError": false}).to_string();
    assert_eq!(
        intercept(dir.path(), &small, &[]),
        (0, String::new(), String::new())
    );
    // a call that failed upstream comes as `null`: nothing to do
    assert_eq!(intercept(dir.path(), "null\n", &[]).0, 0);
    assert_eq!(intercept(dir.path(), "null\n", &[]).1, "");
    // what cannot be read is said and passed through, never an error for the call
    let (code, out, err) = intercept(dir.path(), "{not json", &[]);
    assert_eq!((code, out.as_str()), (0, ""));
    assert!(err.contains("not JSON"), "{err}");
    // a bad policy is a configuration error before any input
    let (code, _, err) = intercept(dir.path(), &small, &["--budget", "5"]);
    assert_eq!(code, 2, "{err}");
}
