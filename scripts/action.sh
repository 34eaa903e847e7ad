#!/usr/bin/env bash
# The steps of the GitHub Action (action.yml at the repository's root), one subcommand each:
#   prepare  the cache key of the binary (a hash of the sources it is built from) as the output
#            `key`, and ~/.cargo/bin on the PATH of the steps after it
#   install  the release binary of the action's own version (its sha256 checked) into
#            ~/.cargo/bin; where there is none, cargo install --locked of the action's own copy
#   run      audit with the gate, annotations, the job summary and the outputs; exits 0 (passed),
#            1 (the gate failed; 0 with report-only) or 2 (an error, also with report-only)
# The inputs come as MCP_BUDGET_ACTION_* environment variables, which action.yml maps from its
# inputs (never `${{ inputs.* }}` in shell code: a value would run as code). Needs bash 3.2 or
# later; the `deltas` output also needs jq or, without it, python3. docs/ci.md documents it.
set -euo pipefail

# A random delimiter: for $GITHUB_OUTPUT's multiline form and for ::stop-commands::.
random_token() {
  local t
  t=$(od -An -N16 -tx1 /dev/urandom 2>/dev/null | tr -d ' \n') || t=
  [ -n "$t" ] || t="$RANDOM$RANDOM$RANDOM$RANDOM$RANDOM$RANDOM"
  printf '%s' "$t"
}

# output NAME VALUE: a step output in the multiline form, with a delimiter the value cannot hold.
output() {
  [ -n "${GITHUB_OUTPUT:-}" ] || return 0
  local d
  d="MCP_BUDGET_$(random_token)"
  while [[ $2 == *"$d"* ]]; do d="MCP_BUDGET_$(random_token)"; done
  printf '%s<<%s\n%s\n%s\n' "$1" "$d" "$2" "$d" >> "$GITHUB_OUTPUT"
}

# Text as a workflow command's message: %, CR and LF escaped.
escape() {
  local s=$1
  s=${s//'%'/%25}
  s=${s//$'\r'/%0D}
  s=${s//$'\n'/%0A}
  printf '%s' "$s"
}

# summary LINE...: lines appended to the job summary, when the runner names one.
summary() {
  [ -n "${GITHUB_STEP_SUMMARY:-}" ] || return 0
  printf '%s\n' "$@" >> "$GITHUB_STEP_SUMMARY"
}

# fail STATUS MESSAGE: no verdict. One error annotation, the summary and the outputs say it.
fail() {
  printf '::error title=mcp-budget::%s\n' "$(escape "$2")"
  summary "### ⚠️ mcp-budget: no verdict (exit $1)" "" "$2" ""
  output verdict error
  output exit-code "$1"
  exit "$1"
}

# split NAME TEXT: TEXT's whitespace-separated words into the array NAME (no quotes, no globs).
split() {
  IFS=$' \t\n' read -r -d '' -a "$1" <<< "$2" || true
}

# sha256 of stdin, with the tool the system has.
sha256() {
  if command -v sha256sum > /dev/null 2>&1; then sha256sum; else shasum -a 256; fi | cut -d' ' -f1
}

prepare() {
  local root=${GITHUB_ACTION_PATH:?GITHUB_ACTION_PATH is not set} hash
  # everything `cargo install` builds from (probes/demo.toml is embedded in the binary)
  hash=$(cd "$root" && {
    find src probes -type f 2> /dev/null
    printf '%s\n' Cargo.toml Cargo.lock build.rs
  } | LC_ALL=C sort | while IFS= read -r f; do
    [ -f "$f" ] || continue
    printf '%s\n' "$f"
    cat -- "$f"
  done | sha256)
  # the runner image too (ubuntu-22.04 and 24.04 differ in glibc): a binary is restored only
  # where it was built
  output key "mcp-budget-${RUNNER_OS:-os}-${RUNNER_ARCH:-arch}-${ImageOS:-image}-${hash:0:32}"
  if [ -n "${GITHUB_PATH:-}" ]; then printf '%s\n' "$HOME/.cargo/bin" >> "$GITHUB_PATH"; fi
}

# The release target of this runner (a static musl build on Linux), or nothing.
release_target() {
  case "${RUNNER_OS:-}-${RUNNER_ARCH:-}" in
    Linux-X64) echo x86_64-unknown-linux-musl ;;
    Linux-ARM64) echo aarch64-unknown-linux-musl ;;
    macOS-X64) echo x86_64-apple-darwin ;;
    macOS-ARM64) echo aarch64-apple-darwin ;;
    Windows-X64) echo x86_64-pc-windows-msvc ;;
    *) return 1 ;;
  esac
}

