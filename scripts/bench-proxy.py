#!/usr/bin/env python3
"""Whole-run benchmark of the proxy (not a test): the latency a call gains through
`mcp-budget proxy` over calling the demo server directly, p50 and p95, for a small result
(list_tickets, ~460 tokens) and a 237k-token one (scrape_as_markdown); and calls per second
through the proxy with 100 requests in flight. The telemetry column runs a second proxy with
telemetry on: spans and metrics over OTLP to a collector on 127.0.0.1 (a stand-in in this script
that takes every export and answers 200) and Prometheus metrics kept for --metrics-listen.
Run after `cargo build --profile dist` (what releases ship; else `--release`):

    python3 scripts/bench-proxy.py [ROUNDS]          (BENCH_LOG=1 also writes the call log)

Side by side with another build (the last main's, say), in one run:

    python3 scripts/bench-proxy.py [ROUNDS] --baseline OLD_BINARY [--binary NEW_BINARY]
        [--blocks N] [--baseline-env NAME=VALUE ...] [--binary-env NAME=VALUE ...]

Each build's demo server is called directly and through that build's own proxy (four
processes), every round calling all four once, the two builds' order alternating from round to
round (a slow moment of the machine, or being called first, falls on both alike); the rounds
run in N blocks (4) with new processes each (two processes of one build can differ by 0.05 ms
throughout: one pair of processes is not a measurement); then each build's calls per second,
directly and through the proxy, in alternating bursts. One table: baseline, current, the
difference, and a 95% interval of the difference (bootstrap over blocks and rounds; an interval
that spans 0 is noise). NEW_BINARY defaults to the build below (BIN). Run it once with the same
binary on both sides (an A/A run) to see this machine's noise; the --*-env flags give one side
an environment variable (MIMALLOC_ARENA_EAGER_COMMIT=2, say), so a run-time setting is compared
with no second build. The load average before and after is printed: on 2 cores a compile
doubles the small call (thread wake-ups are most of it).
"""
import json
import os
import pathlib
import random
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
    def __init__(self, argv, env=None):
        self.argv = argv
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env)
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
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError(f"{' '.join(self.argv)} ended before it answered {method}")
            msg = json.loads(line)
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


def interval(a, b, stat, n=400):
    """A 95% interval of stat(*b) - stat(*a). a and b are a build's samples as lists of
    blocks (one list of blocks per argument of stat), block k of both builds taken in the same
    stretch of time by processes of its own. Bootstrap in two stages: blocks drawn again with
    replacement (the same blocks for both builds), then each block's samples; so a process that
    happened to be slow or fast throughout counts as the chance it is. A fixed seed: the same
    samples give the same interval."""
    rng = random.Random(41)
    blocks = len(a[0])
    diffs = []
    for _ in range(n):
        picked = [rng.randrange(blocks) for _ in range(blocks)]
        again = lambda lists: [[x for k in picked for x in rng.choices(xs[k], k=len(xs[k]))]
                               for xs in lists]
        diffs.append(stat(*again(b)) - stat(*again(a)))
    diffs.sort()
    return diffs[int(0.025 * n)], diffs[int(0.975 * n) - 1]


def env_with(pairs):
    """This process's environment with NAME=VALUE pairs set (None: inherited as it is)."""
    if not pairs:
        return None
    env = dict(os.environ)
    for pair in pairs:
        name, _, value = pair.partition("=")
        env[name] = value
    return env


def describe(binary):
    st = os.stat(binary)
    built = time.strftime("%Y-%m-%d %H:%M", time.localtime(st.st_mtime))
    return f"{binary} (built {built}, {st.st_size / 1e6:.1f} MB)"


