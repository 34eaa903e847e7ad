#!/usr/bin/env python3
"""Whole-run measurements for robustness (not a test): peak memory and time of an audit whose
one probe returns a 60 MiB result (tests/fixtures/hostile_server.py `huge`: one 60 MiB word, the
worst case for the tokenizer, and 60 MiB of prose lines), and of 50 demo
servers audited at once. Run after `cargo build --release`:

    python3 scripts/bench-robustness.py
"""
import os
import pathlib
import subprocess
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
BIN = ROOT / "target" / "release" / "mcp-budget"
HOSTILE = ROOT / "tests" / "fixtures" / "hostile_server.py"


def run(args, env=None):
    """Run one child; return (seconds, its own peak RSS in MiB). The peak is the child's VmHWM,
    read from /proc while it runs (rusage's maxrss of children would also take in the MCP servers
    it starts, which hold the 60 MB result too)."""
    t0 = time.perf_counter()
    child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    peak_kb = 0
    while child.poll() is None:
        try:
            with open(f"/proc/{child.pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        peak_kb = max(peak_kb, int(line.split()[1]))
        except (FileNotFoundError, ProcessLookupError):
            pass
        time.sleep(0.01)
    return time.perf_counter() - t0, peak_kb / 1024


def main():
    tmp = pathlib.Path(tempfile.mkdtemp())
    fifty = tmp / "fifty.toml"
    fifty.write_text("".join(
        f'[servers.s{i:02}]\nbuiltin = "demo"\n[[servers.s{i:02}.probes]]\ntool = "list_tickets"\n' for i in range(50)))
    huge = tmp / "huge.toml"
    huge.write_text(f'[servers.huge]\ncommand = "python3"\nargs = ["{HOSTILE}", "huge"]\n'
                    '[[servers.huge.probes]]\ntool = "probe"\n')
    prose_env = dict(os.environ, HOSTILE_TEXT="prose")
    rows = [
        ("50 demo servers, --concurrency 50", [str(BIN), "audit", str(fifty), "--no-write", "--concurrency", "50"]),
        ("one 60 MiB result, one 60 MiB word", [str(BIN), "audit", str(huge), "--no-write", "--spill-dir", str(tmp / "spill"), "--timeout", "300"]),
        ("one 60 MiB result, prose", [str(BIN), "audit", str(huge), "--no-write", "--spill-dir", str(tmp / "spill2"), "--timeout", "300"], prose_env),
    ]
    print("| run | seconds | peak RSS MiB |\n|---|---:|---:|")
    for name, args, *env in rows:
        secs, rss = run(args, *env)
        print(f"| {name} | {secs:.2f} | {rss:.0f} |")


if __name__ == "__main__":
    main()
