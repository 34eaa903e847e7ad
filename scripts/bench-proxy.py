#!/usr/bin/env python3
"""Whole-run benchmark of the proxy (not a test): the latency a call gains through
`mcp-budget proxy` over calling the demo server directly, p50 and p95, for a small result
(list_tickets, ~460 tokens) and a 237k-token one (scrape_as_markdown); and calls per second
through the proxy with 100 requests in flight. The telemetry column runs a second proxy with
telemetry on: spans and metrics over OTLP to a collector on 127.0.0.1 (a stand-in in this script
that takes every export and answers 200) and Prometheus metrics kept for --metrics-listen.
Run after `cargo build --profile dist` (what releases ship; else `--release`):

    python3 scripts/bench-proxy.py [ROUNDS]          (BENCH_LOG=1 also writes the call log)

Side by side with another build (the last main's, say), in one run, the two binaries' calls
interleaved so a slow moment of the machine falls on both alike:

    python3 scripts/bench-proxy.py [ROUNDS] --baseline OLD_BINARY [--binary NEW_BINARY]
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
# the released build (`cargo build --profile dist`) when there is one, else the release profile's
BIN = str(next((p for p in (ROOT / "target" / d / "mcp-budget" for d in ("dist", "release"))
                if p.exists()), ROOT / "target" / "release" / "mcp-budget"))


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


COLLECTOR = r"""
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
s = ThreadingHTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
"""


def collector():
    """An OTLP/HTTP endpoint that takes every export, in a process of its own (in this one it
    would hold the client's interpreter lock while it reads): its port."""
    p = subprocess.Popen([sys.executable, "-c", COLLECTOR], stdout=subprocess.PIPE)
    return p, int(p.stdout.readline())


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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


def compare(rounds, current, baseline):
    """Each binary's demo server called directly and through its own proxy, every round calling
    all four in turn; then each proxy's throughput, interleaved."""
    spill = tempfile.mkdtemp()
    sides = {}
    for name, binary in (("current", current), ("baseline", baseline)):
        sides[name] = {
            "direct": Client([binary, "demo-server"]),
            "proxy": Client([binary, "proxy", "--spill-dir", spill, "--", binary, "demo-server"]),
        }
    print(f"current: {current}\nbaseline: {baseline}\n")
    print("| result | binary | direct p50 ms | direct p95 ms | proxy p50 ms | proxy p95 ms "
          "| added p50 ms | added p95 ms |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for label, tool, args, n in [("list_tickets (464 tokens)", "list_tickets", {"limit": 5}, rounds),
                                 ("scrape_as_markdown (237k tokens)", "scrape_as_markdown", {}, max(20, rounds // 10))]:
        times = {(side, kind): [] for side in sides for kind in ("direct", "proxy")}
        for side in sides.values():
            for c in side.values():
                timed(c, tool, args, 5)
        for _ in range(n):
            for name, side in sides.items():
                for kind, c in side.items():
                    times[(name, kind)] += timed(c, tool, args, 1)
        row = {}
        for name in sides:
            d, p = times[(name, "direct")], times[(name, "proxy")]
            row[name] = [pct(d, 50), pct(d, 95), pct(p, 50), pct(p, 95),
                         pct(p, 50) - pct(d, 50), pct(p, 95) - pct(d, 95)]
            print(f"| {label} | {name} | " + " | ".join(f"{v:.2f}" for v in row[name]) + " |")
        diff = [a - b for a, b in zip(row["current"], row["baseline"])]
        print(f"| {label} | current - baseline | " + " | ".join(f"{v:+.2f}" for v in diff) + " |")
    rates = {name: [] for name in sides}
    for _ in range(5):
        for name, side in sides.items():
            t0 = time.perf_counter()
            for _ in range(10):
                side["proxy"].burst(100, {"name": "list_tickets", "arguments": {"limit": 5}})
            rates[name].append(1000 / (time.perf_counter() - t0))
    for name, r in rates.items():
        print(f"\n{name} proxy: {statistics.median(r):,.0f} calls/s "
              "(median of 5 x 1,000 small calls, 100 in flight)")
    for side in sides.values():
        for c in side.values():
            c.close()


def main():
    args = sys.argv[1:]
    binary = baseline = None
    for flag in ("--baseline", "--binary"):
        if flag in args:
            i = args.index(flag)
            if i + 1 >= len(args):
                sys.exit(f"{flag} needs a path")
            value = str(pathlib.Path(args[i + 1]).resolve())
            if not os.access(value, os.X_OK):
                sys.exit(f"{flag}: {value} is not an executable")
            if flag == "--baseline":
                baseline = value
            else:
                binary = value
            del args[i:i + 2]
    rounds = int(args[0]) if args else 200
    if baseline:
        compare(rounds, binary or BIN, baseline)
        return
    if binary:
        sys.exit("--binary compares with --baseline; alone, build target/release")
    spill = tempfile.mkdtemp()
    direct = Client([BIN, "demo-server"])
    # BENCH_LOG=1: with the call log on (its raw count runs after the answer)
    log = ["--log", str(pathlib.Path(spill) / "calls.jsonl")] if os.environ.get("BENCH_LOG") else []
    proxy = Client([BIN, "proxy", "--spill-dir", spill, *log, "--", BIN, "demo-server"])
    sink, port = collector()
    os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://127.0.0.1:{port}"
    traced = Client([BIN, "proxy", "--spill-dir", spill, *log, "--metrics-listen",
                     f"127.0.0.1:{free_port()}", "--", BIN, "demo-server"])
    del os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"]
    print("| result | direct p50 ms | direct p95 ms | proxy p50 ms | proxy p95 ms | added p50 ms "
          "| added p95 ms | telemetry on p50 ms | telemetry on p95 ms | telemetry adds p50 ms |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, tool, args, n in [("list_tickets (464 tokens)", "list_tickets", {"limit": 5}, rounds),
                                 ("scrape_as_markdown (237k tokens)", "scrape_as_markdown", {}, max(20, rounds // 10))]:
        for c in (direct, proxy, traced):
            timed(c, tool, args, 5)
        d, p, t = [], [], []
        # interleaved, so a slow moment of the machine falls on all three alike
        for _ in range(n):
            d += timed(direct, tool, args, 1)
            p += timed(proxy, tool, args, 1)
            t += timed(traced, tool, args, 1)
        print(f"| {label} | {pct(d, 50):.2f} | {pct(d, 95):.2f} | {pct(p, 50):.2f} | {pct(p, 95):.2f} "
              f"| {pct(p, 50) - pct(d, 50):.2f} | {pct(p, 95) - pct(d, 95):.2f} "
              f"| {pct(t, 50):.2f} | {pct(t, 95):.2f} | {pct(t, 50) - pct(p, 50):+.3f} |")
    # throughput: five bursts of 1,000 calls per proxy, interleaved; the median of each
    rates = {"direct": [], "proxy": [], "proxy, telemetry on": []}
    clients = {"direct": direct, "proxy": proxy, "proxy, telemetry on": traced}
    for _ in range(5):
        for label, client in clients.items():
            t0 = time.perf_counter()
            for _ in range(10):
                client.burst(100, {"name": "list_tickets", "arguments": {"limit": 5}})
            rates[label].append(1000 / (time.perf_counter() - t0))
    rates = {k: statistics.median(v) for k, v in rates.items()}
    for label, rate in rates.items():
        print(f"\n{label}: {rate:,.0f} calls/s (median of 5 x 1,000 small calls, 100 in flight)")
    share = rates["proxy, telemetry on"] / rates["proxy"] * 100
    print(f"\ntelemetry on: {share:.1f}% of the proxy's throughput")
    for c in (direct, proxy, traced):
        c.close()
    sink.terminate()


if __name__ == "__main__":
    main()
