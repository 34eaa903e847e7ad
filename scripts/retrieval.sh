#!/usr/bin/env bash
# The lazy search's retrieval benchmark (issue 30): the plain requests of
# benches/retrieval-queries.json against the corpus's real tool lists, recall at 1 and at 3 per
# list and every miss, as the test that holds recall@3 at 95% or more computes them. Needs
# ../shared/corpus. The search's speed over the same requests: cargo bench --bench lazy_search.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --quiet --test it lazy_retrieval -- --nocapture 2>&1 | grep -E '^(all|github|playwright|filesystem|git|memory|everything|miss):' || true
