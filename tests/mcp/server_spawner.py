"""An MCP server that starts a worker process and exits promptly when its stdin closes.

The worker (``sleep 300``) stays in the server's process group and inherits its stdout, as a
real server's helper often does; the server does not stop it. ``worker_pid`` answers its pid,
so a test can check that the worker is gone once the session that used the server ended.
``python server_spawner.py linger``: the server itself stays on after its stdin closed.
"""

from __future__ import annotations

import subprocess
import sys
import time

from mcp.server.mcpserver import MCPServer

server = MCPServer("spawner")
worker = subprocess.Popen(["sleep", "300"])


@server.tool()
def worker_pid() -> int:
    """The worker's process id."""
    return worker.pid


if __name__ == "__main__":
    server.run()  # returns when stdin closes; the worker is left running
    if sys.argv[1:] == ["linger"]:
        time.sleep(300)
