//! The budget engine on each payload shape of `scripts/shapes.py` (prose, Markdown, an indented
//! accessibility tree, raw HTML, pretty and minified JSON, a diff, a log, CSV, one enormous
//! line), one criterion group per shape at 1 and 4 MB, budget 8,000: a pass whose work grows
//! with the budget reads about the same at both sizes.
//!
//! The payloads are the files `scripts/shapes.py` writes (seed 7), so the bench and the Python
//! comparison run the same bytes: they are read from `$MCP_BUDGET_SHAPES_DIR`, else
//! `target/shapes/bench/`, and made there with `python3` when absent. Without Python and without
//! the files, the bench says SKIP and measures nothing.

use std::path::{Path, PathBuf};
use std::process::Command;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mcp_budget::budget::{parse_result, CallInfo, Engine, Policy, SpillStore, DEFAULT_MAX_BYTES};
use mcp_budget::ground::tokens::Tokenizer;

const SHAPES: [&str; 10] = [
    "prose",
    "markdown",
    "yaml_tree",
    "html",
    "json_pretty",
    "json_min",
    "diff",
    "log",
    "csv",
    "one_line",
];
const SEED: u32 = 7;
const SIZES_MB: [u32; 2] = [1, 4];

fn root() -> PathBuf {
    std::env::var_os("MCP_BUDGET_SHAPES_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("target/shapes/bench"),
        PathBuf::from,
    )
}

/// The folder of `mb` MB payloads, made by `scripts/shapes.py` if it is not there yet; `None`
/// (after saying why) when it cannot be made.
fn payload_dir(mb: u32) -> Option<PathBuf> {
    let dir = root().join(format!("seed{SEED}-{mb}mb"));
    if SHAPES
        .iter()
        .all(|s| dir.join(format!("shape__{s}.jsonl")).exists())
    {
        return Some(dir);
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/shapes.py");
    let made = Command::new("python3")
        .arg(&script)
        .arg(&dir)
        .args(["--seed", &SEED.to_string(), "--mb", &mb.to_string()])
        .output();
    match made {
        Ok(out) if out.status.success() => Some(dir),
        Ok(out) => {
            let why = String::from_utf8_lossy(&out.stderr);
            eprintln!("SKIP shapes at {mb} MB: scripts/shapes.py failed: {why}");
            None
        }
        Err(e) => {
            eprintln!(
                "SKIP shapes at {mb} MB: python3 not found ({e}); run `python3 scripts/shapes.py {} --seed {SEED} --mb {mb}`",
                dir.display()
            );
            None
        }
    }
}

fn bench(c: &mut Criterion) {
    let spill = tempfile::tempdir().expect("temp dir");
    let engine = Engine::new(
        Policy::builtin(),
        Tokenizer::Cl100k,
        SpillStore::new(spill.path(), DEFAULT_MAX_BYTES),
    );
    let dirs: Vec<(u32, PathBuf)> = SIZES_MB
        .iter()
        .filter_map(|&mb| payload_dir(mb).map(|d| (mb, d)))
        .collect();
    for shape in SHAPES {
        let mut g = c.benchmark_group(format!("shape_{shape}"));
        g.sample_size(10);
        for (mb, dir) in &dirs {
            let text = std::fs::read_to_string(dir.join(format!("shape__{shape}.jsonl")))
                .expect("a payload scripts/shapes.py wrote");
            let result = parse_result(&text).expect("a JSON-RPC tool result");
            let call = CallInfo {
                server: "bench",
                tool: shape,
                raw: None,
                output_schema: false,
            };
            g.throughput(Throughput::Bytes(text.len() as u64));
            g.bench_with_input(
                BenchmarkId::from_parameter(format!("{mb}MB")),
                &result,
                |b, r| b.iter(|| engine.run(&call, r)),
            );
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
