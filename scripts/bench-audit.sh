#!/usr/bin/env bash
# Whole-run comparison: does auditing 10 servers concurrently take about as long as the slowest
# one? Each server here is the demo over stdio behind a 1 s start-up delay (like npx), so the
# audit is bound by waiting, as real audits are. Also times the full demo probe set (CPU-bound
# counting of ~400k tokens per server) for 1 and 10 servers. Prints the median of N runs.
#   scripts/bench-audit.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
cargo build --release --quiet
bin=$PWD/target/release/mcp-budget
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

slow_servers() { # $1 = count
  for i in $(seq 1 "$1"); do
    printf '[servers.slow%s]\ncommand = "sh"\nargs = ["-c", "sleep 1; exec %s demo-server"]\n' "$i" "$bin"
    printf '[[servers.slow%s.probes]]\ntool = "list_tickets"\n[[servers.slow%s.probes]]\ntool = "get_forecast"\narguments = { city = "Oslo" }\n' "$i" "$i"
  done
}
full_demo() { # $1 = count
  for i in $(seq 1 "$1"); do
    sed -n '/^\[\[servers.demo.probes\]\]/,$p' probes/demo.toml | sed "s/servers\.demo\./servers.demo$i./"
    printf '[servers.demo%s]\nbuiltin = "demo"\n' "$i"
  done
}
slow_servers 1 > "$tmp/slow1.toml"; slow_servers 10 > "$tmp/slow10.toml"
full_demo 1 > "$tmp/full1.toml"; full_demo 10 > "$tmp/full10.toml"

median_ms() { # command...
  local times=()
  for _ in $(seq 1 "$runs"); do
    local t0 t1; t0=$(date +%s%N); "$@" > /dev/null 2>&1 || true; t1=$(date +%s%N)
    times+=($(( (t1 - t0) / 1000000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p"
}

printf '| run | median ms (%s runs) |\n|---|---:|\n' "$runs"
printf '| 1 slow stdio server | %s |\n' "$(median_ms "$bin" audit "$tmp/slow1.toml" --no-write)"
printf '| 10 slow stdio servers, --concurrency 10 | %s |\n' "$(median_ms "$bin" audit "$tmp/slow10.toml" --no-write --concurrency 10)"
printf '| 10 slow stdio servers, --concurrency 1 | %s |\n' "$(median_ms "$bin" audit "$tmp/slow10.toml" --no-write --concurrency 1)"
printf '| 1 full demo (10 probes) | %s |\n' "$(median_ms "$bin" audit "$tmp/full1.toml" --no-write)"
printf '| 10 full demos, --concurrency 10 | %s |\n' "$(median_ms "$bin" audit "$tmp/full10.toml" --no-write --concurrency 10)"
