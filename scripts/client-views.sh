#!/usr/bin/env bash
# What each client sees, on real servers: the run behind the per-client table of docs/clients.md.
# A long article served on 127.0.0.1 and snapshotted by Playwright's MCP server in Chromium,
# server-filesystem reading a 3,000-line log, server-everything's structured content and resource
# links. Needs the servers .ci/run installs (target/test-servers) and chromium.
#
#   scripts/client-views.sh [OUT_DIR]      # default target/client-views
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-target/client-views}")
bin=target/release/mcp-budget
servers=$PWD/target/test-servers/node_modules/.bin
work=$(mktemp -d)
trap 'kill $http 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$work/site" "$work/files"
python3 - "$work" <<'PY'
import sys, pathlib
work = pathlib.Path(sys.argv[1])
html = ["<!doctype html><html><head><title>Budgets</title></head><body><main><h1>Context budgets</h1>"]
for s in range(120):
    html.append(f"<h2>Section {s}: tool results</h2><ul>")
    html += [f'<li><a href="/docs/section-{s}/item-{l}?ref=nav&utm_source=test">Item {l} of section {s}</a></li>' for l in range(6)]
    html.append(f"</ul><p>Paragraph {s}: a client sends the model what the server returned, or a part of it, and the budget decides which part.</p>")
html.append("</main></body></html>")
(work / "site/index.html").write_text("".join(html))
(work / "files/access.log").write_text("".join(
    f"2026-12-01 05:{i // 60 % 60:02}:{i % 60:02} GET /api/items/{i} 200 {i % 89} ms\n" for i in range(3000)))
PY
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$work/site" > /dev/null 2>&1 &
http=$!
for _ in $(seq 50); do python3 -c "import socket; socket.create_connection(('127.0.0.1', $port))" 2>/dev/null && break; sleep 0.1; done
cat > "$work/probes.toml" <<TOML
[defaults]
timeout_secs = 180

[servers.playwright]
command = "$servers/playwright-mcp"
args = ["--headless", "--isolated", "--browser", "chromium", "--executable-path", "$(command -v chromium)", "--output-dir", "$work/pw"]

[[servers.playwright.probes]]
tool = "browser_navigate"
arguments = { url = "http://127.0.0.1:$port/" }

[[servers.playwright.probes]]
tool = "browser_snapshot"

[servers.files]
command = "$servers/mcp-server-filesystem"
args = ["$work/files"]

[[servers.files.probes]]
tool = "read_text_file"
arguments = { path = "$work/files/access.log" }

[servers.everything]
command = "$servers/mcp-server-everything"
args = ["stdio"]

[[servers.everything.probes]]
tool = "get-structured-content"
arguments = { location = "New York" }

[[servers.everything.probes]]
tool = "get-resource-links"
arguments = { count = 10 }
TOML
"$bin" audit "$work/probes.toml" --out "$out" --width 120 || [ $? -eq 1 ]
