#!/usr/bin/env bash
# Install the conformance set of real MCP servers (tests/it/conformance.rs), pinned, into
# target/conformance (or $MCP_BUDGET_CONFORMANCE):
#   npm/            the npm servers, from tests/fixtures/conformance/package.json and its lock
#   venv/           PyPI servers on mcp 2.3 (time, git, fetch, markitdown-mcp)
#   venv-mcp1-early servers on mcp 1.8 with the libraries of May 2025 (duckdb 1.1.0, sqlite,
#                   time 0.6.2): a server of that age breaks on today's pydantic
#   venv-mcp1-late  mcp-server-calculator on mcp 1.30 (FastMCP of the 1.x SDK)
#   venv-fastmcp    mcp-server-motherduck on FastMCP 4 (the standalone fastmcp package)
# Each Python environment installs every package at the version its file in
# tests/fixtures/conformance/ names. Idempotent: a part whose pins did not change since it was
# installed is skipped. Needs npm, python3 and the npm registry and PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${MCP_BUDGET_CONFORMANCE:-target/conformance}
pins=tests/fixtures/conformance
mkdir -p "$dest"

# the pins a part was installed from, kept beside it: equal means there is nothing to do
stamp() { cat "$@" | sha256sum | cut -d' ' -f1; }
fresh() { [ -f "$1/.conformance-pins" ] && [ "$(cat "$1/.conformance-pins")" = "$2" ]; }

npm_dir=$dest/npm
want=$(stamp "$pins/package.json" "$pins/package-lock.json")
if fresh "$npm_dir" "$want"; then
  echo "conformance: npm servers already installed ($npm_dir)"
else
  echo "conformance: installing the npm servers into $npm_dir"
  mkdir -p "$npm_dir"
  cp "$pins/package.json" "$pins/package-lock.json" "$npm_dir/"
  # `npm install` on the lock, not `npm ci`: the lock lacks the other platforms' optional binaries
  # of kubernetes-mcp-server (not served here), which `npm ci` refuses
  (cd "$npm_dir" && npm install --no-audit --no-fund --loglevel=error)
  echo "$want" > "$npm_dir/.conformance-pins"
fi

for env in venv venv-mcp1-early venv-mcp1-late venv-fastmcp; do
  dir=$dest/$env
  want=$(stamp "$pins/$env.txt")
  if fresh "$dir" "$want"; then
    echo "conformance: $env already installed ($dir)"
    continue
  fi
  echo "conformance: installing $env into $dir"
  rm -rf "$dir"
  python3 -m venv "$dir"
  "$dir/bin/pip" install -q --disable-pip-version-check -r "$pins/$env.txt"
  echo "$want" > "$dir/.conformance-pins"
done
echo "conformance: installed in $dest"
