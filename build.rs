//! Writes into `OUT_DIR` what the binary embeds in a smaller form than its source:
//! - the rank tables of cl100k_base and o200k_base, packed (`src/ground/tokens/packed.rs`: each
//!   token its bytes or the two earlier tokens it joins; 0.48 MB and 0.97 MB, against 0.74 MB
//!   and 1.60 MB as bytes and 15 MB and 32 MB for a prebuilt serialized encoder). The ranks come
//!   from the `tiktoken-rs` crate's copies of OpenAI's rank files; each table's token count and
//!   the sha256 of its tokens are checked here, and so is that the packed table reads back to
//!   them, so a changed source fails the build instead of the counts;
//! - with the `charts` feature, the charts' DejaVu Sans deflated (0.38 MB, against 0.76 MB),
//!   inflated once when a chart is first drawn (`src/output/report/charts/font.rs`).

use std::collections::HashMap;
use std::path::PathBuf;

#[path = "src/ground/tokens/packed.rs"]
mod packed;

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
    println!("cargo::rerun-if-changed=src/ground/tokens/packed.rs");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    for table in &TABLES {
        let bpe = match table.name {
            "cl100k_base" => tiktoken_rs::cl100k_base(),
            _ => tiktoken_rs::o200k_base(),
        }
        .expect("tiktoken-rs builds its encodings");
        let tokens = tokens(&bpe, table.tokens);
        let mut blob = Vec::new();
        for token in &tokens {
            blob.push(u8::try_from(token.len()).expect("tokens are at most 255 bytes"));
            blob.extend_from_slice(token);
        }
        let sha = format!("{:x}", Sha256::digest(&blob));
        assert_eq!(sha, table.sha256, "{}: unexpected rank table", table.name);
        let packed = pack(&tokens);
        let (bytes, ends) = packed::unpack(&packed)
            .unwrap_or_else(|e| panic!("{}: the packed table: {}", table.name, e.0));
        assert_eq!(ends.len(), tokens.len(), "{}: token count", table.name);
        assert_eq!(bytes, tokens.concat(), "{}: packed table", table.name);
        std::fs::write(out.join(format!("{}.packed", table.name)), &packed)
            .expect("OUT_DIR is writable");
    }
    if std::env::var_os("CARGO_FEATURE_CHARTS").is_some() {
        write_font(&out);
    }
}

#[cfg(feature = "charts")]
fn write_font(out: &std::path::Path) {
    let font = dejavu::sans::regular();
    let deflated = miniz_oxide::deflate::compress_to_vec(font, 10);
    let back = miniz_oxide::inflate::decompress_to_vec(&deflated).expect("the font inflates");
    assert!(back == font, "the deflated font reads back");
    std::fs::write(out.join("DejaVuSans.ttf.deflate"), deflated).expect("OUT_DIR is writable");
}

#[cfg(not(feature = "charts"))]
fn write_font(_: &std::path::Path) {}

/// Tokens `0..tokens` in rank order.
fn tokens(bpe: &tiktoken_rs::CoreBPE, tokens: u32) -> Vec<Vec<u8>> {
    (0..tokens)
        .map(|rank| {
            bpe.decode_bytes(&[rank])
                .unwrap_or_else(|_| panic!("rank {rank} is missing"))
        })
        .collect()
}

/// The packed table (`packed.rs`): a token of five bytes or more that joins two earlier tokens
/// (the first split, from the left, whose halves both are) is written as their ranks.
fn pack(tokens: &[Vec<u8>]) -> Vec<u8> {
    let rank_of: HashMap<&[u8], u32> = tokens
        .iter()
        .enumerate()
        .map(|(r, t)| (t.as_slice(), u32::try_from(r).expect("under 2^32 tokens")))
        .collect();
    let total: usize = tokens.iter().map(Vec::len).sum();
    let mut out = Vec::new();
    out.extend_from_slice(&u32::try_from(total).expect("under 4 GiB").to_le_bytes());
    out.extend_from_slice(
        &u32::try_from(tokens.len())
            .expect("under 2^32")
            .to_le_bytes(),
    );
    for (rank, token) in tokens.iter().enumerate() {
        let earlier = |part: &[u8]| rank_of.get(part).copied().filter(|r| (*r as usize) < rank);
        let joined = (token.len() >= 5)
            .then(|| {
                (1..token.len()).find_map(|k| Some((earlier(&token[..k])?, earlier(&token[k..])?)))
            })
            .flatten();
        match joined {
            Some((a, b)) => {
                assert!(
                    a <= packed::MAX_RANK && b <= packed::MAX_RANK,
                    "ranks under 2^18"
                );
                out.push(0x80 | (a >> 14) as u8);
                out.extend_from_slice(&((a & 0x3fff) << 18 | b).to_be_bytes());
            }
            None => {
                assert!(
                    (1..=128).contains(&token.len()),
                    "tokens are 1 to 128 bytes"
                );
                out.push((token.len() - 1) as u8);
                out.extend_from_slice(token);
            }
        }
    }
    out
}
