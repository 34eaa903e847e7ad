#!/usr/bin/env python3
"""A tiny stdio MCP server for scripts/quality-bench.py: one tool that returns a saved text.

    python3 scripts/quality-bench-server.py PAYLOAD.txt TOOL_NAME

Newline-delimited JSON-RPC on stdin/stdout, no SDK: `initialize` (echoing the client's protocol
version), `tools/list` with the one tool (no arguments), `tools/call` of it with the file's text
as one text block, `ping`; notifications are ignored and any other request gets -32601.
Offline: it reads one file and never opens a socket.
"""
import json
import sys

VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


def main():
    path, tool = sys.argv[1], sys.argv[2]
    text = open(path, encoding="utf-8").read()
    out = sys.stdout

    def reply(msg_id, result=None, error=None):
        msg = {"jsonrpc": "2.0", "id": msg_id}
        msg.update({"error": error} if error else {"result": result})
        out.write(json.dumps(msg, ensure_ascii=False) + "\n")
        out.flush()

    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        if "id" not in msg or "method" not in msg:
            continue  # a notification, or a response to nothing we asked
        method, params = msg["method"], msg.get("params") or {}
        if method == "initialize":
            asked = params.get("protocolVersion")
            reply(msg["id"], {"protocolVersion": asked if asked in VERSIONS else VERSIONS[-1],
                              "capabilities": {"tools": {}},
                              "serverInfo": {"name": "quality-bench", "version": "0.1.0"}})
        elif method == "tools/list":
            reply(msg["id"], {"tools": [{"name": tool, "description": "Returns the saved payload.",
                                         "inputSchema": {"type": "object", "properties": {}}}]})
        elif method == "tools/call" and params.get("name") == tool:
            reply(msg["id"], {"content": [{"type": "text", "text": text}], "isError": False})
        elif method == "ping":
            reply(msg["id"], {})
        else:
            reply(msg["id"], error={"code": -32601, "message": f"not served here: {method}"})


if __name__ == "__main__":
    main()