# download BASE TARGET: the release binary of the action's own version into ~/.cargo/bin, its
# sha256 checked against the release's checksum file. 1: there is no such release (build it);
# a checksum that does not match fails the step (2): a changed asset is not run, nor replaced
# by a build.
download() {
  local url="$1/mcp-budget-$2.tar.gz" tmp want got exe=mcp-budget
  [ "${2#*windows}" = "$2" ] || exe=mcp-budget.exe
  tmp=$(mktemp -d)
  if ! curl -fsSL --retry 2 --max-time 120 -o "$tmp/release.tar.gz" "$url" 2> "$tmp/err" \
    || ! curl -fsSL --retry 2 --max-time 30 -o "$tmp/release.sha256" "$url.sha256" 2>> "$tmp/err"; then
    echo "mcp-budget: no release binary at $url ($(tr '\n' ' ' < "$tmp/err" | cut -c1-200)); building it with cargo"
    rm -rf -- "$tmp"
    return 1
  fi
  want=$(cut -d' ' -f1 < "$tmp/release.sha256")
  got=$(sha256 < "$tmp/release.tar.gz")
  if [ "$want" != "$got" ]; then
    rm -rf -- "$tmp"
    fail 2 "the release binary's sha256 is $got, its checksum file says $want ($url): not installed"
  fi
  tar -xzf "$tmp/release.tar.gz" -C "$tmp" "$exe" || fail 2 "no $exe in $url"
  mkdir -p "$HOME/.cargo/bin"
  cp -- "$tmp/$exe" "$HOME/.cargo/bin/$exe" && chmod 0755 "$HOME/.cargo/bin/$exe"
  rm -rf -- "$tmp"
  echo "mcp-budget: the release binary $url (sha256 $got)"
}

install() {
  local root=${GITHUB_ACTION_PATH:?GITHUB_ACTION_PATH is not set} version target base
  # the release binary of the action's own version where there is one
  version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -1)
  base=${MCP_BUDGET_ACTION_RELEASE_URL:-}
  if [ -z "$base" ] && [ -n "${GITHUB_ACTION_REPOSITORY:-}" ]; then
    base="${GITHUB_SERVER_URL:-https://github.com}/$GITHUB_ACTION_REPOSITORY/releases/download"
  fi
  if [ -n "$base" ] && [ -n "$version" ] && target=$(release_target) \
    && download "${base%/}/v$version" "$target"; then
    return 0
  fi
  # from the action's own folder (a rust-toolchain file of the caller's repository must not
  # pick the toolchain), without the caller's RUSTFLAGS (-Dwarnings is theirs, not ours);
  # --root: the binary lands where the cache step saves it, whatever CARGO_HOME says
  cd -- "$root" || fail 2 "the action's folder is missing: $root"
  env -u RUSTFLAGS -u CARGO_ENCODED_RUSTFLAGS \
    cargo install --locked --force --path "$root" --root "$HOME/.cargo"
}

# deltas GATE_JSON: each server's schema tax against the baseline, as compact JSON
# ({"server": {"before": N, "after": N, "delta": N, "pct": N}}); jq, else python3.
deltas() {
  if command -v jq > /dev/null 2>&1; then
    jq -c '[.changes[] | select(.subject == "server")
      | {key: .server, value: {before, after, delta, pct}}] | from_entries' "$1"
  elif command -v python3 > /dev/null 2>&1; then
    python3 - "$1" << 'EOF'
import json, sys
changes = json.load(open(sys.argv[1], encoding="utf-8"))["changes"]
print(json.dumps({c["server"]: {k: c[k] for k in ("before", "after", "delta", "pct")}
                  for c in changes if c["subject"] == "server"}, separators=(",", ":")))
EOF
  else
    return 127
  fi
}

