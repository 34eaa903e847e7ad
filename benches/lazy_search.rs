//! The lazy tools' search: the index over 2,350 real tool definitions (the corpus's tool lists,
//! each name taken ten times with a suffix) built once, and one plain-language query against
//! it. Skipped with a message when ../shared/corpus is absent.

use criterion::{criterion_group, criterion_main, Criterion};
use mcp_budget::run::proxy::Catalog;
use serde_json::Value;

fn corpus_tools() -> Option<Vec<Value>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/toolslists");
    let mut tools = Vec::new();
    for entry in std::fs::read_dir(dir.join("live")).ok()? {
        let text = std::fs::read_to_string(entry.ok()?.path()).ok()?;
        let v: Value = serde_json::from_str(text.lines().next()?).ok()?;
        tools.extend(v["result"]["tools"].as_array()?.iter().cloned());
    }
    let text = std::fs::read_to_string(dir.join("github-mcp-server/tools-list.all-snaps-117.json"))
        .ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    tools.extend(v["tools"].as_array()?.iter().cloned());
    Some(tools)
}

fn bench(c: &mut Criterion) {
    let Some(base) = corpus_tools() else {
        eprintln!("SKIP lazy_search: ../shared/corpus/toolslists not found");
        return;
    };
    let mut tools = Vec::new();
    for i in 0..10 {
        for t in &base {
            let mut t = t.clone();
            t["name"] = format!("{}_{i}", t["name"].as_str().unwrap_or("")).into();
            tools.push(t);
        }
    }
    tools.truncate(2_350);
    let mut g = c.benchmark_group("lazy_search");
    g.sample_size(20);
    g.bench_function("index_2350_tools", |b| {
        b.iter(|| Catalog::new(tools.clone()))
    });
    let catalog = Catalog::new(tools);
    g.bench_function("find_in_2350_tools", |b| {
        b.iter(|| {
            catalog
                .find_text("list open pull requests in a repository", 5)
                .0
        })
    });
    g.finish();
    retrieval(c);
}

/// Every request of benches/retrieval-queries.json against its own tool list (85 finds over six
/// real lists, the index of each built once).
fn retrieval(c: &mut Criterion) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let corpus = root.join("../shared/corpus");
    let Ok(set) = std::fs::read_to_string(root.join("benches/retrieval-queries.json")) else {
        return;
    };
    let set: Value = serde_json::from_str(&set).expect("the query set is JSON");
    let mut catalogs = std::collections::BTreeMap::new();
    for (name, path) in set["lists"].as_object().expect("lists") {
        let Ok(text) = std::fs::read_to_string(corpus.join(path.as_str().unwrap_or(""))) else {
            eprintln!("SKIP retrieval: ../shared/corpus not found");
            return;
        };
        let first: Value = serde_json::from_str(text.lines().next().unwrap_or(""))
            .or_else(|_| serde_json::from_str(&text))
            .expect("a tools/list");
        let page = if first.get("result").is_some() {
            &first["result"]
        } else {
            &first
        };
        let tools = page["tools"].as_array().cloned().unwrap_or_default();
        catalogs.insert(name.clone(), Catalog::new(tools));
    }
    let queries: Vec<(String, String)> = set["queries"]
        .as_array()
        .expect("queries")
        .iter()
        .map(|q| {
            (
                q["list"].as_str().unwrap_or("").to_string(),
                q["query"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    c.bench_function("lazy_search/retrieval_85_requests", |b| {
        b.iter(|| {
            queries
                .iter()
                .map(|(list, q)| catalogs[list].find_text(q, 3).1.len())
                .sum::<usize>()
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
