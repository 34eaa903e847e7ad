//! Fuzz the budget engine: any bytes become a tool result (see `input_from_bytes`), run at a
//! small budget into a per-process spill directory; every invariant in `invariants.rs` must hold.

#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

#[path = "../invariants.rs"]
#[allow(dead_code)]
mod invariants;

fn spill_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("mcp-budget-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary spill directory");
        dir
    })
}

fuzz_target!(|data: &[u8]| {
    invariants::fuzz_one(data, spill_dir());
});