run() {
  local probe_text=${MCP_BUDGET_ACTION_PROBE:-} baseline=${MCP_BUDGET_ACTION_BASELINE:-}
  local workdir=${MCP_BUDGET_ACTION_WORKING_DIRECTORY:-.} report_only
  case $(printf '%s' "${MCP_BUDGET_ACTION_REPORT_ONLY:-false}" | tr '[:upper:]' '[:lower:]') in
    true) report_only=true ;;
    false | '') report_only=false ;;
    *) fail 2 "report-only must be true or false, not '${MCP_BUDGET_ACTION_REPORT_ONLY}'" ;;
  esac
  command -v mcp-budget > /dev/null 2>&1 \
    || fail 2 "mcp-budget is not on PATH (with install: false, install it before this step)"
  cd -- "$workdir" 2> /dev/null || fail 2 "working-directory not found: $workdir"
  local probes=() thresholds=() args=() a
  split probes "$probe_text"
  split thresholds "${MCP_BUDGET_ACTION_THRESHOLDS:-}"
  split args "${MCP_BUDGET_ACTION_ARGS:-}"
  case ${MCP_BUDGET_ACTION_FAIL_ON:-} in
    '') ;;
    error | warning) thresholds+=(--fail-on "$MCP_BUDGET_ACTION_FAIL_ON") ;;
    *) fail 2 "fail-on must be error, warning or empty, not '${MCP_BUDGET_ACTION_FAIL_ON}'" ;;
  esac
  [ ${#probes[@]} -gt 0 ] || fail 2 "the probe input is empty: name a probe file or client config"
  for a in "${probes[@]}"; do
    [ -f "$a" ] || fail 2 "probe file not found: $a (in $PWD)"
  done
  if [ -n "$baseline" ] && [ ! -f "$baseline" ]; then
    fail 2 "baseline not found: $baseline (in $PWD)"
  fi
  for a in ${args[@]+"${args[@]}"}; do
    case $a in
      --max-response-bytes | --max-response-bytes=*) ;;  # an audit option, not a threshold
      --max-*) fail 2 "args: $a is a threshold: give it in the thresholds input" ;;
      --fail-on | --fail-on=*) fail 2 "args: $a is a threshold: give it in the fail-on input" ;;
      --baseline* | --gate | --exit-zero | --out | --out=* | --format* | --no-write)
        fail 2 "args: $a is set by the action (inputs baseline, report-only, out)" ;;
    esac
  done
  local out=${MCP_BUDGET_ACTION_OUT:-}
  [ -n "$out" ] || out="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/mcp-budget"
  mkdir -p -- "$out" 2> /dev/null && out=$(cd -- "$out" && pwd) \
    || fail 2 "out: cannot create the folder $out"
  # a report or verdict of an earlier run is never taken for this one's
  rm -f -- "$out/audit.json" "$out/gate.md" "$out/gate.json"

  local audit=(mcp-budget audit "${probes[@]}" --out "$out" --gate)
  [ -z "$baseline" ] || audit+=(--baseline "$baseline")
  audit+=(${thresholds[@]+"${thresholds[@]}"} ${args[@]+"${args[@]}"})
  # what the audit prints holds the servers' names: no workflow command is read from it
  local token status=0
  token=$(random_token)
  echo "::group::mcp-budget audit"
  echo "::stop-commands::$token"
  echo "mcp-budget: $(command -v mcp-budget) ($(mcp-budget --version))"
  echo "${audit[*]}"
  "${audit[@]}" || status=$?
  echo "::$token::"
  echo "::endgroup::"

  [ -f "$out/audit.json" ] && output report "$out/audit.json"
  if [ ! -f "$out/gate.json" ]; then
    [ "$status" -ne 0 ] || status=2
    fail "$status" "mcp-budget audit exited $status without a verdict: its messages above say why"
  fi

  # the annotations: the same judgement again (the probe files' [gate] tables, the same
  # thresholds), printed as workflow commands; the summary is gate.md, appended below
  local gate=(mcp-budget gate "$out/audit.json" --format github --exit-zero)
  [ -z "$baseline" ] || gate+=(--baseline "$baseline")
  for a in "${probes[@]}"; do
    # a client config has no [gate] table (and is not a probe file)
    if mcp-budget gate "$out/audit.json" --config "$a" --exit-zero --format json \
      > /dev/null 2>&1; then
      gate+=(--config "$a")
    fi
  done
  gate+=(${thresholds[@]+"${thresholds[@]}"})
  GITHUB_STEP_SUMMARY='' "${gate[@]}" \
    || echo "::warning title=mcp-budget::no annotations: mcp-budget gate exited $?"

  local verdict=failed markdown d
  grep -Eq '^  "passed": true,?$' "$out/gate.json" && verdict=passed
  markdown=$(cat "$out/gate.md")
  summary "$markdown" ""
  output verdict "$verdict"
  output exit-code "$status"
  output gate-markdown "$out/gate.md"
  output gate-json "$out/gate.json"
  output markdown "$markdown"
  if d=$(deltas "$out/gate.json"); then
    output deltas "$d"
  else
    echo "::warning title=mcp-budget::no deltas output: reading gate.json needs jq or python3"
  fi
  if [ "$status" -gt 1 ]; then
    printf '::error title=mcp-budget::%s\n' "mcp-budget audit exited $status: a server or probe \
could not be audited, or a file not written (its messages above say which)"
  fi
  if [ "$status" -eq 1 ] && [ "$report_only" = true ]; then
    echo "mcp-budget: the gate failed; report-only, so this step passes"
    status=0
  fi
  exit "$status"
}

case ${1:-} in
  prepare) prepare ;;
  install) install ;;
  run) run ;;
  *)
    echo "usage: $0 prepare|install|run (the steps of action.yml)" >&2
    exit 2
    ;;
esac
