#!/usr/bin/env bash
# The lean builds (issue 42): mcp-budget without its default features (`charts`, `telemetry`, `lab`)
# and with each alone is linted, the library's tests pass without them, and the lean binary
# audits the demo to the committed example's numbers, draws no chart, and says what it lacks
# when asked for it. Runs last in .ci/run: it leaves the lean binary in target/debug (the next
# `cargo build` relinks the default one).
set -euo pipefail
cd "$(dirname "$0")/.."
for features in "" charts telemetry lab; do
  echo "-- clippy, --no-default-features ${features:+--features $features}"
  cargo clippy --all-targets --locked --no-default-features ${features:+--features "$features"} -- -D warnings
done
echo "-- the library's tests without the default features"
cargo test --locked --no-default-features --lib -q
cargo build --locked --no-default-features
bin=target/debug/mcp-budget
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$bin" audit probes/demo.toml --out "$out/report" --width 120 \
  --baseline reports/example/audit.json --gate --max-regression-pct 0 > /dev/null
if [ -e "$out/report/charts" ]; then
  echo "the lean build wrote charts: $out/report/charts" >&2
  exit 1
fi
# each thing it was built without is a one-line error naming the feature (exit 2)
expect_error() {
  local want=$1
  shift
  local status=0
  "$@" > "$out/stdout" 2> "$out/stderr" || status=$?
  if [ "$status" -ne 2 ] || ! grep -q "$want" "$out/stderr"; then
    echo "expected exit 2 and \`$want\` from: $* (exit $status)" >&2
    cat "$out/stderr" >&2
    exit 1
  fi
}
: > "$out/calls.jsonl"
expect_error "built without charts" "$bin" stats "$out/calls.jsonl" --chart "$out/p95.svg"
expect_error "built without telemetry" "$bin" proxy --metrics-listen 127.0.0.1:0 -- true
expect_error "built without telemetry" "$bin" proxy --otlp -- true
expect_error "built without the lab" "$bin" lab probes/demo.toml
expect_error "built without the lab" "$bin" lab-server
expect_error "built without the lab" "$bin" audit probes/demo.toml --client measured --no-write
if "$bin" schema lab > /dev/null 2>&1; then
  echo "the lean build prints the lab report's schema, but has no lab" >&2
  exit 1
fi
size=$(stat -c %s "$bin")
echo "lean build: the demo audit as the example, no charts, no lab, clear errors (debug binary $size bytes)"
