#!/usr/bin/env bash
# Run an MCP server with the survey's web pages served on 127.0.0.1:PORT beside it, for the lab
# (scripts/survey-lab-probes.py): the lab's clients and the servers they start live in a
# network namespace with only loopback, which the survey's own web server cannot reach. When
# the port already answers (the audit, outside the namespace), the server runs alone. The web
# server ends when the MCP server does.
#
#     survey-lab-web.sh PORT DIR -- COMMAND [ARGS...]
set -u
port=$1 dir=$2
shift 3
if ! (echo > "/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    python3 - "$port" "$dir" "$$" > /dev/null 2>&1 <<'PY' &
import functools, http.server, os, sys, threading, time
port, root, parent = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=root)
server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
while os.getppid() == parent:  # the MCP server (this script, exec'd) is our parent
    time.sleep(0.5)
PY
    for _ in $(seq 100); do (echo > "/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
fi
exec "$@"
