//! `proxy --lean-schemas`: the official Python SDK client lists the lean tools of every recorded
//! tool list in the corpus (313 tools), and tests/fixtures/lean_equivalence.py has the
//! `jsonschema` package judge generated instances against the lean and the original schemas:
//! they must agree on every one. The start-up line counts each transform.

use std::process::Command;

use serde_json::Value;

use crate::support::{bin_path, corpus, repo};

use super::python_sdk;

#[test]
fn lean_schemas_accept_exactly_what_the_originals_accept() {
    let (Some(python), Some(corpus)) = (python_sdk(), corpus()) else {
        return;
    };
    let mut lists: Vec<_> = ["toolslists/live", "toolslists/github-mcp-server"]
        .iter()
        .flat_map(|d| std::fs::read_dir(corpus.join(d)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    lists.sort();
    let got: Value = crate::support::run_json(
        Command::new(python)
            .arg(repo().join("tests/fixtures/lean_equivalence.py"))
            .arg(bin_path())
            .args(&lists),
    );
    assert_eq!(got["differ"], serde_json::json!([]), "{got}");
    assert!(got["tools"].as_u64().unwrap() > 300, "{got}");
    // half the real tools carry something the lean form drops
    assert!(got["changed"].as_u64().unwrap() > 100, "{got}");
    // the instances are not all rejected (or all accepted): both answers are tested
    let (n, yes) = (
        got["instances"].as_u64().unwrap(),
        got["accepted"].as_u64().unwrap(),
    );
    assert!(n > 20_000 && yes * 10 > n && yes * 10 < n * 9, "{got}");
    // and the comparison catches a schema that accepts more
    assert!(got["self_check"]["caught"].as_u64().unwrap() > 0, "{got}");

    // the start-up line says what each transform saved (git: pydantic's titles and nulls)
    let git = lists
        .iter()
        .find(|p| p.ends_with("git.tools-list.jsonl"))
        .unwrap();
    let out = Command::new(bin_path())
        .args(["proxy", "--lean-schemas", "--", "python3"])
        .arg(repo().join("tests/fixtures/toolslist_server.py"))
        .arg(git)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr.lines().next().unwrap();
    // "schema A -> B tokens per turn (lean schemas: N titles repeating names (-T), M null
    // defaults (-U); mcp_budget_read adds R)": the parts must add up to the whole, and the git
    // server's pydantic schemas have both kinds
    let number = |s: &str| s.replace(',', "").parse::<i64>().unwrap();
    let words: Vec<&str> = line
        .split([' ', '(', ')', ';'])
        .filter(|w| !w.is_empty())
        .collect();
    let at = |w: &str| words.iter().position(|x| *x == w).unwrap();
    let (before, after) = (number(words[at("->") - 1]), number(words[at("->") + 1]));
    let saved: i64 = words
        .iter()
        .filter_map(|w| w.strip_prefix('-').filter(|n| !n.is_empty() && *n != ">"))
        .map(number)
        .sum();
    let read = number(words[at("adds") + 1]);
    assert_eq!(before - saved + read, after, "{line}");
    assert!(
        line.contains("titles repeating names") && line.contains("null defaults"),
        "{line}"
    );
    assert!(saved > 0, "{line}");
}
