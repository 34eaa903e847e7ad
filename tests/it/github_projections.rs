//! The built-in GitHub projections against real GitHub REST bodies (octokit fixtures): they
//! keep what a model acts on, in the expression's key order, and cut most of the tokens.

use mcp_budget::budget::{Policy, Projection};
use mcp_budget::ground::tokens::Tokenizer;
use serde_json::Value;

use crate::support::corpus;

/// The response bodies of one fixture whose request path contains `path_part`.
fn bodies(file: &str, path_part: &str) -> Option<Vec<Value>> {
    let dir = corpus()?;
    let text = std::fs::read_to_string(dir.join("octokit-fixtures").join(file)).ok()?;
    let all: Vec<Value> = serde_json::from_str(&text).ok()?;
    Some(
        all.into_iter()
            .filter(|e| {
                e["method"] == "get" && e["path"].as_str().is_some_and(|p| p.contains(path_part))
            })
            .map(|e| e["response"].clone())
            .collect(),
    )
}

fn projection(tool: &str) -> Projection {
    Policy::builtin()
        .for_tool(tool)
        .project
        .expect("a built-in projection")
}

#[test]
fn search_issues_projection_keeps_the_fields_in_order() {
    let Some(bodies) = bodies("search-issues.raw-fixture.json", "/search/issues") else {
        return;
    };
    assert!(!bodies.is_empty());
    for body in bodies {
        let out = projection("search_issues")
            .apply(&body)
            .expect("the projection fits the body");
        let keys: Vec<&String> = out.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["total_count", "incomplete_results", "items"]);
        let first = &out["items"][0];
        let item_keys: Vec<&String> = first.as_object().unwrap().keys().collect();
        assert_eq!(
            item_keys,
            [
                "number",
                "title",
                "state",
                "user",
                "labels",
                "comments",
                "created_at",
                "html_url"
            ]
        );
        assert_eq!(first["number"], body["items"][0]["number"]);
        assert_eq!(first["user"], body["items"][0]["user"]["login"]);
        let (before, after) = (
            Tokenizer::Cl100k.count(&body.to_string()),
            Tokenizer::Cl100k.count(&out.to_string()),
        );
        assert!(after * 4 < before, "{before} -> {after}");
    }
}

#[test]
fn list_issues_projection_fits_every_page() {
    let Some(pages) = bodies("paginate-issues.raw-fixture.json", "/issues") else {
        return;
    };
    let pages: Vec<Value> = pages.into_iter().filter(Value::is_array).collect();
    assert!(pages.len() >= 4, "{} pages", pages.len());
    for page in pages {
        let out = projection("list_issues")
            .apply(&page)
            .expect("the projection fits the page");
        let items = out.as_array().unwrap();
        assert_eq!(items.len(), page.as_array().unwrap().len());
        for (item, orig) in items.iter().zip(page.as_array().unwrap()) {
            assert_eq!(item["number"], orig["number"]);
            assert_eq!(item["title"], orig["title"]);
            assert!(item["user"].is_string());
        }
    }
}

/// Issue 38: the built-in projections are guesses from a tool's name, checked against the data
/// before they run. Every real GitHub body they are written for passes that check (the field
/// list knows GitHub's objects), so a guess never refuses GitHub's own data.
#[test]
fn real_github_bodies_fit_their_builtin_projections() {
    let cases = [
        (
            "search_issues",
            "search-issues.raw-fixture.json",
            "/search/issues",
        ),
        ("list_issues", "paginate-issues.raw-fixture.json", "/issues"),
    ];
    let mut checked = 0;
    for (tool, file, path) in cases {
        let Some(bodies) = bodies(file, path) else {
            return;
        };
        for body in bodies.iter().filter(|b| b.is_array() || b.is_object()) {
            let text = serde_json::to_string_pretty(body).unwrap();
            assert_eq!(projection(tool).misfit(&text), None, "{tool} on {file}");
            checked += 1;
        }
    }
    assert!(checked >= 2, "{checked}");
    // and the rows of issue 38, which only look like a list of issues, do not
    let rows = r#"[{"id": 1, "title": "Row 1", "state": "open", "amount": 2.5, "body": "b"}]"#;
    let why = projection("list_issues")
        .misfit(rows)
        .expect("not GitHub's shape");
    assert!(why.contains("the data has no `assignees`"), "{why}");
}
