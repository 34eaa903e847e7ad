//! `proxy --lazy-tools` with the official Python SDK client: the 117-tool GitHub list recorded in
//! the corpus (served by tests/fixtures/toolslist_server.py) and the real server-everything
//! behind two tools, found by plain-language queries, called with good and bad arguments; the
//! tools found exposed for a while with `--lazy-expose`; `--allow`/`--deny` still applying.

use std::path::{Path, PathBuf};
use std::process::Command;

use mcp_budget::ground::tokens::Tokenizer;
use mcp_budget::measure::{compact_json, model_view};
use serde_json::{json, Value};

use crate::support::{bin_path, corpus, free_port, repo, serve_on};

use super::python_sdk;

/// Queries a user would type, and the tool that must be among the top three (docs/proxy.md's
/// table is these).
pub const GITHUB_QUERIES: &[(&str, &str)] = &[
    ("list open pull requests", "list_pull_requests"),
    ("read a file from a repository", "get_file_contents"),
    ("star a repo", "star_repository"),
    ("search code across github", "search_code"),
    ("merge a pull request", "merge_pull_request"),
    ("who am i", "get_me"),
    ("create a new issue", "issue_write"),
    ("list workflow runs", "actions_list"),
    ("create a branch", "create_branch"),
    ("show the commits of a repository", "list_commits"),
    ("comment on an issue", "add_issue_comment"),
    ("get the logs of a failed job", "get_job_logs"),
    ("fork a repository", "fork_repository"),
    ("dependabot alerts", "list_dependabot_alerts"),
    ("latest release", "get_latest_release"),
];

pub const EVERYTHING_QUERIES: &[(&str, &str)] = &[
    ("echo a message back", "echo"),
    ("add two numbers", "get-sum"),
    ("a small image", "get-tiny-image"),
    (
        "long running operation with progress",
        "trigger-long-running-operation",
    ),
    ("environment variables", "get-env"),
    ("compress a file with gzip", "gzip-file-as-resource"),
    ("turn logging on", "toggle-simulated-logging"),
    ("resource links", "get-resource-links"),
];

fn github_list() -> Option<PathBuf> {
    Some(corpus()?.join("toolslists/github-mcp-server/tools-list.all-snaps-117.json"))
}

fn github_upstream(list: &Path) -> Vec<String> {
    vec![
        "python3".into(),
        repo()
            .join("tests/fixtures/toolslist_server.py")
            .to_string_lossy()
            .into(),
        list.to_string_lossy().into(),
    ]
}

/// Run tests/fixtures/lazy_client.py with `plan` against `proxy ARGS -- UPSTREAM` (stdio) or a URL.
fn lazy_client(python: &Path, plan: &Value, target: &[String]) -> Value {
    crate::support::run_json(
        Command::new(python)
            .arg(repo().join("tests/fixtures/lazy_client.py"))
            .arg(plan.to_string())
            .args(target),
    )
}

fn proxy_command(proxy: &[&str], upstream: &[String]) -> Vec<String> {
    let mut v = vec!["--".to_string(), bin_path().to_string_lossy().into()];
    v.extend(proxy.iter().map(|s| s.to_string()));
    v.push("--".into());
    v.extend(upstream.iter().cloned());
    v
}

fn per_turn(listed: &Value) -> usize {
    listed
        .as_array()
        .unwrap()
        .iter()
        .map(|t| Tokenizer::Cl100k.count(&compact_json(&model_view(t.as_object().unwrap()))))
        .sum()
}

fn names(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().or(t["name"].as_str()).unwrap().to_string())
        .collect()
}

fn assert_found(got: &Value, table: &[(&str, &str)]) {
    for (query, tool) in table {
        let top = names(&got["found"][query]);
        assert!(
            top.iter().any(|t| t == tool),
            "`{query}`: `{tool}` is not in the top 3 {top:?}"
        );
    }
}

#[test]
fn a_117_tool_list_costs_under_1000_tokens_a_turn_and_every_tool_is_found_and_called() {
    let (Some(python), Some(list)) = (python_sdk(), github_list()) else {
        return;
    };
    let upstream = github_upstream(&list);
    let home = tempfile::tempdir().unwrap();
    let log = home.path().join("calls.jsonl");
    let queries: Vec<&str> = GITHUB_QUERIES.iter().map(|(q, _)| *q).collect();
    let plan = json!({
        "queries": queries,
        "calls": [
            {"name": "get_file_contents", "arguments": {"owner": "o", "repo": "r", "path": "README.md"}},
            {"name": "list_issues", "arguments": {"owner": 5}},
            {"name": "get_mee"},
            {"name": "list_issues"},
        ]
    });
    let spill = home.path().join("spill");
    let proxy = [
        "proxy",
        "--lazy-tools",
        "--log",
        log.to_str().unwrap(),
        "--spill-dir",
        spill.to_str().unwrap(),
    ];
    let got = lazy_client(&python, &plan, &proxy_command(&proxy, &upstream));

    let listed = &got["listed"];
    assert_eq!(
        names(listed),
        [
            "mcp_budget_find_tools",
            "mcp_budget_call_tool",
            "mcp_budget_read"
        ]
    );
    let before: usize = serde_json::from_str::<Value>(&std::fs::read_to_string(&list).unwrap())
        .unwrap()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| Tokenizer::Cl100k.count(&compact_json(&model_view(t.as_object().unwrap()))))
        .sum();
    let after = per_turn(listed);
    assert!(before > 20_000, "{before}");
    assert!(after < 1_000, "{after} tokens per turn");
    assert!(listed[0]["description"]
        .as_str()
        .unwrap()
        .contains("117 tools"));
    assert_found(&got, GITHUB_QUERIES);

    let calls = got["calls"].as_array().unwrap();
    // a good call arrives upstream as sent
    assert_eq!(calls[0]["is_error"], false);
    let echoed: Value = serde_json::from_str(calls[0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(echoed["called"], "get_file_contents");
    assert_eq!(echoed["arguments"]["path"], "README.md");
    // arguments that break the schema: each error, and the definition to correct them by
    assert_eq!(calls[1]["is_error"], true);
    let bad: Value = serde_json::from_str(calls[1]["text"].as_str().unwrap()).unwrap();
    let error = bad["error"].as_str().unwrap();
    assert!(error.contains("\"repo\" is a required property"), "{error}");
    assert!(
        error.contains("/owner: 5 is not of type \"string\""),
        "{error}"
    );
    assert_eq!(bad["definition"]["name"], "list_issues");
    assert!(bad["definition"]["inputSchema"]["properties"]["repo"].is_object());
    // a name a typo away: the closest definitions
    assert_eq!(calls[2]["is_error"], true);
    let unknown: Value = serde_json::from_str(calls[2]["text"].as_str().unwrap()).unwrap();
    assert_eq!(unknown["closest"][0]["name"], "get_me");
    // no arguments at all for a tool with required ones
    assert_eq!(calls[3]["is_error"], true);

    // the log: the one call that reached the upstream, made through the call tool, with the
    // schema tax before and after
    let lines: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["tool"], "get_file_contents");
    assert_eq!(lines[0]["via"], "mcp_budget_call_tool");
    assert_eq!(lines[0]["schema_tokens_upstream"], before);
    assert_eq!(lines[0]["schema_tokens_shown"], after);
}

