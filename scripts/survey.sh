#!/usr/bin/env bash
# The survey of real MCP servers (docs/survey.md): install every server of
# probes/survey/ at its pinned version into target/survey (npm and PyPI, one venv per Python
# server), make the local data its probes read (a git clone of this repository, web pages from
# the corpus served on 127.0.0.1, a SQLite file, an Excel file), audit them all in one run, and
# write reports/survey/. Servers that fail to install are listed in reports/survey/failures.md
# with the reason; servers that fail to start are in the report with theirs.
#
#     scripts/survey.sh            # about 10 minutes on 2 cores, most of it npm and pip
#     SURVEY_LAB=1 scripts/survey.sh     # and then measured in the real clients (below)
#     SURVEY_LAB=only scripts/survey.sh  # only the measured part (the survey's report stays)
#
# SURVEY_LAB measures in the lab (`mcp-budget lab`, README "The lab") what the servers' probe
# results become in the clients of SURVEY_LAB_CLIENTS (default claude-code, codex, gemini-cli,
# opencode; found in MCP_BUDGET_LAB_NPM, default target/lab-clients/node_modules): one audit
# `--client measured,ID` per client of the servers with probes, raw (reports/survey/measured/raw-ID)
# and with every server behind `mcp-budget proxy --client ID` (reports/survey/measured/proxy-ID);
# about 5 minutes a client. numbers.md gets their table.
#
# Needs node/npm, python3, git, and chromium for the browser servers (.ci/run installs it).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
survey=${SURVEY_DIR:-$root/target/survey}
out=${SURVEY_OUT:-$root/reports/survey}
port=${SURVEY_PORT:-8765}
mkdir -p "$survey/npm" "$survey/py" "$survey/data" "$out"
lab=${SURVEY_LAB:-}
[ "$lab" = only ] || rm -f "$out/audit.json"
failures=$(mktemp)

