#!/usr/bin/env python3
"""What the model gets, side by side in one run (issue 38): every payload at every budget through
mcp-budget's engine, the seed's published algorithm (../shared/bench/seed_reference.py) and each
client's own cut (the profiles, through `mcp-budget replay --compare`), judged the same way.

    python3 -m venv /tmp/refvenv && /tmp/refvenv/bin/pip install tiktoken==0.14.0 jmespath
    cargo build --release
    /tmp/refvenv/bin/python scripts/quality-bench.py [--budgets 2000,8000,25000] [--seed 7] [--quick]
    # and headroom's SmartCrusher as a contender (it runs offline; it takes no budget):
    python3 -m venv /tmp/hrvenv && /tmp/hrvenv/bin/pip install headroom-ai==0.42.0
    /tmp/refvenv/bin/python scripts/quality-bench.py --headroom-python /tmp/hrvenv/bin/python
    # and mcp-compressor's shrinkfit as a contender (offline: scripts/quality-bench-server.py is its backend):
    python3 -m venv /tmp/mcvenv && /tmp/mcvenv/bin/pip install mcp-compressor==0.38.2
    /tmp/refvenv/bin/python scripts/quality-bench.py --compressor-python /tmp/mcvenv/bin/python

Payloads: the corpus's real results (../shared/corpus/responses) and shapes generated from the
seed (lists of flat and nested objects, lists of lists, a few huge items, a 60,000-row list,
long prose, Markdown, logs, HTML, CSV, one long line, base64 in prose, JSON beside prose).
Before any contender runs, K facts (needles) are planted at seeded places of each payload (in
string values of a JSON text, as lines of prose), and every contender gets the same bytes.

For each payload, budget and contender:
- fill: tokens sent (cl100k_base) over the budget, for a payload over the budget;
- items: whole items of the payload's main list found in the view;
- fidelity: scalars of the view that are in no item of the original (a cut number, a cut string
  without a mark, an invented null); for a view that is not JSON, a stop inside a number;
- validity: a JSON payload's view is JSON, or says it is a preview; else it counts as invalid;
- needles: planted facts the view shows (and "within the budget": only views that hold the
  budget count, since a view over it is not what the model gets at that budget), and (engine,
  seed, mcp-compressor) how many its spilled original (mcp-compressor: its `full=true` call) holds;
- time: the engine's pass (`engine_us`) and the seed's `budget_text` call, median of 3.

mcp-compressor gets the budget in characters (its `shrinkfit` unit): budget x the payload's own
wire characters per token (see `compressor_chars`); the rule is printed under the first table.

Prints two Markdown tables (per contender and budget; per payload at 8,000 for the engine and
the seed) and writes every row to OUT/quality.json. `MCP_BUDGET_BIN` names another build.
"""
import argparse
import glob
import importlib.util
import json
import os
import pathlib
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
BIN = pathlib.Path(os.environ.get("MCP_BUDGET_BIN", ROOT / "target" / "release" / "mcp-budget"))
sys.path.insert(0, str(ROOT / "scripts"))
import shapes  # noqa: E402  (scripts/shapes.py: the seeded text shapes)