#[test]
fn server_everything_behind_lazy_tools_over_stdio_and_http() {
    let Some(python) = python_sdk() else { return };
    let Some(everything) = crate::support::real_server("mcp-server-everything") else {
        return;
    };
    let upstream = vec![everything.to_string_lossy().to_string(), "stdio".into()];
    let queries: Vec<&str> = EVERYTHING_QUERIES.iter().map(|(q, _)| *q).collect();
    let plan = json!({
        "queries": queries,
        "calls": [
            {"name": "echo", "arguments": {"message": "hello through the lazy proxy"}},
            {"name": "echo", "arguments": {}},
            {"name": "get-sum", "arguments": {"a": 2, "b": 40}},
        ]
    });
    let home = tempfile::tempdir().unwrap();
    let spill = home.path().join("spill");
    let check = |got: &Value| {
        assert_eq!(names(&got["listed"]).len(), 3);
        assert_found(got, EVERYTHING_QUERIES);
        let calls = got["calls"].as_array().unwrap();
        assert_eq!(calls[0]["is_error"], false);
        assert!(calls[0]["text"]
            .as_str()
            .unwrap()
            .contains("hello through the lazy proxy"));
        assert_eq!(calls[1]["is_error"], true);
        let bad: Value = serde_json::from_str(calls[1]["text"].as_str().unwrap()).unwrap();
        assert!(bad["error"]
            .as_str()
            .unwrap()
            .contains("\"message\" is a required property"));
        assert_eq!(bad["definition"]["name"], "echo");
        assert!(
            calls[2]["text"].as_str().unwrap().contains("42"),
            "{calls:?}"
        );
    };
    let proxy = [
        "proxy",
        "--lazy-tools",
        "--spill-dir",
        spill.to_str().unwrap(),
    ];
    check(&lazy_client(
        &python,
        &plan,
        &proxy_command(&proxy, &upstream),
    ));

    // the same over streamable HTTP
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let mut cmd = Command::new(bin_path());
    cmd.args(proxy)
        .args(["--listen", &addr, "--"])
        .args(&upstream);
    let _served = serve_on(cmd, port);
    let url = vec!["--url".to_string(), format!("http://{addr}/mcp")];
    check(&lazy_client(&python, &plan, &url));
}

#[test]
fn tools_found_are_exposed_for_a_while_and_deny_still_hides() {
    let (Some(python), Some(list)) = (python_sdk(), github_list()) else {
        return;
    };
    let upstream = github_upstream(&list);
    let home = tempfile::tempdir().unwrap();
    let spill = home.path().join("spill");
    let plan = json!({
        "queries": ["delete a repository", "star a repo"],
        "calls": [{"name": "delete_repository", "arguments": {"owner": "o", "repo": "r"}}],
        "expose": true,
        "direct": {"name": "star_repository", "arguments": {"owner": "o", "repo": "r"}},
    });
    let proxy = [
        "proxy",
        "--lazy-tools",
        "--lazy-expose",
        "3",
        "--deny",
        "delete_*",
        "--spill-dir",
        spill.to_str().unwrap(),
    ];
    let got = lazy_client(&python, &plan, &proxy_command(&proxy, &upstream));
    let deleted = names(&got["found"]["delete a repository"]);
    assert!(
        !deleted.iter().any(|t| t.starts_with("delete_")),
        "{deleted:?}"
    );
    assert_eq!(
        got["calls"][0]["is_error"], true,
        "a denied tool is unknown"
    );
    let exposed = names(&got["listed_after_find"]);
    assert!(
        exposed.contains(&"star_repository".to_string()),
        "{exposed:?}"
    );
    assert!(exposed.ends_with(&[
        "mcp_budget_find_tools".to_string(),
        "mcp_budget_call_tool".to_string(),
        "mcp_budget_read".to_string()
    ]));
    assert_eq!(
        names(&got["listed_later"]),
        [
            "mcp_budget_find_tools",
            "mcp_budget_call_tool",
            "mcp_budget_read"
        ]
    );
    // a tool the client saw listed is called by its own name
    assert_eq!(got["direct"]["is_error"], false);
    assert!(got["direct"]["text"]
        .as_str()
        .unwrap()
        .contains("star_repository"));
}
