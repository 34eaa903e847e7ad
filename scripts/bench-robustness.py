#!/usr/bin/env python3
"""Whole-run measurements for robustness (not a test): peak memory and time of an audit whose
one probe returns a 60 MB result (tests/fixtures/hostile_server.py `huge`), and of 50 demo
servers audited at once. Run after `cargo build --release`:

    python3 scripts/bench-robustness.py
"""
import pathlib
import resource
import subprocess
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
BIN = ROOT / "target" / "release" / "mcp-budget"
HOSTILE = ROOT / "tests" / "fixtures" / "hostile_server.py"


def run(args):
    """Run one child; return (seconds, peak RSS in MiB of that child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    secs = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # ru_maxrss of children is the max over all children so far: run the largest last
    return secs, max(before, after) / 1024


def main():
    tmp = pathlib.Path(tempfile.mkdtemp())
    fifty = tmp / "fifty.toml"
    fifty.write_text("".join(
        f'[servers.s{i:02}]\nbuiltin = "demo"\n[[servers.s{i:02}.probes]]\ntool = "list_tickets"\n' for i in range(50)))
    huge = tmp / "huge.toml"
    huge.write_text(f'[servers.huge]\ncommand = "python3"\nargs = ["{HOSTILE}", "huge"]\n'
                    '[[servers.huge.probes]]\ntool = "probe"\n')
    rows = [
        ("50 demo servers, --concurrency 50", [str(BIN), "audit", str(fifty), "--no-write", "--concurrency", "50"]),
        ("one 60 MB result (61 MB line)", [str(BIN), "audit", str(huge), "--no-write", "--spill-dir", str(tmp / "spill"), "--timeout", "300"]),
    ]
    print("| run | seconds | peak RSS MiB |\n|---|---:|---:|")
    for name, args in rows:
        secs, rss = run(args)
        print(f"| {name} | {secs:.2f} | {rss:.0f} |")


if __name__ == "__main__":
    main()
