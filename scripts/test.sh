#!/usr/bin/env bash
# `cargo test` with its skips said: a test that cannot run here (a real server, a browser or
# the corpus not installed) returns early and libtest counts it as passed, so each one writes
# itself to a ledger (tests/it/support.rs `skip`), listed here after libtest's summary.
# Arguments go to cargo test. Exit status: cargo's; under MCP_BUDGET_REQUIRE_REAL_SERVERS
# (.ci/run) a skip is a failure too.
set -uo pipefail
cd "$(dirname "$0")/.."
ledger=${MCP_BUDGET_SKIP_LOG:-target/test-skips.log}
mkdir -p "$(dirname "$ledger")"
rm -f "$ledger"
cargo test "$@"
status=$?
if [ -s "$ledger" ]; then
  n=$(wc -l < "$ledger")
  echo
  if [ -n "${MCP_BUDGET_REQUIRE_REAL_SERVERS:-}" ]; then
    echo "test result: $n test(s) could not run here, failures under MCP_BUDGET_REQUIRE_REAL_SERVERS:"
    [ "$status" -ne 0 ] || status=1
  else
    echo "test result: $n test(s) SKIPPED (counted as passed above; they could not run here):"
  fi
  sort "$ledger" | awk -F '\t' '{ printf "  %s: %s\n", $1, $2 }'
else
  echo
  echo "test result: 0 skipped"
fi
exit "$status"
