//! Counting hot paths: a ~1 MB tool result, a 235-tool tools/list (built from the shared
//! corpus's real tool lists; skipped with a message when ../shared/corpus is absent), a 4 MB
//! text on one thread and on all cores, and what the first use of each encoding costs (its
//! lookup built from the embedded table).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use mcp_budget::ground::tokens::{Encoding, Tokenizer, TokenizerSet};
use mcp_budget::measure::{measure_result, measure_tools_pages};
use mcp_budget::wire::demo::payloads;

fn one_mb_result() -> String {
    let mut text = payloads::scrape_markdown("demo://shop/search?q=wireless+earbuds");
    while text.len() < 1_000_000 {
        text.push_str(&payloads::scrape_markdown("demo://shop/search?q=usb+c+hub"));
    }
    let mut cut = 1_000_000;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    serde_json::json!({"content": [{"type": "text", "text": text}]}).to_string()
}

/// 235 real tool definitions from the corpus, as one tools/list page.
fn tools_235() -> Option<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/toolslists");
    let mut tools: Vec<serde_json::Value> = Vec::new();
    for file in [
        "github-mcp-server/tools-list.all-snaps-117.json",
        "github-mcp-server/tools-list.default-toolsets-43.json",
    ] {
        let text = std::fs::read_to_string(dir.join(file)).ok()?;
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        tools.extend(v["tools"].as_array()?.iter().cloned());
    }
    for file in [
        "playwright-allcaps",
        "playwright",
        "filesystem",
        "everything",
    ] {
        let text =
            std::fs::read_to_string(dir.join(format!("live/{file}.tools-list.jsonl"))).ok()?;
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        tools.extend(v["result"]["tools"].as_array()?.iter().cloned());
    }
    tools.truncate(235);
    (tools.len() == 235).then(|| serde_json::json!({"tools": tools}).to_string())
}

fn bench(c: &mut Criterion) {
    let cl100k = TokenizerSet::default();
    let both = TokenizerSet::new(vec![Tokenizer::Cl100k, Tokenizer::O200k]);
    let result = one_mb_result();
    let mut g = c.benchmark_group("count");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(result.len() as u64));
    g.bench_function("result_1mb_cl100k", |b| {
        b.iter(|| measure_result(&result, &cl100k).unwrap())
    });
    g.bench_function("result_1mb_cl100k_o200k", |b| {
        b.iter(|| measure_result(&result, &both).unwrap())
    });
    match tools_235() {
        Some(list) => {
            g.throughput(Throughput::Bytes(list.len() as u64));
            g.bench_function("tools_list_235_cl100k", |b| {
                b.iter(|| measure_tools_pages(&[&list], &cl100k).unwrap())
            });
        }
        None => eprintln!("SKIP tools_list_235: ../shared/corpus/toolslists not found"),
    }
    let text: String = serde_json::from_str::<serde_json::Value>(&result).unwrap()["content"][0]
        ["text"]
        .as_str()
        .unwrap()
        .repeat(4);
    g.throughput(Throughput::Bytes(text.len() as u64));
    let cl = Encoding::cl100k();
    g.bench_function("text_4mb_cl100k_one_thread", |b| {
        b.iter(|| cl.count_on_this_thread(&text))
    });
    g.bench_function("text_4mb_cl100k_all_cores", |b| b.iter(|| cl.count(&text)));
    g.finish();

    let mut first = c.benchmark_group("first_use");
    first.sample_size(10);
    first.bench_function("build_cl100k", |b| b.iter(Encoding::build_cl100k));
    first.bench_function("build_o200k", |b| b.iter(Encoding::build_o200k));
    first.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
