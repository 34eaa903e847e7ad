//! The budget engine's hot path: the large corpus payloads at a budget of 8,000 tokens, and the
//! same kind of text at growing sizes to show the cost grows no faster than the payload (it is
//! bounded by the budget: only the preview's prefix is stripped and encoded); and one page of
//! `mcp_budget_read` from a 60 MB spill.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mcp_budget::budget::{parse_result, CallInfo, Engine, Policy, SpillStore, DEFAULT_MAX_BYTES};
use mcp_budget::ground::tokens::Tokenizer;
use mcp_budget::run::proxy::{read, ReadArgs};
use mcp_budget::wire::demo::payloads;
use serde_json::json;

fn engine(dir: &std::path::Path) -> Engine {
    Engine::new(
        Policy::builtin(),
        Tokenizer::Cl100k,
        SpillStore::new(dir, DEFAULT_MAX_BYTES),
    )
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let e = engine(dir.path());
    let mut g = c.benchmark_group("engine");
    g.sample_size(20);
    let corpus =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/responses");
    for name in [
        "fetch__nodefs_markdown_full",
        "fetch__wikipedia2_markdown_full",
        "filesystem__read_text_file_fs_md",
    ] {
        match std::fs::read_to_string(corpus.join(format!("{name}.jsonl"))) {
            Ok(text) => {
                let result = parse_result(&text).expect("a corpus response");
                let call = CallInfo {
                    server: "bench",
                    tool: name,
                    raw: None,
                    output_schema: false,
                };
                g.throughput(Throughput::Bytes(text.len() as u64));
                g.bench_function(name, |b| b.iter(|| e.run(&call, &result)));
            }
            Err(_) => eprintln!("SKIP {name}: ../shared/corpus not found"),
        }
    }
    g.finish();

    let mut g = c.benchmark_group("engine_scaling");
    g.sample_size(20);
    let page = payloads::scrape_markdown("demo://shop/search?q=wireless+earbuds");
    for copies in [1usize, 2, 4, 8] {
        let text = page.repeat(copies);
        let result = json!({"content": [{"type": "text", "text": text}]});
        let call = CallInfo {
            server: "bench",
            tool: "scrape",
            raw: None,
            output_schema: false,
        };
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(text.len()), &result, |b, r| {
            b.iter(|| e.run(&call, r))
        });
    }
    g.finish();

    // the way back: one mcp_budget_read page of a 60 MB spill, at its start and its middle
    let mut g = c.benchmark_group("read_page_60mb");
    g.sample_size(10);
    let text = page.repeat((60 << 20) / page.len() + 1);
    let lines = text.lines().count();
    let handle = e
        .store()
        .save("bench", "read", "md", text.as_bytes())
        .expect("spill written");
    drop(text);
    for (name, start) in [("first", 1), ("middle", lines / 2)] {
        let a = ReadArgs {
            handle: handle.id.clone(),
            start_line: Some(start),
            max_lines: None,
            grep: None,
            start_char: None,
        };
        g.bench_function(name, |b| {
            b.iter(|| read(e.store(), &a, 8000, Tokenizer::Cl100k).expect("a page"))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
