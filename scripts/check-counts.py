#!/usr/bin/env python3
"""Check `mcp-budget count` against Python tiktoken's `encode_ordinary`, both encodings: on
random texts made of what makes pre-tokenisation and merging hard (written to a temporary
folder) and on any files given.

    python3 -m venv /tmp/refvenv && /tmp/refvenv/bin/pip install tiktoken
    cargo build --release
    /tmp/refvenv/bin/python scripts/check-counts.py [--seed 1] [--cases 2000] [FILE ...]

Prints one line per mismatch and a summary; exits 1 on a mismatch.
"""
import argparse
import json
import pathlib
import random
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT.parent / "shared" / "bench"))
from seed_reference import setup_tiktoken_cache  # noqa: E402

setup_tiktoken_cache()
import tiktoken  # noqa: E402

ENCODINGS = ["cl100k_base", "o200k_base"]
PIECES = ["\n", "\r\n", "\r", " ", "  ", "   ", " " * 17, "\t", "\n    ", "\r\n  ", "\n\t\t",
          "a", "B", "word", "Word", "HelloWorld", "é", "ß", "東京", "😀", "👍🏽", "данные",
          "'s", "'S", "'ll", "'", "1", "123", "12345", "1,234.56", "/", "://", ".", ",", "!?",
          "\u00a0", "\u3000", "\u2028", "\u0085", "\x0b", "\x0c", "\u0301", "\u200b", "-", "_",
          "<|endoftext|>", "{\"k\": [1, 2]}", "a" * 300, "ab" * 90, "x9" * 50]


def random_text(rng):
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 200)))


def ours(paths):
    out = subprocess.run(
        [str(ROOT / "target/release/mcp-budget"), "count", "--tokenizer", ",".join(ENCODINGS),
         "--format", "json", *map(str, paths)],
        check=True, capture_output=True, text=True).stdout
    files = json.loads(out)["files"]
    return [(f["tokens"], f["by_tokenizer"][ENCODINGS[1]]) for f in files]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("files", nargs="*", type=pathlib.Path)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    encs = [tiktoken.get_encoding(name) for name in ENCODINGS]
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i in range(args.cases):
            path = pathlib.Path(tmp) / f"case{i}.txt"
            path.write_text(random_text(rng), encoding="utf-8", newline="")
            paths.append(path)
        paths += args.files
        bad = 0
        for path, counts in zip(paths, ours(paths)):
            text = path.read_bytes().decode("utf-8")
            expected = tuple(len(e.encode_ordinary(text)) for e in encs)
            if counts != expected:
                bad += 1
                print(f"MISMATCH {path.name}: ours {counts}, tiktoken {expected}: {text[:200]!r}")
    print(f"{len(paths)} texts checked ({sum(p.stat().st_size for p in args.files)} bytes of "
          f"files given), {bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
