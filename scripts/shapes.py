#!/usr/bin/env python3
"""Payload shapes for the engine benchmarks, made reproducibly from a seed.

    python3 scripts/shapes.py OUT_DIR [--seed 7] [--mb 1] [--shape NAME ...]

Writes one tool-result file per shape, `OUT_DIR/shape__<name>.jsonl`, each a JSON-RPC line
whose result holds the text as one text block (what `mcp-budget replay` and the Python
reference both read). The shapes are the ones real servers return that the corpus does not
cover well: prose, Markdown, an indented accessibility tree with long URLs, raw HTML,
pretty-printed and minified JSON, a diff of indented code, a log, CSV and one enormous line.
The same seed and size give the same bytes on every machine (no clock, no hash order).
"""
import argparse
import json
import pathlib
import random

WORDS = (
    "the of and to in is was for on that with as by at from his her it an were are which this "
    "be or has had not but their its one all been also can more who they new other first some "
    "time there would about year years when these only into after over most such between state "
    "during city under while world where known including later both through used since many "
    "however until part each then well before three became same number around against would've "
    "don't isn't they're we'll it's O'Brien café naïve Zürich 東京 данные résumé ½ 2026 1,234.56 "
    "v1.2.3 0x1F4A9 README.md src/lib.rs --budget=8000 foo_bar fooBar FOO_BAR"
).split()


def sentence(rng, lo=6, hi=18):
    words = [rng.choice(WORDS) for _ in range(rng.randint(lo, hi))]
    words[0] = words[0][:1].upper() + words[0][1:]
    return " ".join(words) + rng.choice([".", ".", ".", "?", "!", ";"])


def url(rng, long=False):
    path = "/".join(rng.choice(WORDS).strip(".,;'") or "x" for _ in range(rng.randint(2, 5)))
    query = ""
    if long:
        query = "?" + "&".join(
            f"k{i}={rng.getrandbits(64):016x}" for i in range(rng.randint(12, 30)))
    return f"https://example{rng.randint(1, 9)}.org/{path}{query}"


def prose(rng, size):
    out = []
    n = 0
    while n < size:
        p = " ".join(sentence(rng) for _ in range(rng.randint(2, 8)))
        out.append(p)
        n += len(p) + 2
    return "\n\n".join(out)


def markdown(rng, size):
    out = []
    n = 0
    while n < size:
        kind = rng.random()
        if kind < 0.1:
            block = "#" * rng.randint(1, 4) + " " + sentence(rng, 2, 6)
        elif kind < 0.35:
            block = "\n".join(
                f"{'  ' * rng.randint(0, 2)}- {sentence(rng, 3, 10)} [link]({url(rng)})"
                for _ in range(rng.randint(2, 8)))
        elif kind < 0.45:
            block = "```rust\n" + "\n".join(
                "    " * rng.randint(0, 3) + f"let x{i} = {rng.randint(0, 9999)}; // {rng.choice(WORDS)}"
                for i in range(rng.randint(3, 12))) + "\n```"
        elif kind < 0.5:
            block = "| a | b | c |\n|---|---|---|\n" + "\n".join(
                f"| {rng.choice(WORDS)} | {rng.randint(0, 10**6)} | {rng.choice(WORDS)} |"
                for _ in range(rng.randint(2, 10)))
        else:
            block = " ".join(sentence(rng) for _ in range(rng.randint(2, 6)))
        out.append(block)
        n += len(block) + 2
    return "\n\n".join(out)


def yaml_tree(rng, size):
    """A Playwright-style accessibility snapshot: deep indentation, refs, a few long URLs."""
    roles = ["generic", "link", "heading", "paragraph", "listitem", "list", "button", "img",
             "navigation", "table", "row", "cell", "text"]
    out = []
    n = 0
    depth = 0
    ref = 0
    while n < size:
        depth = max(0, min(30, depth + rng.choice([-2, -1, -1, 0, 0, 1, 1, 1])))
        ref += 1
        role = rng.choice(roles)
        pad = "  " * depth
        if role == "link":
            line = f'{pad}- link "{sentence(rng, 1, 5)}" [ref=e{ref}] [cursor=pointer]:\n' \
                   f"{pad}  - /url: {url(rng, long=rng.random() < 0.05)}"
        elif role == "text":
            line = f"{pad}- text: {sentence(rng, 3, 14)}"
        else:
            line = f'{pad}- {role} "{sentence(rng, 1, 6)}" [ref=e{ref}]:'
        out.append(line)
        n += len(line) + 1
    return "\n".join(out)


def html(rng, size):
    tags = ["div", "span", "p", "a", "li", "section", "td"]
    out = ["<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>page</title>",
           "<style>.c{color:#333;margin:0 auto}</style></head><body>"]
    n = sum(len(s) for s in out)
    stack = []
    while n < size:
        r = rng.random()
        if r < 0.35 and len(stack) < 40:
            tag = rng.choice(tags)
            attrs = f' class="c{rng.randint(0, 99)} mw-{rng.choice(WORDS)}" id="i{rng.getrandbits(32):x}"'
            if tag == "a":
                attrs += f' href="{url(rng, long=rng.random() < 0.05)}"'
            piece = f"<{tag}{attrs}>"
            stack.append(tag)
        elif r < 0.6 and stack:
            piece = f"</{stack.pop()}>"
        elif r < 0.63:
            piece = "<script>var d=" + json.dumps([rng.randint(0, 999) for _ in range(30)]) + ";</script>"
        else:
            piece = sentence(rng, 2, 12)
        if rng.random() < 0.3:
            piece += "\n" + "  " * len(stack)
        out.append(piece)
        n += len(piece)
    out.extend(f"</{t}>" for t in reversed(stack))
    out.append("</body></html>")
    return "".join(out)


