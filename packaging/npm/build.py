#!/usr/bin/env python3
"""Build mcp-budget's npm packages from built binaries: the `mcp-budget` package (a launcher,
packaging/npm/mcp-budget) whose optional dependencies are one platform package per target
(`@mcp-budget/linux-x64`, ...: the binary alone, with the `os`, `cpu` and `libc` npm installs
it for), the scheme esbuild, biome and Codex use. Each is packed with `npm pack`.

    build.py --out DIR [--version V] --binary TARGET=PATH [--binary TARGET=PATH ...]

TARGET is a Rust target triple (x86_64-unknown-linux-gnu, aarch64-apple-darwin, ...); the
version defaults to Cargo.toml's. Prints the tarballs' paths, the launcher's last.
"""
import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Rust target -> (npm os, npm cpu, libc or None, the package's suffix)
TARGETS = {
    "x86_64-unknown-linux-gnu": ("linux", "x64", "glibc", "linux-x64"),
    "aarch64-unknown-linux-gnu": ("linux", "arm64", "glibc", "linux-arm64"),
    "x86_64-unknown-linux-musl": ("linux", "x64", "musl", "linux-x64-musl"),
    "aarch64-unknown-linux-musl": ("linux", "arm64", "musl", "linux-arm64-musl"),
    "x86_64-apple-darwin": ("darwin", "x64", None, "darwin-x64"),
    "aarch64-apple-darwin": ("darwin", "arm64", None, "darwin-arm64"),
    "x86_64-pc-windows-msvc": ("win32", "x64", None, "win32-x64"),
    "aarch64-pc-windows-msvc": ("win32", "arm64", None, "win32-arm64"),
}


def cargo_field(name):
    text = (ROOT / "Cargo.toml").read_text()
    package = text.split("[package]", 1)[1].split("\n[", 1)[0]
    m = re.search(rf'^{name}\s*=\s*"([^"]*)"', package, re.M)
    return m.group(1) if m else None


def common(version):
    return {
        "version": version,
        "description": cargo_field("description"),
        "license": cargo_field("license"),
        "keywords": ["mcp", "model-context-protocol", "tokens", "llm", "budget"],
    }


def pack(folder, out):
    got = subprocess.run(
        ["npm", "pack", "--silent", "--pack-destination", str(out)],
        cwd=folder, check=True, capture_output=True, text=True,
    )
    return out / got.stdout.strip().splitlines()[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--version", default=None)
    ap.add_argument("--binary", action="append", default=[], metavar="TARGET=PATH")
    args = ap.parse_args()
    version = args.version or cargo_field("version")
    args.out = args.out.resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    stage = args.out / "stage"
    shutil.rmtree(stage, ignore_errors=True)
    tarballs = []
    for spec in args.binary:
        target, _, path = spec.partition("=")
        if target not in TARGETS or not path:
            sys.exit(f"build.py: --binary {spec}: TARGET=PATH with TARGET one of {', '.join(TARGETS)}")
        os_, cpu, libc, suffix = TARGETS[target]
        name = f"@mcp-budget/{suffix}"
        folder = stage / suffix
        (folder / "bin").mkdir(parents=True)
        exe = "mcp-budget.exe" if os_ == "win32" else "mcp-budget"
        shutil.copyfile(path, folder / "bin" / exe)
        (folder / "bin" / exe).chmod(0o755)
        manifest = {
            "name": name,
            **common(version),
            "description": f"mcp-budget's binary for {target}",
            "os": [os_],
            "cpu": [cpu],
            "files": ["bin"],
            "preferUnplugged": True,
        }
        if libc:
            manifest["libc"] = [libc]
        (folder / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
        (folder / "README.md").write_text(f"The `mcp-budget` binary for {target}: install `mcp-budget`, not this.\n")
        tarballs.append(pack(folder, args.out))
    launcher = stage / "mcp-budget"
    shutil.copytree(ROOT / "packaging/npm/mcp-budget", launcher)
    shutil.copyfile(ROOT / "README.md", launcher / "README.md")
    manifest = {
        "name": "mcp-budget",
        **common(version),
        "bin": {"mcp-budget": "bin/mcp-budget.js"},
        "files": ["bin"],
        "engines": {"node": ">=18"},
        # every platform the release builds, whichever binaries were given here
        "optionalDependencies": {f"@mcp-budget/{t[3]}": version for t in sorted(TARGETS.values(), key=lambda t: t[3])},
    }
    (launcher / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    tarballs.append(pack(launcher, args.out))
    shutil.rmtree(stage)
    for t in tarballs:
        print(t)


if __name__ == "__main__":
    main()
