#!/usr/bin/env python3
"""Whole-run measurements for robustness (not a test): peak memory and time of an audit whose
one probe returns a 60 MB result (tests/fixtures/hostile_server.py `huge`: one 60 MB word, the
worst case for the tokenizer, and 60 MB of prose lines), and of 50 demo
servers audited at once. Run after `cargo build --release`:

    python3 scripts/bench-robustness.py
"""
import os
import pathlib
import subprocess
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
BIN = ROOT / "target" / "release" / "mcp-budget"
HOSTILE = ROOT / "tests" / "fixtures" / "hostile_server.py"


# runs `args` under a fresh Python so ru_maxrss is that one run's peak (for children it is the
# max over all children so far)
MEASURE = """
import resource, subprocess, sys, time
t0 = time.perf_counter()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
print(time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def run(args, env=None):
    """Run one child; return (seconds, peak RSS in MiB of that child)."""
    out = subprocess.run(["python3", "-c", MEASURE, *args], capture_output=True, text=True,
                         check=True, env=env).stdout.split()
    return float(out[0]), int(out[1]) / 1024


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
        ("one 60 MB result, one 60 MB word", [str(BIN), "audit", str(huge), "--no-write", "--spill-dir", str(tmp / "spill"), "--timeout", "300"]),
        ("one 60 MB result, prose", [str(BIN), "audit", str(huge), "--no-write", "--spill-dir", str(tmp / "spill2"), "--timeout", "300"], prose_env),
    ]
    print("| run | seconds | peak RSS MiB |\n|---|---:|---:|")
    for name, args, *env in rows:
        secs, rss = run(args, *env)
        print(f"| {name} | {secs:.2f} | {rss:.0f} |")


if __name__ == "__main__":
    main()
