#!/usr/bin/env python3
"""TOON against JSON and against the shrink, on array-shaped results: the corpus's JSON
responses, the demo server's GitHub-shaped lists, and the GitHub API responses of the octokit
fixtures (as a server that returns them as a text block would). Each runs through
`mcp-budget replay` twice, with the policy's `toon` off (the default) and on.

    cargo build --release
    python3 scripts/toon-table.py [--budgets 8000,32000]

Prints a Markdown table: tokens as JSON, as TOON (the whole result, lossless), what the engine
returns within the budget without TOON and with it, and the strategy each time.
"""
import argparse
import importlib.util
import json
import pathlib
import subprocess
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
spec = importlib.util.spec_from_file_location("compare", ROOT / "scripts" / "compare-reference.py")
compare = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compare)
BIN = compare.BIN


def text_result(text):
    return json.dumps({"result": {"content": [{"type": "text", "text": text}]}})


def payloads(out):
    files = []
    for p in sorted((CORPUS / "responses").glob("*.jsonl")):
        result = json.loads(p.read_text().splitlines()[0])["result"]
        texts = [b.get("text", "") for b in result.get("content", [])]
        if any(t.lstrip().startswith(("[", "{")) for t in texts):
            files.append(str(p))
    for f in compare.demo_payloads(out):
        result = json.loads(pathlib.Path(f).read_text())["result"]
        if any(b.get("text", "").lstrip().startswith(("[", "{")) for b in result.get("content", [])):
            files.append(f)
    for name in ["paginate-issues", "search-issues", "labels", "release-assets", "project-cards"]:
        fixture = json.loads((CORPUS / "octokit-fixtures" / f"{name}.raw-fixture.json").read_text())
        lists = [r["response"] for r in fixture
                 if isinstance(r.get("response"), list) and len(r["response"]) >= 2]
        if not lists:
            continue
        body = max(lists, key=lambda b: len(json.dumps(b)))
        path = pathlib.Path(out) / f"octokit__{name}.jsonl"
        path.write_text(text_result(json.dumps(body, indent=2)))
        files.append(str(path))
    return files


def compact_variant(path, out):
    """The same result with each JSON text block compact (what the engine's strip stage sends
    when it has to cut): TOON is fairly compared with this, not with pretty-printed JSON."""
    result = json.loads(pathlib.Path(path).read_text().splitlines()[0])
    result = result.get("result", result)
    for b in result.get("content", []):
        t = b.get("text", "")
        if t.lstrip().startswith(("[", "{")):
            try:
                b["text"] = json.dumps(json.loads(t), separators=(",", ":"), ensure_ascii=False)
            except ValueError:
                pass
    p = pathlib.Path(out) / ("compact__" + pathlib.Path(path).name)
    p.write_text(json.dumps({"result": result}))
    return str(p)


def replay(path, budget, policy, spill):
    args = [str(BIN), "replay", path, "--budget", str(budget), "--spill-dir", spill, "--format", "json"]
    if policy:
        args += ["--policy", policy]
    return json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)["results"][0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--budgets", default="8000,32000", help="comma-separated budgets")
    opts = ap.parse_args()
    out = tempfile.mkdtemp(prefix="toon-table-")
    policy = pathlib.Path(out) / "toon.toml"
    policy.write_text("[policy]\ntoon = true\n")
    spill = str(pathlib.Path(out) / "spill")
    budgets = [int(b) for b in opts.budgets.split(",")]
    head = "".join(f" within {b:,}: TOON off | TOON on |" for b in budgets)
    print(f"| payload | JSON as sent | JSON compact | as TOON | TOON against compact |{head}")
    print("|---|---:|---:|---:|---:|" + "---|---|" * len(budgets))
    for f in payloads(out):
        cells = []
        for b in budgets:
            off = replay(f, b, None, spill)
            on = replay(f, b, str(policy), spill)
            cells += [f"{off['tokens_after']:,} {off['strategy']}", f"{on['tokens_after']:,} {on['strategy']}"]
        before, toon = off["tokens_before"], off.get("toon_tokens")
        compact = replay(compact_variant(f, out), 10**9, None, spill)["tokens_before"]
        saves = f"{100 * (compact - toon) / compact:+.0f}%".replace("+", "-", 1) if toon else "-"
        if toon and toon > compact:
            saves = f"+{100 * (toon - compact) / compact:.0f}% (larger)"
        name = pathlib.Path(f).name
        print(f"| {name} | {before:,} | {compact:,} | {f'{toon:,}' if toon else '- (no uniform array)'} | {saves} | "
              + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