echo "== npm servers (pinned, one folder each, so no package gets another's dependencies)"
for file in probes/survey/*.toml; do
    pkg=$(sed -n 's/^# npm: //p' "$file")
    [ -n "$pkg" ] || continue
    dir="$survey/npm/$(basename "$file" .toml)"
    if [ -d "$dir/node_modules/${pkg%@*}" ]; then continue; fi
    mkdir -p "$dir"
    [ -f "$dir/package.json" ] || echo '{"private": true}' > "$dir/package.json"
    if ! log=$(cd "$dir" && PUPPETEER_SKIP_DOWNLOAD=1 npm install --no-audit --no-fund --save-exact "$pkg" 2>&1); then
        echo "| $pkg (npm) | $(echo "$log" | grep -m1 -i 'err' | cut -c1-160 | tr '|' '/') |" >> "$failures"
    fi
done

echo "== PyPI servers (pinned, one venv each)"
grep -h '^# pypi: ' probes/survey/*.toml | sed 's/^# pypi: //' | sort -u | while read -r venv spec; do
    dir="$survey/py/$venv"
    if [ -x "$dir/bin/python" ] && "$dir/bin/pip" show -q "${spec%%==*}" > /dev/null 2>&1; then continue; fi
    python3 -m venv "$dir"
    if ! log=$("$dir/bin/pip" install -q --disable-pip-version-check "$spec" 2>&1); then
        echo "| $spec (PyPI) | $(echo "$log" | tail -1 | cut -c1-160 | tr '|' '/') |" >> "$failures"
    fi
done

echo "== local data"
data="$survey/data"
if [ ! -d "$data/repo/.git" ]; then
    git clone -q "$root" "$data/repo"
fi
mkdir -p "$data/web"
for page in wikipedia wikipedia-2 guardian-1 engadget nytimes-5 google-sre-book-1; do
    cp "$root/../shared/corpus/readability-pages/$page.source.html" "$data/web/$page.html" 2>/dev/null || true
done
cp "$root/../shared/corpus/local-docs/"*.md "$data/" 2>/dev/null || true
python3 - "$data/shop.db" <<'PY'
import random, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("drop table if exists orders")
db.execute("create table orders (id integer primary key, customer text, item text, qty integer, price real, placed text)")
rng = random.Random(7)
items = ["usb-c hub", "wireless earbuds", "laptop stand", "hdmi cable", "webcam", "keyboard", "mouse"]
db.executemany("insert into orders values (?,?,?,?,?,?)", [
    (i, f"customer_{rng.randint(1, 400)}", rng.choice(items), rng.randint(1, 5),
     round(rng.uniform(5, 300), 2), f"2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}")
    for i in range(1, 5001)])
db.commit()
PY
if [ -x "$survey/py/excel/bin/python" ]; then
    "$survey/py/excel/bin/python" - "$data/sales.xlsx" <<'PY'
import random, sys
from openpyxl import Workbook
wb = Workbook(); ws = wb.active; ws.title = "Sales"
ws.append(["region", "month", "units", "revenue"])
rng = random.Random(7)
for region in ["north", "south", "east", "west"]:
    for month in range(1, 13):
        ws.append([region, month, rng.randint(10, 500), round(rng.uniform(1e3, 5e4), 2)])
wb.save(sys.argv[1])
PY
fi

echo "== web pages on 127.0.0.1:$port"
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$data/web" > /dev/null 2>&1 &
web=$!
trap 'kill $web 2>/dev/null; rm -f "$failures"' EXIT
for _ in $(seq 50); do (echo > "/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done

bin=${MCP_BUDGET_BIN:-$root/target/release/mcp-budget}
[ -x "$bin" ] || cargo build --release
status=0
if [ "$lab" != only ]; then
    echo "== audit"
    SURVEY_DIR="$survey" SURVEY_WEB="http://127.0.0.1:$port" \
        "$bin" audit probes/survey/*.toml --protocol auto --concurrency 6 --out "$out" --client all --spill-dir "$survey/spill" 2> "$out/audit.stderr" > "$out/audit.txt"
    status=$?
fi

if [ -n "$lab" ]; then
    clients=${SURVEY_LAB_CLIENTS:-claude-code,codex,gemini-cli,opencode}
    export MCP_BUDGET_LAB_NPM=${MCP_BUDGET_LAB_NPM:-$root/target/lab-clients/node_modules}
    measured="$out/measured"
    rm -rf "$measured"; mkdir -p "$measured"
    # the handshake era and 2 at a time: on a loaded machine a server slower than 10 s to answer
    # `server/discover` fails the `--protocol auto` handshake (the eras are the survey's part)
    measure() { # name, then the audit's --client list, then the probe generator's options
        local name=$1 which=$2; shift 2
        echo "== measured in the lab: $name ($which)"
        mkdir -p "$measured/$name"
        python3 scripts/survey-lab-probes.py "$survey/lab/$name" --bin "$bin" --web-port "$port" "$@"
        local start=$SECONDS
        SURVEY_DIR="$survey" SURVEY_WEB="http://127.0.0.1:$port" \
            "$bin" audit "$survey/lab/$name"/*.toml --protocol handshake-first --concurrency 2 --out "$measured/$name" \
            --client "measured,$which" --spill-dir "$survey/spill-$name" --no-charts \
            2> "$measured/$name/audit.stderr" > "$measured/$name/audit.txt" || status=$?
        echo "   $((SECONDS - start)) s"
    }
    for c in ${clients//,/ }; do # one client at a time: a failure stays its own
        measure "raw-$c" "$c"
        measure "proxy-$c" "$c" --proxy "$c"
    done
fi
{
    echo "# Servers that did not install"
    echo
    if [ -s "$failures" ]; then
        echo "| package | why |"; echo "|---|---|"; cat "$failures"
    else
        echo "Every package installed."
    fi
} > "$out/failures.md"
python3 scripts/survey-analysis.py "$out/audit.json" > "$out/numbers.md"
echo "audit exit $status; reports in $out"
