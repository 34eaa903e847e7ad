#!/usr/bin/env python3
"""Compare mcp-budget's budget engine with the published Python algorithm
(../shared/bench/seed_reference.py) on the same payloads, budget and machine, in one go.

    python3 -m venv /tmp/refvenv && /tmp/refvenv/bin/pip install tiktoken jmespath
    cargo build --release
    /tmp/refvenv/bin/python scripts/compare-reference.py [--runs 7] [--budget 8000] [FILE...]
    /tmp/refvenv/bin/python scripts/compare-reference.py --shapes 7 --mb 1 [--no-corpus]

With no FILE, every payload of ../shared/corpus/responses is used. `--shapes SEED` adds the
payload shapes of scripts/shapes.py (prose, Markdown, an indented tree, HTML, JSON, a diff, a
log, CSV, one long line), generated from SEED at `--mb` MB each, so the numbers hold on
payloads nobody tuned for; `--demo` adds the demo server's probe results. Both sides report the
median time of one budget pass (the reference excludes its own extraction; mcp-budget's
`engine_us` is the engine pass alone). Prints a Markdown table with the ratio. `MCP_BUDGET_BIN` names another build to time.
"""
import argparse
import glob
import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
REFERENCE = ROOT.parent / "shared" / "bench" / "seed_reference.py"
BIN = pathlib.Path(os.environ.get("MCP_BUDGET_BIN", ROOT / "target" / "release" / "mcp-budget"))


def tool_of(path):
    """The tool a payload is named after, as `mcp-budget replay` takes it (`server__tool.jsonl`),
    so both sides apply their own projection for the same tool."""
    stem = os.path.basename(path).rsplit(".", 1)[0]
    return stem.split("__", 1)[1] if "__" in stem else stem


def reference(path, budget, runs, spill):
    out = subprocess.run(
        [sys.executable, str(REFERENCE), "--budget", str(budget), "--runs", str(runs), "--spill-dir", spill, path,
         tool_of(path)],
        check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def ours(path, budget, runs, spill):
    out = subprocess.run(
        [str(BIN), "replay", path, "--budget", str(budget), "--runs", str(runs), "--spill-dir", spill, "--format", "json"],
        check=True, capture_output=True, text=True).stdout
    return json.loads(out)["results"][0]


def demo_payloads(out):
    """The demo server's probe results (the binary's embedded payloads, shaped like the worst real
    ones: a search page with data-URI images and tracking links, GitHub search and pull request
    lists, a browser snapshot, a file as a resource, a screenshot), one response line a file."""
    rec = pathlib.Path(out) / "recording"
    subprocess.run([str(BIN), "audit", str(ROOT / "probes" / "demo.toml"), "--no-write", "--record", str(rec)],
                   check=True, capture_output=True)
    calls, files = {}, []
    for line in (rec / "demo.jsonl").read_text().splitlines():
        event = json.loads(line)
        msg = json.loads(event["line"])
        if event["dir"] == "sent" and msg.get("method") == "tools/call":
            calls[msg["id"]] = msg["params"]["name"]
        elif event["dir"] == "received" and msg.get("id") in calls and "result" in msg:
            path = pathlib.Path(out) / f"demo__{calls[msg['id']]}.jsonl"
            path.write_text(event["line"])
            files.append(str(path))
    return sorted(files)


def ms(value):
    return f"{value:.3f}" if value < 0.1 else f"{value:.2f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--budget", type=int, default=8000)
    ap.add_argument("--shapes", type=int, metavar="SEED", help="add the generated shapes")
    ap.add_argument("--mb", type=float, default=1.0, help="size of each generated shape")
    ap.add_argument("--no-corpus", action="store_true", help="only the files given and shapes")
    ap.add_argument("--demo", action="store_true", help="add the demo server's probe results")
    args = ap.parse_args()
    files = list(args.files)
    if not files and not args.no_corpus:
        files = sorted(glob.glob(str(ROOT.parent / "shared" / "corpus" / "responses" / "*.jsonl")))
    if args.shapes is not None:
        sys.path.insert(0, str(ROOT / "scripts"))
        import shapes
        out = tempfile.mkdtemp(prefix="compare-shapes-")
        for shape in shapes.SHAPES:
            files.append(str(shapes.write(out, shape, args.shapes, int(args.mb * 1_000_000))))
    if args.demo:
        files.extend(demo_payloads(tempfile.mkdtemp(prefix="compare-demo-")))
    spill = tempfile.mkdtemp(prefix="compare-spill-")
    print(f"| payload | tokens before | reference ms | reference strategy | mcp-budget ms | mcp-budget strategy | tokens after | speed-up |")
    print("|---|---:|---:|---|---:|---|---:|---:|")
    worst = None
    for f in files:
        ref = reference(f, args.budget, args.runs, spill)
        me = ours(f, args.budget, args.runs, spill)
        mine = me["engine_us"] / 1000.0
        ratio = ref["median_ms"] / mine if mine > 0 else float("inf")
        big = me["tokens_before"] > 50_000
        if big:
            worst = ratio if worst is None else min(worst, ratio)
        name = os.path.basename(f)
        print(f"| {name} | {me['tokens_before']:,} | {ms(ref['median_ms'])} | {ref['strategy']} | {ms(mine)} | {me['strategy']} "
              f"| {me['tokens_after']:,} | {ratio:.1f}x{' (>50k)' if big else ''} |")
    if worst is not None:
        print(f"\nslowest speed-up on payloads over 50k tokens: {worst:.1f}x")


if __name__ == "__main__":
    main()
