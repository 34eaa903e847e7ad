#!/usr/bin/env python3
"""Growth table: the engine pass time of each payload shape at growing sizes.

    cargo build --release -j 2
    python3 scripts/growth.py [--bin target/release/mcp-budget] [--sizes 0.5,1,2,4,8]
                              [--runs 5] [--budget 8000] [--seed 7] [--shape NAME ...]

Makes every shape of `scripts/shapes.py` at each size (seeded: the same bytes on every machine;
kept under target/shapes/growth/ and reused), runs them all through one
`mcp-budget replay --runs N --format json` (the median of N passes per file, as `replay` reports
`engine_us`; the process's start-up is left out by the median) and prints a Markdown table of
median engine ms, shape by size, with the ratio of the largest size to the smallest. A pass
whose work grows with the budget and not with the payload shows a flat row; what must grow is
the byte scan and the spill write.
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import shapes  # noqa: E402


def payloads(out_dir, names, sizes_mb, seed):
    """{(shape, mb): path}, generated once per seed and size."""
    files = {}
    for mb in sizes_mb:
        folder = out_dir / f"seed{seed}-{mb:g}mb"
        for name in names:
            path = folder / f"shape__{name}.jsonl"
            if not path.exists():
                print(f"generating {path}", file=sys.stderr)
                shapes.write(folder, name, seed, int(mb * 1_000_000))
            files[(name, mb)] = path
    return files


def replay(binary, files, runs, budget):
    """{path: replay row} from one `replay --format json` over every file."""
    with tempfile.TemporaryDirectory() as spill:
        cmd = [str(binary), "replay", *map(str, files), "--runs", str(runs),
               "--budget", str(budget), "--spill-dir", spill, "--format", "json"]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return {row["file"]: row for row in json.loads(out)["results"]}


def table(names, sizes_mb, files, rows):
    head = "| shape | " + " | ".join(f"{mb:g} MB" for mb in sizes_mb)
    head += f" | {sizes_mb[-1]:g} MB / {sizes_mb[0]:g} MB | strategy at {sizes_mb[-1]:g} MB |"
    lines = [head, "|---|" + "---:|" * (len(sizes_mb) + 1) + "---|"]
    for name in names:
        ms = [rows[str(files[(name, mb)])]["engine_us"] / 1000 for mb in sizes_mb]
        last = rows[str(files[(name, sizes_mb[-1])])]
        ratio = ms[-1] / ms[0] if ms[0] else float("inf")
        cells = " | ".join(f"{v:.2f}" for v in ms)
        lines.append(f"| {name} | {cells} | {ratio:.1f}x | {last['strategy']} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=str(HERE.parent / "target/release/mcp-budget"))
    ap.add_argument("--sizes", default="0.5,1,2,4,8", help="payload sizes in MB")
    ap.add_argument("--runs", type=int, default=5, help="passes per file (median)")
    ap.add_argument("--budget", type=int, default=8000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--shape", action="append", choices=sorted(shapes.SHAPES),
                    help="default: all")
    ap.add_argument("--out", default=str(HERE.parent / "target/shapes/growth"),
                    help="where the payloads are kept")
    args = ap.parse_args()
    binary = pathlib.Path(args.bin)
    if not binary.exists():
        sys.exit(f"error: {binary} not found: run `cargo build --release` first")
    names = args.shape or list(shapes.SHAPES)
    sizes_mb = sorted(float(s) for s in args.sizes.split(","))
    files = payloads(pathlib.Path(args.out), names, sizes_mb, args.seed)
    rows = replay(binary, files.values(), args.runs, args.budget)
    print(f"Median engine ms of {args.runs} passes (`mcp-budget replay --runs {args.runs}`), "
          f"budget {args.budget:,}, seed {args.seed}:\n")
    print(table(names, sizes_mb, files, rows))


if __name__ == "__main__":
    main()
