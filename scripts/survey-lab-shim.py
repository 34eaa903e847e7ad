#!/usr/bin/env python3
"""Run an MCP stdio server so that a lab run gets the result the audit got (for the lab,
scripts/survey-lab-probes.py). The lab starts a fresh client and server for every probe, in a
folder of its own:

- `--before TOOL JSON_ARGUMENTS`: a probe that reads what an earlier one did (Playwright's
  browser_snapshot after browser_navigate) would see an empty browser. The shim makes the
  earlier call right after the client's `notifications/initialized`, holds the client's tool
  calls until its answer, and drops that answer.
- `--roots DIR`: a server that takes the client's roots as its allowed folders (the reference
  filesystem server) would refuse the probe's path outside the lab's work folder. The shim
  answers the server's `roots/list` with DIR, as if the client had been opened there.

    survey-lab-shim.py [--before TOOL JSON_ARGUMENTS] [--roots DIR] -- COMMAND [ARGS...]
"""
import argparse
import json
import pathlib
import subprocess
import sys
import threading

ID = "survey-lab-before"


def main():
    cut = sys.argv.index("--")
    p = argparse.ArgumentParser()
    p.add_argument("--before", nargs=2, metavar=("TOOL", "JSON_ARGUMENTS"))
    p.add_argument("--roots")
    args = p.parse_args(sys.argv[1:cut])
    server = subprocess.Popen(sys.argv[cut + 1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    lock = threading.Lock()
    # None: the earlier call is not sent yet; a list: tool calls held until its answer
    state = {"held": None if args.before else False}

    def to_server(line):
        server.stdin.write(line)
        server.stdin.flush()

    def from_client():
        for line in sys.stdin.buffer:
            if args.roots and b'"roots"' in line:
                line = with_roots(line, args.roots)
            with lock:
                if isinstance(state["held"], list) and b'"tools/call"' in line:
                    state["held"].append(line)
                    continue
                to_server(line)
                if state["held"] is None and b"notifications/initialized" in line:
                    tool, arguments = args.before
                    call = {"jsonrpc": "2.0", "id": ID, "method": "tools/call",
                            "params": {"name": tool, "arguments": json.loads(arguments)}}
                    to_server(json.dumps(call).encode() + b"\n")
                    state["held"] = []
        server.stdin.close()

    threading.Thread(target=from_client, daemon=True).start()
    for line in server.stdout:
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if isinstance(message, dict) and message.get("id") == ID and "method" not in message:
            with lock:
                for held in state["held"]:
                    to_server(held)
                state["held"] = False
            continue
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
    sys.exit(server.wait())


def with_roots(line, folder):
    """The client's answer to roots/list, with `folder` as its only root."""
    try:
        message = json.loads(line)
    except ValueError:
        return line
    if isinstance(message, dict) and isinstance(message.get("result"), dict) and "roots" in message["result"]:
        message["result"]["roots"] = [{"uri": pathlib.Path(folder).resolve().as_uri(), "name": "survey data"}]
        return json.dumps(message).encode() + b"\n"
    return line


if __name__ == "__main__":
    main()
