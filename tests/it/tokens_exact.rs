//! Every text file of the shared corpus counts the same with our BPE as with the `bpe-openai`
//! crate (a dev-dependency, itself equal to tiktoken), for both encodings; files of 1 MB and
//! more are counted on all cores, so the chunked count is checked on real text too.

use std::path::{Path, PathBuf};

use mcp_budget::ground::tokens::Encoding;

use crate::support::corpus;

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("the corpus is readable")
        .map(|e| e.expect("a readable entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

#[test]
fn corpus_counts_equal_the_oracle() {
    let Some(dir) = corpus() else {
        return;
    };
    let mut paths = Vec::new();
    files(&dir, &mut paths);
    let mut checked = 0;
    for path in &paths {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue; // not UTF-8 (images)
        };
        let pairs = [
            (Encoding::cl100k(), bpe_openai::cl100k_base()),
            (Encoding::o200k(), bpe_openai::o200k_base()),
        ];
        for (ours, oracle) in pairs {
            let expected = oracle.count(text.as_str());
            assert_eq!(ours.count(&text), expected, "{}", path.display());
        }
        checked += 1;
    }
    assert!(checked > 100, "only {checked} corpus files were text");
}
