//! Issue 26, case 7: the results the proxy makes itself (finds, the errors that carry tool
//! definitions, `mcp_budget_read` pages and errors, the unknown-tool error) obey the budget and
//! the client's limits, say what they left out, and cap what a client sent before it is matched
//! or quoted back.

use std::path::Path;

use mcp_budget::ground::tokens::Tokenizer;
use serde_json::{json, Value};

use crate::support::{bin_path, corpus, repo, RawClient};

/// A proxy `ARGS` over stdio in front of tests/fixtures/toolslist_server.py serving `list`.
fn lazy_proxy(home: &Path, list: &Path, args: &[&str]) -> RawClient {
    let spill = home.join("spill");
    let server = repo().join("tests/fixtures/toolslist_server.py");
    let mut all = vec![
        "proxy",
        "--spill-dir",
        spill.to_str().unwrap(),
        "--name",
        "listed",
    ];
    all.extend_from_slice(args);
    all.extend([
        "--",
        "python3",
        server.to_str().unwrap(),
        list.to_str().unwrap(),
    ]);
    RawClient::spawn(&bin_path(), &all)
}

fn call(c: &mut RawClient, tool: &str, arguments: Value) -> Value {
    serde_json::from_str(&c.request("tools/call", json!({"name": tool, "arguments": arguments})))
        .unwrap()
}

fn texts(result: &Value) -> Vec<String> {
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["text"].as_str().map(String::from))
        .collect()
}

/// Tokens of a result as the model reads it: its text blocks.
fn tokens(result: &Value) -> usize {
    texts(result)
        .iter()
        .map(|t| Tokenizer::Cl100k.count(t))
        .sum()
}