def records(rng, size):
    rows = []
    n = 0
    i = 0
    while n < size:
        i += 1
        row = {
            "id": i,
            "name": sentence(rng, 1, 4),
            "url": url(rng),
            "tags": [rng.choice(WORDS) for _ in range(rng.randint(0, 5))],
            "score": round(rng.random() * 100, 3),
            "nested": {"owner": {"login": rng.choice(WORDS), "id": rng.randint(1, 10**7)},
                       "body": sentence(rng, 5, 30)},
        }
        rows.append(row)
        n += 260
    return rows


def json_pretty(rng, size):
    return json.dumps({"items": records(rng, size * 0.54)}, indent=2, ensure_ascii=False)


def json_min(rng, size):
    return json.dumps({"items": records(rng, size * 0.81)}, separators=(",", ":"), ensure_ascii=False)


def diff(rng, size):
    out = []
    n = 0
    f = 0
    while n < size:
        f += 1
        head = (f"diff --git a/src/m{f}.rs b/src/m{f}.rs\nindex {rng.getrandbits(28):07x}..{rng.getrandbits(28):07x} 100644\n"
                f"--- a/src/m{f}.rs\n+++ b/src/m{f}.rs\n@@ -{rng.randint(1, 900)},12 +{rng.randint(1, 900)},14 @@ fn f{f}() {{")
        lines = [head]
        for _ in range(rng.randint(8, 40)):
            mark = rng.choice([" ", " ", " ", "+", "-"])
            lines.append(f"{mark}{'    ' * rng.randint(1, 5)}let {rng.choice(WORDS)}_{rng.randint(0, 99)} = "
                         f"call({rng.randint(0, 10**6)}, \"{rng.choice(WORDS)}\");{'   ' if rng.random() < 0.05 else ''}")
        block = "\n".join(lines)
        out.append(block)
        n += len(block) + 1
    return "\n".join(out)


def log(rng, size):
    out = []
    n = 0
    t = 1_700_000_000
    while n < size:
        t += rng.randint(0, 3)
        line = (f"2026-11-{1 + t % 28:02d}T{t % 24:02d}:{t % 60:02d}:{(t * 7) % 60:02d}.{t % 1000:03d}Z "
                f"{rng.choice(['INFO ', 'WARN ', 'ERROR', 'DEBUG'])} [{rng.choice(WORDS)}] {sentence(rng, 3, 15)} "
                f"request_id={rng.getrandbits(64):016x} took={rng.randint(0, 5000)}ms")
        out.append(line)
        n += len(line) + 1
    return "\r\n".join(out) if rng.random() < 0.5 else "\n".join(out)


def csv(rng, size):
    out = ["id,name,email,amount,comment"]
    n = len(out[0])
    i = 0
    while n < size:
        i += 1
        line = f"{i},{rng.choice(WORDS)},{rng.choice(WORDS)}@example.org,{rng.random() * 10**4:.2f},\"{sentence(rng, 2, 9)}\""
        out.append(line)
        n += len(line) + 1
    return "\n".join(out)


def one_line(rng, size):
    parts = []
    n = 0
    while n < size:
        piece = rng.choice([
            lambda: sentence(rng, 4, 12),
            lambda: f"function f{rng.randint(0, 10**5)}(a,b){{return a+b*{rng.randint(0, 99)}}}",
            lambda: " " * rng.randint(1, 9),
            lambda: f"{rng.getrandbits(128):032x}",
        ])()
        parts.append(piece)
        n += len(piece) + 1
    return " ".join(parts)


SHAPES = {
    "prose": prose, "markdown": markdown, "yaml_tree": yaml_tree, "html": html,
    "json_pretty": json_pretty, "json_min": json_min, "diff": diff, "log": log, "csv": csv,
    "one_line": one_line,
}


def text(shape, seed, size):
    """The text of `shape`, about `size` bytes, the same for the same seed."""
    rng = random.Random(f"{seed}:{shape}:{size}")
    return SHAPES[shape](rng, size)


def write(out_dir, shape, seed, size, suffix=""):
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"shape__{shape}{suffix}.jsonl"
    line = {"jsonrpc": "2.0", "id": 1,
            "result": {"content": [{"type": "text", "text": text(shape, seed, size)}]}}
    path.write_text(json.dumps(line, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--mb", type=float, default=1.0, help="size of each payload in MB")
    ap.add_argument("--shape", action="append", choices=sorted(SHAPES), help="default: all")
    args = ap.parse_args()
    for shape in args.shape or SHAPES:
        print(write(args.out_dir, shape, args.seed, int(args.mb * 1_000_000)))


if __name__ == "__main__":
    main()