def compare(rounds, current, baseline, current_env=(), baseline_env=(), blocks=4):
    """Each build's demo server called directly and through its own proxy, every round calling
    all four once, the builds' order alternating by round (direct or proxy first by pairs of
    rounds); the rounds in `blocks` blocks, each with four new processes (one process can be
    slower than another of the same build throughout: blocks average that out, and the interval
    counts it); then calls per second of each, in bursts whose order alternates. One table of
    the two builds, their difference and its 95% interval."""
    builds = {"baseline": (baseline, baseline_env), "current": (current, current_env)}
    names, kinds = list(builds), ("direct", "proxy")
    results = [("list_tickets (464 tokens)", "list_tickets", {"limit": 5}, rounds),
               ("scrape_as_markdown (237k tokens)", "scrape_as_markdown", {}, max(20, rounds // 10))]
    blocks = max(1, min(blocks, rounds))
    print(f"baseline: {describe(baseline)}" + "".join(f" {e}" for e in baseline_env))
    print(f"current:  {describe(current)}" + "".join(f" {e}" for e in current_env))
    release = ROOT / "target" / "release" / "mcp-budget"
    if current == BIN and BIN != str(release) and release.exists() \
            and release.stat().st_mtime > os.stat(BIN).st_mtime:
        print(f"note: {release} is newer than {BIN}: give --binary to measure it")
    if baseline == current and list(baseline_env) == list(current_env):
        print("(the same build on both sides: an A/A run, its differences are this machine's noise)")
    load = os.getloadavg()
    print(f"load average at the start: {load[0]:.2f} (1 min), {os.cpu_count()} cores; "
          f"{rounds} rounds in {blocks} blocks of new processes\n")
    times = {label: {(name, kind): [[] for _ in range(blocks)] for name in names for kind in kinds}
             for label, *_ in results}
    rates = {(name, kind): [] for name in names for kind in kinds}
    small = {"name": "list_tickets", "arguments": {"limit": 5}}
    with tempfile.TemporaryDirectory() as spill:
        for block in range(blocks):
            order = names if block % 2 == 0 else names[::-1]
            sides = {}
            try:
                for name in order:
                    binary, pairs = builds[name]
                    env = env_with(pairs)
                    sides[name] = {
                        "direct": Client([binary, "demo-server"], env),
                        "proxy": Client([binary, "proxy", "--spill-dir", spill, "--", binary,
                                         "demo-server"], env),
                    }
                for label, tool, args, n in results:
                    # warm: the runtime's blocking threads started, the allocator's pages touched
                    for name in order:
                        for kind in kinds:
                            timed(sides[name][kind], tool, args, 20 if n == rounds else 3)
                    share = n // blocks + (block < n % blocks)
                    for i in range(share):
                        for name in (order if i % 2 == 0 else order[::-1]):
                            for kind in (kinds if i // 2 % 2 == 0 else kinds[::-1]):
                                times[label][(name, kind)][block] += \
                                    timed(sides[name][kind], tool, args, 1)
                # throughput: bursts of 1,000 small calls (100 in flight) per process, the
                # two builds' bursts back to back, which goes first alternating
                for burst in range(-(-5 // blocks)):
                    for kind in kinds:
                        for name in (order if burst % 2 == 0 else order[::-1]):
                            t0 = time.perf_counter()
                            for _ in range(10):
                                sides[name][kind].burst(100, small)
                            rates[(name, kind)].append(1000 / (time.perf_counter() - t0))
            finally:
                for side in sides.values():
                    for c in side.values():
                        try:
                            c.close()
                        except OSError:
                            pass
    print("| result | measured | baseline | current | current - baseline | 95% interval of the difference |")
    print("|---|---|---:|---:|---:|---:|")
    pooled = lambda lists: [x for xs in lists for x in xs]
    for label, *_ in results:
        t = times[label]
        rows = []
        for kind in kinds:
            for p in (50, 95):
                at = lambda xs, p=p: pct(xs, p)
                rows.append((f"{kind} p{p} ms", at, (t[("baseline", kind)],), (t[("current", kind)],)))
        for p in (50, 95):
            # what a call gains through the proxy, in each build
            added = lambda direct, proxy, p=p: pct(proxy, p) - pct(direct, p)
            rows.append((f"added by the proxy p{p} ms", added,
                         (t[("baseline", "direct")], t[("baseline", "proxy")]),
                         (t[("current", "direct")], t[("current", "proxy")])))
        for what, stat, a, b in rows:
            va, vb = stat(*map(pooled, a)), stat(*map(pooled, b))
            lo, hi = interval(a, b, stat)
            print(f"| {label} | {what} | {va:.2f} | {vb:.2f} | {vb - va:+.2f} | {lo:+.2f} .. {hi:+.2f} |")
    for kind in kinds:
        a, b = rates[("baseline", kind)], rates[("current", kind)]
        paired = sorted((y / x - 1) * 100 for x, y in zip(a, b))
        print(f"| list_tickets, 100 in flight | {kind} calls/s (median of {len(a)} x 1,000) "
              f"| {statistics.median(a):,.0f} | {statistics.median(b):,.0f} "
              f"| {(statistics.median(b) / statistics.median(a) - 1) * 100:+.1f}% "
              f"| {paired[0]:+.1f}% .. {paired[-1]:+.1f}% (each pair of bursts) |")
    load = os.getloadavg()
    print(f"\nload average at the end: {load[0]:.2f} (1 min)")


def main():
    args = sys.argv[1:]
    opts = {}
    envs = {"--baseline-env": [], "--binary-env": []}
    i = 0
    rest = []
    while i < len(args):
        flag = args[i]
        if flag in ("--baseline", "--binary", "--baseline-env", "--binary-env", "--blocks"):
            if i + 1 >= len(args):
                sys.exit(f"{flag} needs a value")
            value = args[i + 1]
            if flag == "--blocks":
                if not value.isdigit() or int(value) < 1:
                    sys.exit(f"--blocks takes a whole number of 1 or more, not {value!r}")
                opts[flag] = int(value)
            elif flag in envs:
                if "=" not in value or value.startswith("="):
                    sys.exit(f"{flag} takes NAME=VALUE, not {value!r}")
                envs[flag].append(value)
            else:
                value = str(pathlib.Path(value).resolve())
                if not os.access(value, os.X_OK):
                    sys.exit(f"{flag}: {value} is not an executable")
                opts[flag] = value
            i += 2
        elif flag.startswith("-"):
            sys.exit(f"unknown flag {flag} (see the top of {pathlib.Path(__file__).name})")
        else:
            rest.append(flag)
            i += 1
    rounds = int(rest[0]) if rest else 200
    baseline, binary = opts.get("--baseline"), opts.get("--binary")
    if baseline:
        compare(rounds, binary or BIN, baseline, envs["--binary-env"], envs["--baseline-env"],
                opts.get("--blocks", 4))
        return
    if binary or "--blocks" in opts or envs["--baseline-env"] or envs["--binary-env"]:
        sys.exit("--binary, --blocks and the --*-env flags compare with --baseline; "
                 "alone, build target/release")
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
