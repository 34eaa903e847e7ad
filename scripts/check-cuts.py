#!/usr/bin/env python3
"""Check the engine's safe cuts (src/ground/tokens/cuts.rs, `is_safe_cut`) against Python tiktoken:
at every place the rule calls safe, the tokens of the two halves must add up to the whole's,
for cl100k_base and o200k_base.

    python3 -m venv /tmp/refvenv && /tmp/refvenv/bin/pip install tiktoken
    /tmp/refvenv/bin/python scripts/check-cuts.py [--seed 1] [--cases 20000]

Texts are random joins of the pieces that make pre-tokenisation hard: line breaks, CRLF, runs
of spaces and tabs, indentation, NBSP, U+2028, U+0085, vertical tab, contractions, digits, `/`,
punctuation, combining marks, CJK and emoji. Prints the number of cuts checked and every
mismatch; exits 1 on a mismatch.
"""
import argparse
import pathlib
import random
import sys

# the reference's set-up points tiktoken at the ranks files that the tiktoken-rs crate ships, so
# this runs offline
ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT.parent / "shared" / "bench"))
from seed_reference import setup_tiktoken_cache  # noqa: E402

setup_tiktoken_cache()
import tiktoken  # noqa: E402

PIECES = ["\n", "\n\n", "\r\n", "\r", " ", "  ", "      ", "\t", "a", "B", "word", "Word", "é",
          "'s", "'", "'ll", "1", "123", "12345", "/", "://", ".", ",", "!?", "東京", "😀",
          "\u00a0", "\u2028", "\u0085", "\x0b", "\u0301", "Zz", "x'", "-", "\n    ", "\r\n  ",
          " x", ". ", ".\n", "\n/"]
MAX_LOOKAHEAD = 256


def is_safe_cut(text, p):
    """The rule of src/ground/tokens/cuts.rs on a str (positions in characters; the rule only
    looks at ASCII bytes and at characters, so it is the same rule)."""
    if p == 0 or p >= len(text):
        return False
    before = text[p - 1]
    if before == "\n":
        if text[p] in "\r\n/":
            return False
        for i, c in enumerate(text[p:]):
            if len(text[p:p + i].encode()) >= MAX_LOOKAHEAD:
                return False
            if c in "\r\n":
                return False
            if not c.isspace() or c in "\x1c\x1d\x1e\x1f":
                return True
        return True
    if before.isascii() and before.isalpha():
        return text[p] == " " and p + 1 < len(text) and text[p + 1].isascii() and text[p + 1].isalpha()
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=20000)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    encs = [tiktoken.get_encoding("cl100k_base"), tiktoken.get_encoding("o200k_base")]
    cuts = bad = 0
    for _ in range(args.cases):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 40)))
        counts = [len(e.encode_ordinary(text)) for e in encs]
        for p in range(1, len(text)):
            if not is_safe_cut(text, p):
                continue
            cuts += 1
            for e, whole in zip(encs, counts):
                split = len(e.encode_ordinary(text[:p])) + len(e.encode_ordinary(text[p:]))
                if split != whole:
                    bad += 1
                    print(f"MISMATCH {e.name}: {text[:p]!r} | {text[p:]!r}: {whole} vs {split}")
    print(f"{cuts} cuts checked, {bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