def load_seed():
    """The seed's published algorithm, imported from the shared bench (not copied)."""
    spec = importlib.util.spec_from_file_location("seed_reference", SHARED / "bench" / "seed_reference.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.setup_tiktoken_cache()
    return mod


SEED = load_seed()
import tiktoken  # noqa: E402  (after the seed pointed tiktoken at its offline ranks)

ENC = tiktoken.get_encoding("cl100k_base")


def ntok(text):
    return len(ENC.encode(text, disallowed_special=()))


# ---- payloads ---------------------------------------------------------------------------------
def words(rng, n):
    return " ".join(rng.choice(["alpha", "beta", "gamma", "delta", "budget", "token", "server", "result"]) for _ in range(n))


def json_shapes(rng):
    flat = [{"id": i, "name": f"item {i}", "price": round(rng.random() * 1000, 2), "ok": i % 3 == 0,
             "note": words(rng, 8)} for i in range(4000)]
    nested = [{"number": i, "title": words(rng, 6), "user": {"login": f"u{i % 50}", "id": 1000 + i},
               "labels": [{"name": rng.choice(["bug", "docs", "perf"]), "color": "ff0000"} for _ in range(3)],
               "body": words(rng, 40), "closed_at": None if i % 2 else "2026-11-30T10:00:00Z"} for i in range(1500)]
    table = [[i, f"row {i}", round(rng.random() * 1e6, 3), words(rng, 5)] for i in range(6000)]
    huge = {"total": 3, "items": [{"id": k, "text": words(rng, 20000)} for k in range(2)] + [{"id": 2, "text": "short"}]}
    rows60k = [{"id": i, "title": f"Row {i} title words", "state": "open" if i % 3 == 0 else "closed",
                "amount": float(f"{i * 7}.{i % 100:02d}"), "body": words(rng, 12)} for i in range(60000)]
    wrapped = {"total_count": 3187, "incomplete_results": False, "items": nested[:600]}
    return {
        "list_flat": json.dumps(flat),
        "list_nested": json.dumps(nested, indent=2),
        "list_of_lists": json.dumps(table),
        "few_huge_items": json.dumps(huge),
        "rows_60k": json.dumps(rows60k),
        "object_with_list": json.dumps(wrapped),
    }


def text_shapes(seed, mb):
    size = int(mb * 1_000_000)
    out = {name: shapes.text(name, seed, size) for name in ["prose", "markdown", "log", "html", "csv", "one_line"]}
    rng = random.Random(seed)
    blob = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") for _ in range(200_000))
    out["base64_in_prose"] = shapes.text("prose", seed + 1, size // 2) + "\n\ndata:image/png;base64," + blob + "\n\n" + shapes.text("prose", seed + 2, size // 4)
    return out


def plant(text, k, rng):
    """`text` with k facts planted; the facts."""
    facts = [f"needle-{rng.randrange(16**6):06x}-{i:02d}" for i in range(k)]
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        value = None
    if isinstance(value, (list, dict)):
        spots = []

        def walk(v, path):
            if isinstance(v, dict):
                for key, c in v.items():
                    walk(c, path + [key])
            elif isinstance(v, list):
                for i, c in enumerate(v):
                    walk(c, path + [i])
            elif isinstance(v, str):
                spots.append(path)
        walk(value, [])
        if not spots:
            return text, []
        facts = facts[:min(k, len(spots))]
        for fact, path in zip(facts, rng.sample(spots, len(facts))):
            node = value
            for p in path[:-1]:
                node = node[p]
            node[path[-1]] = f"{node[path[-1]]} {fact}"
        indent = 2 if "\n  " in text[:200] else None
        return json.dumps(value, indent=indent, ensure_ascii=False), facts
    lines = text.split("\n")
    for fact in facts:
        lines.insert(rng.randrange(len(lines) + 1), f"{fact} is a planted fact.")
    return "\n".join(lines), facts


def response_line(text):
    return json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}]}}, ensure_ascii=False)


# ---- judging ----------------------------------------------------------------------------------
LABELS = ("[mcp-budget]", "[budget-proxy]", "truncated", "Truncated", "saved to", "Output too large", "exceeds",
          "automatically shrunk")
# Marks a contender puts in place of what it left out (mcp-compressor's shrinkfit): a cut string's
# tail `…[+N chars]`, a list's `"…[N items omitted]"`, an object's `"…": "N keys omitted"`. A cut
# string with its mark is no violation (like one ending in `…`); the other two are counted as marks.
CUT_MARK = re.compile(r"…\[\+\d+ chars\]$")
OMISSION_MARK = re.compile(r"^(…\[\d+ items omitted\]|\d+ keys omitted)$")
# mcp-compressor's footer: a second text block, or a "truncation" key added to a JSON object.
COMPRESSOR_NOTE = re.compile(r'\n\{"truncation":\{"message":"This tool response has been automatically shrunk[\s\S]*$')
COMPRESSOR_KEY = re.compile(r',"truncation":\{"message":"This tool response has been automatically shrunk'
                            r'[^"]*","report":\{[^{}]*\}\}(\}\s*)$')