/// A tool whose one parameter is an enum of 100,000 values (1.5 MB of definition).
fn huge_enum_list(home: &Path) -> std::path::PathBuf {
    let values: Vec<String> = (0..100_000).map(|i| format!("colour-{i:06}")).collect();
    let list = json!({"tools": [
        {"name": "pick_colour", "description": "Pick a colour for the theme",
         "inputSchema": {"type": "object", "properties": {"colour": {"type": "string", "enum": values}},
                         "required": ["colour"]}},
        {"name": "get_weather", "description": "The weather in a city",
         "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}
    ]});
    let path = home.join("tools.json");
    std::fs::write(&path, list.to_string()).unwrap();
    path
}

#[test]
fn issue26_7_lazy_finds_and_their_errors_obey_the_budget_and_say_what_they_left_out() {
    let home = tempfile::tempdir().unwrap();
    let list = huge_enum_list(home.path());
    let mut c = lazy_proxy(home.path(), &list, &["--lazy-tools", "--budget", "2000"]);

    // a find of the 1.5 MB definition: within the budget, valid JSON, with a note and a handle
    let found = call(
        &mut c,
        "mcp_budget_find_tools",
        json!({"query": "pick a colour"}),
    );
    assert!(tokens(&found) <= 2000, "{} tokens", tokens(&found));
    let blocks = texts(&found);
    let body: Value = blocks
        .iter()
        .find_map(|t| serde_json::from_str(t).ok())
        .expect("the find is still JSON");
    assert_eq!(body["tools"][0]["name"], "pick_colour", "{body}");
    let note = blocks
        .iter()
        .find(|t| t.contains("mcp_budget_read"))
        .expect("a note");
    assert!(
        note.contains("100,000"),
        "the note says what was cut: {note}"
    );
    // and the full definition reads back through the proxy's own spill
    let handle = note
        .split('"')
        .find(|s| s.starts_with("listed/mcp_budget_find_tools-"))
        .unwrap_or_else(|| panic!("a handle in {note}"));
    let page = call(
        &mut c,
        "mcp_budget_read",
        json!({"handle": handle, "grep": "colour-099999"}),
    );
    assert!(texts(&page)[0].contains("colour-099999"), "{page}");

    // arguments that break the schema: the error carries the definition, within the budget
    let bad = call(
        &mut c,
        "mcp_budget_call_tool",
        json!({"name": "pick_colour", "arguments": {"colour": "mauve"}}),
    );
    assert_eq!(bad["isError"], true, "{bad}");
    assert!(tokens(&bad) <= 2000, "{} tokens", tokens(&bad));
    assert!(
        texts(&bad)
            .join("\n")
            .contains("do not match the input schema"),
        "{bad}"
    );

    // a 400 KB name: matched and quoted by its first 256 characters
    let name = format!("pick_{}", "x".repeat(400_000));
    let unknown = call(&mut c, "mcp_budget_call_tool", json!({"name": name}));
    assert_eq!(unknown["isError"], true);
    let text = texts(&unknown).join("\n");
    assert!(text.len() < 20_000, "{} bytes quoted back", text.len());
    assert!(
        text.contains("(the first 256 of 400,005 characters)"),
        "{}",
        &text[..300.min(text.len())]
    );
    // a 400 KB query the same
    let query = "weather ".repeat(50_000);
    let found = call(&mut c, "mcp_budget_find_tools", json!({"query": query}));
    let body: Value = serde_json::from_str(&texts(&found)[0]).unwrap();
    assert_eq!(body["query"].as_str().unwrap().chars().count(), 256);
    assert_eq!(body["tools"][0]["name"], "get_weather");
    assert!(body["query_cut"].is_string(), "{body}");
    // a 400 KB handle for mcp_budget_read: quoted capped
    let read = call(
        &mut c,
        "mcp_budget_read",
        json!({"handle": "h".repeat(400_000)}),
    );
    assert_eq!(read["isError"], true);
    assert!(texts(&read)[0].len() < 1000, "{}", texts(&read)[0].len());
}

/// The JSON-RPC error of a hidden tool quotes the name capped; an upstream's error message
/// (the demo server's quotes the name whole) is cut too.
#[test]
fn issue26_7_the_unknown_tool_errors_quote_a_capped_name() {
    let home = tempfile::tempdir().unwrap();
    let bin = bin_path();
    let spill = home.path().join("spill");
    let mut c = RawClient::spawn(
        &bin,
        &[
            "proxy",
            "--spill-dir",
            spill.to_str().unwrap(),
            "--deny",
            "yy*",
            "--",
            bin.to_str().unwrap(),
            "demo-server",
        ],
    );
    for (name, starts) in [("y", "unknown tool `yyy"), ("z", "")] {
        let line = c.request_raw(
            "tools/call",
            json!({"name": name.repeat(400_000), "arguments": {}}),
        );
        let v: Value = serde_json::from_str(&line).unwrap();
        let message = v["error"]["message"]
            .as_str()
            .unwrap_or_else(|| panic!("{}", &line[..300]));
        assert!(message.len() < 5000, "{name}: {} bytes", message.len());
        assert!(message.starts_with(starts), "{message}");
        assert!(message.contains("400,0"), "it says how long: {message}");
    }
}

/// Under `--client codex` (12,000 bytes) a find of 20 of the 117 GitHub tools, and a
/// page of what it left out, stay within the client's limits.
#[test]
fn issue26_7_under_codex_a_find_of_the_117_github_tools_stays_within_12000_bytes() {
    let Some(corpus) = corpus() else { return };
    let list = corpus.join("toolslists/github-mcp-server/tools-list.all-snaps-117.json");
    let home = tempfile::tempdir().unwrap();
    let mut c = lazy_proxy(home.path(), &list, &["--lazy-tools", "--client", "codex"]);
    let found = call(
        &mut c,
        "mcp_budget_find_tools",
        json!({"query": "pull request issue repository", "limit": 20}),
    );
    let all = texts(&found).join("\n");
    assert!(all.len() <= 12_000, "{} bytes", all.len());
    let note = texts(&found)
        .into_iter()
        .find(|t| t.contains("mcp_budget_read"))
        .expect("a note says what was left out");
    let handle = note
        .split('"')
        .find(|s| s.starts_with("listed/mcp_budget_find_tools-"))
        .unwrap_or_else(|| panic!("a handle in {note}"));
    // every page of the full find stays within them too, and the pages end
    let (mut start, mut start_char) = (1, 0);
    for _ in 0..200 {
        let page = call(
            &mut c,
            "mcp_budget_read",
            json!({"handle": handle, "start_line": start, "start_char": start_char}),
        );
        assert_ne!(page["isError"], true, "{page}");
        let text = texts(&page).join("\n");
        assert!(text.len() <= 12_000, "{} bytes", text.len());
        let footer = text.lines().last().unwrap().to_string();
        let number = |key: &str| {
            footer.split(key).nth(1).map(|n| {
                let digits: String = n.chars().take_while(char::is_ascii_digit).collect();
                digits.parse::<usize>().unwrap()
            })
        };
        let Some(next) = number("start_line=") else {
            return;
        };
        (start, start_char) = (next, number("start_char=").unwrap_or(0));
    }
    panic!("the pages never ended");
}
