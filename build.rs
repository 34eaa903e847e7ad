//! Writes the rank tables of cl100k_base and o200k_base into `OUT_DIR` in a compact form that
//! `src/tokens/tables.rs` embeds: every token in rank order as one length byte and its bytes
//! (0.7 MB and 1.6 MB, against 15 MB and 32 MB for a prebuilt serialized encoder). The ranks
//! come from the `tiktoken-rs` crate's copies of OpenAI's rank files; each table's token count
//! and sha256 are checked here, so a changed source fails the build instead of the counts.

use std::path::PathBuf;

use sha2::{Digest, Sha256};

struct Table {
    name: &'static str,
    tokens: u32,
    sha256: &'static str,
}

const TABLES: [Table; 2] = [
    Table {
        name: "cl100k_base",
        tokens: 100_256,
        sha256: "6bfd43f7b31b50b645b3228413547e662af1ae4801e9b192b9791680a71d650c",
    },
    Table {
        name: "o200k_base",
        tokens: 199_998,
        sha256: "bac143fe7fe950090c6e4ed9a2f80de5412a92495758b52becbbe5a7eea25ecb",
    },
];

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    for table in &TABLES {
        let bpe = match table.name {
            "cl100k_base" => tiktoken_rs::cl100k_base(),
            _ => tiktoken_rs::o200k_base(),
        }
        .expect("tiktoken-rs builds its encodings");
        let blob = compact(&bpe, table.tokens);
        let sha = format!("{:x}", Sha256::digest(&blob));
        assert_eq!(sha, table.sha256, "{}: unexpected rank table", table.name);
        std::fs::write(out.join(format!("{}.ranks", table.name)), &blob)
            .expect("OUT_DIR is writable");
    }
}

/// Tokens `0..tokens` in rank order, each as one length byte and its bytes.
fn compact(bpe: &tiktoken_rs::CoreBPE, tokens: u32) -> Vec<u8> {
    let mut blob = Vec::new();
    for rank in 0..tokens {
        let bytes = bpe
            .decode_bytes(&[rank])
            .unwrap_or_else(|_| panic!("rank {rank} is missing"));
        let len = u8::try_from(bytes.len()).expect("tokens are at most 255 bytes");
        blob.push(len);
        blob.extend_from_slice(&bytes);
    }
    blob
}