def canon(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def parse_exact(text):
    """The JSON value of `text` with numbers as their source text, or None."""
    try:
        return json.loads(text, parse_float=lambda s: ("#n", s), parse_int=lambda s: ("#n", s))
    except (json.JSONDecodeError, RecursionError, ValueError):
        return None


def scalars(v, out):
    if isinstance(v, dict):
        for c in v.values():
            scalars(c, out)
    elif isinstance(v, list) and not (len(v) == 2 and v[0] == "#n"):
        for c in v:
            scalars(c, out)
    elif isinstance(v, list):
        out.append(("n", v[1]))
    else:
        out.append(("s" if isinstance(v, str) else "o", v))


def main_list(v):
    if isinstance(v, list):
        return v
    if isinstance(v, dict):
        lists = [c for c in v.values() if isinstance(c, list)]
        return max(lists, key=len) if lists else None
    return None


class Original:
    def __init__(self, text):
        self.text = text
        self.value = parse_exact(text) if text.lstrip()[:1] in ("{", "[") else None
        self.is_json = self.value is not None and isinstance(self.value, (list, dict))
        self.items = main_list(self.value) if self.is_json else None
        self.item_texts = {canon(i) for i in self.items} if self.items else set()
        sc = []
        if self.is_json:
            scalars(self.value, sc)
        self.nums = {x for k, x in sc if k == "n"}
        self.strs = [x for k, x in sc if k == "s"]
        self.str_set = set(self.strs)
        self.others = {canon(x) for k, x in sc if k == "o"}


def body_of(view):
    """The view without mcp-budget's note block (or mcp-compressor's footer)."""
    view = COMPRESSOR_KEY.sub(r"\1", COMPRESSOR_NOTE.sub("", view))
    return re.sub(r"\n?\[mcp-budget\] This result was reduced[\s\S]*$", "", view)


def judge(orig, view, tokens, budget, before, facts, spilled=None):
    body = body_of(view)
    row = {"tokens": tokens, "fill": round(tokens / budget, 4) if before > budget else None}
    got = parse_exact(body) if orig.is_json and body.lstrip()[:1] in ("{", "[") else None
    labelled = any(l in view for l in LABELS)
    if orig.is_json:
        row["json"] = "valid" if got is not None else ("preview" if labelled else "INVALID")
    violations, marks = [], 0
    if got is not None:
        lst = main_list(got)
        row["items"] = sum(1 for i in (lst or []) if canon(i) in orig.item_texts) if orig.items is not None else None
        sc = []
        scalars(got, sc)
        for k, x in sc:
            if k == "n" and x not in orig.nums:
                violations.append(f"number {x}")
            elif k == "s" and x not in orig.str_set and OMISSION_MARK.match(x):
                marks += 1
            elif k == "s" and x not in orig.str_set:
                cut = CUT_MARK.search(x)
                head = x[:-1] if x.endswith("…") else (x[:-3] if x.endswith("...") else (x[:cut.start()] if cut else None))
                if head is None or not any(s.startswith(head) for s in orig.strs):
                    violations.append(f"string {x[:30]!r}")
            elif k == "o" and canon(x) not in orig.others:
                violations.append(f"{canon(x)} not in the data")
    else:
        if orig.items is not None:
            row["items"] = sum(1 for t in orig.item_texts if t in body) if len(orig.item_texts) < 20000 else None
        common = os.path.commonprefix([orig.text, body])
        n = len(common)
        if 0 < n < len(orig.text) and common[-1:].isdigit() and (orig.text[n].isdigit() or orig.text[n] in ".eE"):
            violations.append("preview stops inside a number")
    row["violations"] = len(violations)
    row["first_violation"] = violations[0] if violations else None
    if marks:
        row["marks"] = marks
    row["needles"] = sum(1 for f in facts if f in view)
    row["planted"] = len(facts)
    if spilled is not None:
        row["reachable"] = sum(1 for f in facts if f in view or f in spilled)
    return row


# ---- contenders -------------------------------------------------------------------------------
def run_engine(path, budget, spill, tool):
    out = subprocess.run([str(BIN), "replay", str(path), "--budget", str(budget), "--tool", tool, "--runs", "3",
                          "--spill-dir", spill, "--format", "json"], capture_output=True, text=True, check=True)
    r = json.loads(out.stdout)["results"][0]
    text = "\n".join(b.get("text", "") for b in r["result"]["content"] if isinstance(b, dict))
    spilled = pathlib.Path(r["spill_path"]).read_text(errors="replace") if r.get("spill_path") else ""
    return r, text, spilled


def run_clients(path, budget, spill, tool):
    out = subprocess.run([str(BIN), "replay", str(path), "--budget", str(budget), "--tool", tool, "--compare",
                          "--needles", "0", "--spill-dir", spill, "--format", "json"],
                         capture_output=True, text=True, check=True)
    return [v for v in json.loads(out.stdout)["results"][0]["views"] if v["contender"] != "mcp-budget"]


HEADROOM = """
import json, sys, time
from headroom.transforms.smart_crusher import smart_crush_tool_output
text = open(sys.argv[1], encoding="utf-8").read()
times = []
for _ in range(3):
    t = time.perf_counter()
    out, _, info = smart_crush_tool_output(text)
    times.append((time.perf_counter() - t) * 1000)
json.dump({"text": out, "ms": sorted(times)[1], "info": info}, open(sys.argv[2], "w"))
"""


def run_headroom(python, text, work):
    src, dst = pathlib.Path(work) / "in.txt", pathlib.Path(work) / "out.json"
    src.write_text(text, encoding="utf-8")
    subprocess.run([python, "-c", HEADROOM, str(src), str(dst)], check=True, capture_output=True)
    return json.loads(dst.read_text())


# mcp-compressor (Atlassian, PyPI) run in its own Python: one in-process session (bridge=False) per
# character budget in front of scripts/quality-bench-server.py (a stdio MCP server returning the
# payload), then a session without shrinkfit for the pass-through time. `invoke` returns what its
# HTTP bridge `/exec` would: the one text block itself, or the CallToolResult as JSON when there are
# more blocks (shrinkfit adds one with its note, and `_meta.truncation`); the view is what its
# stdio frontend sends the model in `tools/call`: the text blocks, joined by "\n" like the engine's.
COMPRESSOR = """
import json, statistics, sys, time
from mcp_compressor.core import BackendConfig, CompressedSessionConfig, start_compressed_session
server, payload, tool, budgets, dst = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), sys.argv[5]

def view(raw):
    try:
        r = json.loads(raw)
    except ValueError:
        return raw
    if isinstance(r, dict) and isinstance(r.get("content"), list) and set(r) <= {"content", "isError", "_meta", "structuredContent"}:
        return "\\n".join(b.get("text", "") for b in r["content"] if isinstance(b, dict))
    return raw

out = {}
for chars in budgets + [None]:
    cfg = CompressedSessionConfig(compression_level="medium", shrinkfit=chars, toonify=False, bridge=False)
    session = start_compressed_session(cfg, [BackendConfig(name="bench", command_or_url=sys.executable,
                                                           args=[server, payload, tool])])
    try:
        wrapper = next(t["name"] for t in session.list_tools() if t["name"].endswith("invoke_tool"))
        call = {"tool_name": tool, "tool_input": {}}
        times, raw, error = [], "", None
        for _ in range(3):
            t = time.perf_counter()
            try:
                raw = session.invoke(wrapper, call)
            except Exception as e:  # shrinkfit can refuse ("could not fit ... in budget"): the model gets an error
                error = raw = f"{type(e).__name__}: {e}"
            times.append((time.perf_counter() - t) * 1000)
        meta = None
        try:  # shrinkfit's note: in _meta (more blocks), or a "truncation" key it added to a JSON object
            r = json.loads(raw)
            meta = (r.get("_meta") or {}).get("truncation") or r.get("truncation")
        except (ValueError, AttributeError):
            pass
        if not (isinstance(meta, dict) and str(meta.get("message", "")).startswith("This tool response has been")):
            meta = None
        full = session.invoke(wrapper, dict(call, full=True)) if chars and not error else ""
        out[str(chars)] = {"text": view(raw), "ms": statistics.median(times), "error": error,
                           "report": (meta or {}).get("report"), "full": full}
    finally:
        session.close()
json.dump(out, open(dst, "w"))
"""


def compressor_chars(text, before, budget):
    """shrinkfit's budget in characters for a budget in tokens: the budget times this payload's own
    characters per cl100k token as shrinkfit counts them (its budget covers the serialized
    CallToolResult, the text JSON-escaped in a text block), never below its minimum of 1,024."""
    wire = json.dumps({"content": [{"type": "text", "text": text}], "isError": False},
                      ensure_ascii=False, separators=(",", ":"))
    return max(1024, round(budget * len(wire) / max(before, 1)))


def run_compressor(python, text, tool, chars):
    with tempfile.TemporaryDirectory(prefix="quality-compressor-") as work:
        src, dst = pathlib.Path(work) / "payload.txt", pathlib.Path(work) / "compressor.json"
        src.write_text(text, encoding="utf-8")
        tool = re.sub(r"[^A-Za-z0-9_-]", "_", tool)[:64] or "result"
        subprocess.run([python, "-c", COMPRESSOR, str(ROOT / "scripts" / "quality-bench-server.py"), str(src), tool,
                        json.dumps(sorted(set(chars))), str(dst)], check=True, capture_output=True)
        return json.loads(dst.read_text())


def cuts_in_numbers(orig_text, view):
    """shrinkfit's `…[+N chars]` cuts that fall inside a number of the original (a timestamp's
    seconds, an amount): the kept digits are followed by more digits (or a decimal point) there."""
    body = view
    if view.startswith('"'):  # a text result comes back as one JSON string
        try:
            body = json.loads(body_of(view))
        except (json.JSONDecodeError, TypeError):
            pass
    n = 0
    for m in re.finditer(r"…\[\+\d+ chars\]", body):
        left = body[max(0, m.start() - 40):m.start()].rsplit("]", 1)[-1].rsplit('"', 1)[-1]
        if len(left) >= 8 and left[-1].isdigit():
            at = orig_text.find(left)
            if at >= 0 and at + len(left) < len(orig_text) and (orig_text[at + len(left)].isdigit()
                                                                 or orig_text[at + len(left)] == "."):
                n += 1
    return n


def keys_dropped(orig, view):
    """Objects of the view's main list that lack a key every item of the original has, with no
    `"…": "N keys omitted"` saying so (shrinkfit drops keys silently on some shapes)."""
    got = parse_exact(body_of(view)) if orig.is_json else None
    lst = main_list(got) if got is not None else None
    if not lst or not orig.items or not all(isinstance(i, dict) for i in orig.items):
        return 0
    common = set.intersection(*(set(i) for i in orig.items))
    return sum(1 for i in lst if isinstance(i, dict) and "…" not in i and not common <= set(i))


def run_seed(text, budget, spill, tool):
    times = []
    for _ in range(3):
        t = time.perf_counter()
        out, strategy = SEED.budget_text(text, tool, {}, budget, spill)
        times.append((time.perf_counter() - t) * 1000)
    m = re.search(r"(/\S+)", out) if strategy == "spill" else None
    spilled = pathlib.Path(m.group(1)).read_text(errors="replace") if m and os.path.exists(m.group(1)) else ""
    return out, strategy, statistics.median(times), spilled


# ---- main -------------------------------------------------------------------------------------
def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--budgets", default="2000,8000,25000")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--needles", type=int, default=8)
    ap.add_argument("--mb", type=float, default=0.3, help="size of each generated text shape")
    ap.add_argument("--quick", action="store_true", help="one budget (8,000), no corpus, fewer shapes")
    ap.add_argument("--out", default=str(ROOT / "target" / "quality"))
    ap.add_argument("--headroom-python", help="a Python with headroom-ai installed: its SmartCrusher is a contender")
    ap.add_argument("--compressor-python",
                    help="a Python with mcp-compressor installed: its shrinkfit (a character budget) is a contender")
    args = ap.parse_args()
    budgets = [8000] if args.quick else [int(b) for b in args.budgets.split(",")]
    out_dir = pathlib.Path(args.out)
    (out_dir / "payloads").mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    payloads = {}
    if not args.quick:
        for f in sorted(glob.glob(str(SHARED / "corpus" / "responses" / "*.jsonl"))):
            name = os.path.basename(f)[:-6]
            text = SEED.load_result(f)
            if text.strip():
                payloads[name] = text
    gen = json_shapes(rng)
    gen.update(text_shapes(args.seed, 0.1 if args.quick else args.mb))
    gen["json_beside_prose"] = gen["list_flat"][:200_000].rsplit("},", 1)[0] + "}]"
    if args.quick:
        gen = {k: gen[k] for k in ["list_flat", "list_nested", "few_huge_items", "prose", "log"]}
    payloads.update({f"shape__{k}": v for k, v in gen.items()})
    rows = []
    headroom, compressor = {}, {}
    started = time.time()
    for name, text in payloads.items():
        planted, facts = plant(text, args.needles, random.Random(f"{args.seed}:{name}"))
        path = out_dir / "payloads" / f"{name}.jsonl"
        path.write_text(response_line(planted) + "\n", encoding="utf-8")
        orig = Original(planted)
        before = ntok(planted)
        tool = name.split("__", 1)[1] if "__" in name else name
        for budget in budgets:
            spill_dir = tempfile.TemporaryDirectory(prefix="quality-spill-")
            spill = spill_dir.name
            r, view, spilled = run_engine(path, budget, spill, tool)
            row = judge(orig, view, ntok(view), budget, before, facts, spilled)
            row.update(contender="mcp-budget", strategy=r["strategy"], ms=r["engine_us"] / 1000)
            rows.append(dict(payload=name, budget=budget, before=before, **row))
            out, strategy, ms, seed_spill = run_seed(planted, budget, spill, tool)
            row = judge(orig, out, ntok(out), budget, before, facts, seed_spill)
            row.update(contender="seed", strategy=strategy, ms=ms)
            rows.append(dict(payload=name, budget=budget, before=before, **row))
            if args.headroom_python:
                h = headroom.get(name) or run_headroom(args.headroom_python, planted, spill)
                headroom[name] = h
                row = judge(orig, h["text"], ntok(h["text"]), budget, before, facts)
                row.update(contender="headroom", strategy=h["info"][:40], ms=h["ms"])
                rows.append(dict(payload=name, budget=budget, before=before, **row))
            if args.compressor_python:
                if name not in compressor:
                    chars = [compressor_chars(planted, before, b) for b in budgets]
                    compressor[name] = run_compressor(args.compressor_python, planted, tool, chars)
                chars = compressor_chars(planted, before, budget)
                c, plain = compressor[name][str(chars)], compressor[name]["None"]
                row = judge(orig, c["text"], ntok(c["text"]), budget, before, facts, c["full"])
                rep = c["report"]
                strategy = (f"error: {c['error'][-60:]}" if c["error"] else "passthrough" if not rep else
                            f"shrunk: -{rep['items_omitted']} items, -{rep['keys_omitted']} keys, "
                            f"{rep['strings_truncated']} cut")
                row.update(contender="mcp-compressor", strategy=strategy, ms=c["ms"], ms_passthrough=plain["ms"],
                           chars=chars, cuts_in_numbers=cuts_in_numbers(planted, c["text"]),
                           keys_dropped=keys_dropped(orig, c["text"]))
                rows.append(dict(payload=name, budget=budget, before=before, **row))
            for v in run_clients(path, budget, spill, tool):
                if v["contender"].endswith("behind mcp-budget") and budget != 8000:
                    continue
                row = judge(orig, v["text"], v["tokens"], budget, before, facts)
                row.update(contender=v["contender"], strategy=v["outcome"], ms=None)
                rows.append(dict(payload=name, budget=budget, before=before, **row))
            spill_dir.cleanup()
        print(f"{name}: {before:,} tokens ({time.time() - started:.0f} s)", file=sys.stderr)
    (out_dir / "quality.json").write_text(json.dumps(rows, indent=1))
    report(rows, budgets, time.time() - started)


