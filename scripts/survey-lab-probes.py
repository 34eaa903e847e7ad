#!/usr/bin/env python3
"""The survey's probe files rewritten for the lab (scripts/survey.sh with SURVEY_LAB=1): only the
servers with probes, each server's command wrapped so that

- a server whose probes read the survey's web pages (`${SURVEY_WEB}`) serves them itself on
  127.0.0.1 (scripts/survey-lab-web.sh): the lab's clients run in a network namespace of their
  own, where the survey's web server outside cannot be reached;
- the lab starts a fresh client and server for every probe, in a folder of its own, so
  (scripts/survey-lab-shim.py) a server whose later probes read what its first one did (a
  browser's page) gets that first call made before each run's own, and a server that takes the
  client's roots as its allowed folders gets the survey's data folder as the client's root;
- with `--proxy ID`, the server runs behind `mcp-budget proxy --client ID`, so what is measured
  is what reaches the client's model behind the proxy.

    python3 scripts/survey-lab-probes.py OUT_DIR --bin target/debug/mcp-budget [--proxy codex]

The files keep `${SURVEY_DIR}` and `${SURVEY_WEB}`, which the audit expands.
"""
import argparse
import json
import pathlib
import sys
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent
# servers left out of the lab, with the reason (they fail to start in the survey itself)
# servers whose later probes read the state the first probe leaves (the page it opened)
STATEFUL = {"playwright", "chrome-devtools"}
# servers that take the client's roots as their allowed folders
ROOTED = {"filesystem": "${SURVEY_DIR}/data"}
SKIP = {"sqlite": "mcp-server-sqlite 2025.4.25 breaks against mcp 2.x (see failures.md)"}


def value(v):
    """A TOML value: JSON's strings, numbers and booleans are TOML's; tables inline."""
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{key(k)} = {value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, list):
        return "[" + ", ".join(value(x) for x in v) + "]"
    return json.dumps(v)


def key(k):
    return k if k.replace("_", "").replace("-", "").isalnum() else json.dumps(k)


def rewrite(path, args):
    text = path.read_text(encoding="utf-8")
    doc = tomllib.loads(text)
    uses_web = "${SURVEY_WEB}" in text
    out = [f"# {path.name} for the lab (written by scripts/survey-lab-probes.py)\n"]
    if "defaults" in doc:
        out.append("[defaults]")
        out += [f"{key(k)} = {value(v)}" for k, v in doc["defaults"].items()]
        out.append("")
    for name, server in doc.get("servers", {}).items():
        if not server.get("probes") or name in SKIP:
            continue
        argv = [server["command"], *server.get("args", [])]
        if uses_web:
            argv = [str(ROOT / "scripts/survey-lab-web.sh"), args.web_port, "${SURVEY_DIR}/data/web", "--", *argv]
        shim = []
        if name in STATEFUL:
            first = server["probes"][0]
            shim += ["--before", first["tool"], json.dumps(first.get("arguments", {}))]
        if name in ROOTED:
            shim += ["--roots", ROOTED[name]]
        if shim:
            argv = ["python3", str(ROOT / "scripts/survey-lab-shim.py"), *shim, "--", *argv]
        if args.proxy:
            argv = [args.bin, "proxy", "--client", args.proxy, "--name", name, "--", *argv]
        out.append(f"[servers.{key(name)}]")
        out.append(f"command = {value(argv[0])}")
        out.append(f"args = {value(argv[1:])}")
        for k, v in server.items():
            if k not in ("command", "args", "probes"):
                out.append(f"{key(k)} = {value(v)}")
        out.append("")
        for probe in server["probes"]:
            out.append(f"[[servers.{key(name)}.probes]]")
            out += [f"{key(k)} = {value(v)}" for k, v in probe.items()]
            out.append("")
    return "\n".join(out) if len(out) > 1 and any(l.startswith("[servers.") for l in out) else None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--bin", required=True, help="the mcp-budget executable (for --proxy)")
    p.add_argument("--proxy", help="wrap every server in `mcp-budget proxy --client ID`")
    p.add_argument("--web-port", default="8765")
    args = p.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.toml"):
        old.unlink()
    written = 0
    for path in sorted((ROOT / "probes/survey").glob("*.toml")):
        text = rewrite(path, args)
        if text:
            (out / path.name).write_text(text, encoding="utf-8")
            written += 1
    print(f"{written} probe files in {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
