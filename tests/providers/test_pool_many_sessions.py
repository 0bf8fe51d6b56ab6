"""One provider shared by many sessions: every session's request goes out at once.

The model server here answers no request until ``SESSIONS`` of them are in, at once: with
httpx's default pool (100 connections) the 101st request waited inside the client for a free
connection, which never came here (and came only when another session's reply ended, in a
server). Counts only, no timing: how many requests were in at the same moment, twice.
"""

from __future__ import annotations

import asyncio
import json

from cadenza.providers.http import HttpTransport
from cadenza.providers.retry import RetryPolicy

SESSIONS = 150
"""More than httpx's default 100 connections."""


class HoldingServer:
    """Holds every request until ``wanted`` are in at once, then answers them all."""

    def __init__(self, wanted: int) -> None:
        self.wanted = wanted
        self.waiting = 0
        self.most_at_once = 0
        self.release = asyncio.Event()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                await reader.readexactly(length)
                await self.hold()
                data = json.dumps({"ok": True}).encode()
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"Content-Length: {len(data)}\r\n\r\n".encode()
                    + data
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def hold(self) -> None:
        self.waiting += 1
        self.most_at_once = max(self.most_at_once, self.waiting)
        if self.waiting >= self.wanted:
            self.release.set()
        await self.release.wait()
        self.waiting -= 1
        if self.waiting == 0:
            self.release = asyncio.Event()


async def test_requests_of_many_sessions_go_out_at_once() -> None:
    model = HoldingServer(SESSIONS)
    server = await asyncio.start_server(model.handle, "127.0.0.1", 0, backlog=SESSIONS)
    port = server.sockets[0].getsockname()[1]
    http = HttpTransport(
        who="openai/m",
        base_url=f"http://127.0.0.1:{port}/v1",
        headers={},
        timeout_s=60,
        retry=RetryPolicy(attempts=1),
    )

    async def one() -> bool:
        reply: dict[str, bool] = await http.post("chat/completions", {"n": 1}, whole=lambda d: d)
        return reply["ok"]

    try:
        for _ in range(2):
            # Bounded: with a capped pool the server would hold the first 100 forever.
            replies = await asyncio.wait_for(asyncio.gather(*(one() for _ in range(SESSIONS))), 60)
            assert replies == [True] * SESSIONS
    finally:
        await http.aclose()
        server.close()
        await server.wait_closed()
    assert model.most_at_once == SESSIONS