def report(rows, budgets, seconds):
    order = []
    for r in rows:
        if r["contender"] not in order:
            order.append(r["contender"])
    print(f"\n{len({r['payload'] for r in rows})} payloads, budgets {', '.join(f'{b:,}' for b in budgets)}; {seconds:.0f} s\n")
    print("| contender | budget | results over it | median fill | fill < 90% | over the budget | whole items | fidelity violations | invalid JSON | needles inline | within the budget | needles reachable |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for c in order:
        for b in budgets:
            rs = [r for r in rows if r["contender"] == c and r["budget"] == b]
            if not rs:
                continue
            over = [r for r in rs if r["fill"] is not None]
            fills = [r["fill"] for r in over]
            items = sum(r.get("items") or 0 for r in over)
            reach = [r["reachable"] for r in rs if "reachable" in r]
            needles = f"{sum(r['needles'] for r in over)} of {sum(r['planted'] for r in over)}"
            # what the model gets at this budget: a view over it would not be sent as it is
            held = sum(r["needles"] for r in over if r["tokens"] <= b)
            print(f"| {c} | {b:,} | {len(over)} | {statistics.median(fills) * 100 if fills else 0:.0f}% | "
                  f"{sum(1 for f in fills if f < 0.9)} | {sum(1 for r in over if r['tokens'] > b)} | {items:,} | "
                  f"{sum(r['violations'] for r in rs)} | "
                  f"{sum(1 for r in rs if r.get('json') == 'INVALID')} | {needles} | {held} | "
                  f"{str(sum(reach)) + ' of ' + str(sum(r['planted'] for r in rs)) if reach else '-'} |")
    comp = [r for r in rows if r["contender"] == "mcp-compressor"]
    if comp:
        over = [r for r in comp if r["fill"] is not None]
        print(f"\nmcp-compressor 0.38.2 (shrinkfit, toonify off): budget in characters = budget in tokens x "
              "the payload's characters per cl100k token as shrinkfit counts them (the CallToolResult JSON, the "
              f"text escaped in it; min 1,024); {statistics.median(r['chars'] / r['budget'] for r in comp):.2f} "
              "characters a token in the median. Its view is the text blocks its frontend returns (its note block "
              "or the \"truncation\" key it adds to a JSON object is left out when judging JSON, as mcp-budget's "
              f"note is); needles reachable: in the view or in its `full=true` answer. {sum(r.get('marks', 0) for r in comp)} "
              f"omission marks (not counted as violations); {sum(r['cuts_in_numbers'] for r in comp)} `…[+N chars]` "
              f"cuts inside a number; {sum(r['keys_dropped'] for r in comp)} items with keys dropped unmarked; "
              f"{sum(1 for r in comp if r['strategy'].startswith('error'))} errors. Time: median of 3 "
              f"`invoke` calls, backend round trip included: {statistics.median(r['ms'] for r in over) if over else 0:.0f} ms "
              f"in the median over the budget, {statistics.median(r['ms_passthrough'] for r in comp):.0f} ms without shrinkfit.")
    print("\nAt 8,000 tokens, per payload over it: the engine and the seed\n")
    print("| payload | tokens | mcp-budget | fill | items | needles | ms | seed | fill | items | needles | ms |")
    print("|---|---:|---|---:|---:|---:|---:|---|---:|---:|---:|---:|")
    for p in dict.fromkeys(r["payload"] for r in rows):
        e = next((r for r in rows if r["payload"] == p and r["budget"] == 8000 and r["contender"] == "mcp-budget"), None)
        s = next((r for r in rows if r["payload"] == p and r["budget"] == 8000 and r["contender"] == "seed"), None)
        if not e or e["fill"] is None:
            continue
        cell = lambda r: (f"{r['strategy']} | {r['fill'] * 100:.0f}% | {r.get('items') if r.get('items') is not None else '-'} | "
                          f"{r['needles']} | {r['ms']:.2f}")
        print(f"| {p} | {e['before']:,} | {cell(e)} | {cell(s)} |")


if __name__ == "__main__":
    main()
