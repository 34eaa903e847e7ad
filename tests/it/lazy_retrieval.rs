//! Issue 30: the lazy tools' search on plain requests. Each of benches/retrieval-queries.json's
//! requests (written from what a user wants done, not from the descriptions) must bring back its
//! tool among the first three on the corpus's real tool lists: recall at 3 of at least 95%.
//! Recall at 1 and at 3 per list are printed (scripts/retrieval.sh runs this with the output
//! shown); the search's speed is benches/lazy_search.rs's.

use std::collections::BTreeMap;

use mcp_budget::run::proxy::ToolIndex;
use serde_json::Value;

use crate::support::{corpus, repo};

/// A recorded tools/list: `{"tools": [...]}` or JSON-RPC lines with a `result`.
fn tools_of(text: &str) -> Vec<Value> {
    let first: Value = serde_json::from_str(text.lines().next().unwrap_or(""))
        .unwrap_or_else(|_| serde_json::from_str(text).unwrap());
    let page = if first.get("result").is_some() {
        &first["result"]
    } else {
        &first
    };
    page["tools"].as_array().unwrap().clone()
}

/// Per list: requests, found first, found among the first three.
type PerList = BTreeMap<String, (usize, usize, usize)>;

/// Recall at 1 and at 3 per list, and every miss at 3.
pub fn recall() -> Option<(PerList, Vec<String>)> {
    let corpus = corpus()?;
    let set: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("benches/retrieval-queries.json")).unwrap(),
    )
    .unwrap();
    let mut per_list: PerList = BTreeMap::new();
    let mut misses = Vec::new();
    let mut indexes: BTreeMap<String, (Vec<Value>, ToolIndex)> = BTreeMap::new();
    for (name, path) in set["lists"].as_object().unwrap() {
        let text = std::fs::read_to_string(corpus.join(path.as_str().unwrap())).unwrap();
        let tools = tools_of(&text);
        let index = ToolIndex::new(&tools);
        indexes.insert(name.clone(), (tools, index));
    }
    for q in set["queries"].as_array().unwrap() {
        let list = q["list"].as_str().unwrap();
        let (tools, index) = &indexes[list];
        let want: Vec<&str> = q["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        let found: Vec<&str> = index
            .search(q["query"].as_str().unwrap(), 3)
            .iter()
            .map(|(i, _)| tools[*i]["name"].as_str().unwrap())
            .collect();
        let e = per_list.entry(list.to_string()).or_default();
        e.0 += 1;
        e.1 += usize::from(found.first().is_some_and(|f| want.contains(f)));
        let hit = found.iter().any(|f| want.contains(f));
        e.2 += usize::from(hit);
        if !hit {
            misses.push(format!(
                "{list}: {:?} -> {found:?}, wanted {want:?}",
                q["query"]
            ));
        }
    }
    Some((per_list, misses))
}

#[test]
fn plain_requests_find_their_tool_among_the_first_three() {
    let Some((per_list, misses)) = recall() else {
        return;
    };
    let (mut n, mut at1, mut at3) = (0, 0, 0);
    for (list, (q, a1, a3)) in &per_list {
        eprintln!(
            "{list}: {q} requests, recall@1 {:.1}%, recall@3 {:.1}%",
            100.0 * *a1 as f64 / *q as f64,
            100.0 * *a3 as f64 / *q as f64
        );
        n += q;
        at1 += a1;
        at3 += a3;
    }
    eprintln!(
        "all: {n} requests, recall@1 {:.1}%, recall@3 {:.1}%",
        100.0 * at1 as f64 / n as f64,
        100.0 * at3 as f64 / n as f64
    );
    for m in &misses {
        eprintln!("miss: {m}");
    }
    assert!(n >= 80, "{n}");
    assert!(at3 * 100 >= n * 95, "recall@3 {at3}/{n}: {misses:#?}");
}
