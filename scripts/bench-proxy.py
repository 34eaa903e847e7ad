#!/usr/bin/env python3
"""Whole-run benchmark of the proxy (not a test): the latency a call gains through
`mcp-budget proxy` over calling the demo server directly, p50 and p95, for a small result
(list_tickets, ~460 tokens) and a 237k-token one (scrape_as_markdown); and calls per second
through the proxy with 100 requests in flight. Run after `cargo build --release`:

    python3 scripts/bench-proxy.py [ROUNDS]          (BENCH_LOG=1 also writes the call log)
"""
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
BIN = str(ROOT / "target" / "release" / "mcp-budget")


class Client:
    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL)
        self.id = 0
        self.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "bench", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()

    def call(self, method, params):
        self.id += 1
        self.send({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params})
        while True:
            msg = json.loads(self.p.stdout.readline())
            if msg.get("id") == self.id:
                return msg

    def burst(self, n, params):
        start = self.id + 1
        for i in range(n):
            self.send({"jsonrpc": "2.0", "id": start + i, "method": "tools/call", "params": params})
        self.id += n
        seen = 0
        while seen < n:
            if "id" in json.loads(self.p.stdout.readline()):
                seen += 1

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def timed(client, tool, args, rounds):
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        client.call("tools/call", {"name": tool, "arguments": args})
        out.append((time.perf_counter() - t0) * 1000)
    return out


def pct(xs, p):
    xs = sorted(xs)
    return xs[max(0, min(len(xs) - 1, round(p / 100 * len(xs) + 0.5) - 1))]


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    spill = tempfile.mkdtemp()
    direct = Client([BIN, "demo-server"])
    # BENCH_LOG=1: with the call log on (its raw count runs after the answer)
    log = ["--log", str(pathlib.Path(spill) / "calls.jsonl")] if os.environ.get("BENCH_LOG") else []
    proxy = Client([BIN, "proxy", "--spill-dir", spill, *log, "--", BIN, "demo-server"])
    print(f"| result | direct p50 ms | direct p95 ms | proxy p50 ms | proxy p95 ms | added p50 ms | added p95 ms |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, tool, args, n in [("list_tickets (464 tokens)", "list_tickets", {"limit": 5}, rounds),
                                 ("scrape_as_markdown (237k tokens)", "scrape_as_markdown", {}, max(20, rounds // 10))]:
        timed(direct, tool, args, 5)
        timed(proxy, tool, args, 5)
        d, p = timed(direct, tool, args, n), timed(proxy, tool, args, n)
        print(f"| {label} | {pct(d, 50):.2f} | {pct(d, 95):.2f} | {pct(p, 50):.2f} | {pct(p, 95):.2f} "
              f"| {pct(p, 50) - pct(d, 50):.2f} | {pct(p, 95) - pct(d, 95):.2f} |")
    for label, client in [("direct", direct), ("proxy", proxy)]:
        t0 = time.perf_counter()
        for _ in range(10):
            client.burst(100, {"name": "list_tickets", "arguments": {"limit": 5}})
        secs = time.perf_counter() - t0
        print(f"\n{label}: {1000 / secs:,.0f} calls/s (1,000 small calls, 100 in flight)")
    direct.close()
    proxy.close()


if __name__ == "__main__":
    main()
