"""``session/update`` notifications of one session, sent in order by one pump task.

The engine publishes synchronously (``Editor.publish`` must not block); the stream queues each
update and a single task sends them one after the other, so they reach the client in the
order they happened. ``flush`` waits until every queued update is written: a prompt flushes
before it answers, so no update of a turn arrives after the turn's response.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from cadenza.acp.updates import AcpUpdate

log = logging.getLogger(__name__)


class UpdateSink(Protocol):
    """The part of the SDK's ``AgentSideConnection`` the stream needs."""

    async def session_update(self, session_id: str, update: AcpUpdate) -> None:
        """Send one ``session/update`` notification."""
        ...


class UpdateStream:
    """Queued, ordered ``session/update`` notifications for one session.

    Args:
        sink: The connection to the client.
        session_id: The ACP session id.
    """

    def __init__(self, sink: UpdateSink, session_id: str) -> None:
        self._sink = sink
        self.session_id = session_id
        self._queue: asyncio.Queue[AcpUpdate] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    def send(self, update: AcpUpdate) -> None:
        """Queue ``update`` (never blocks); the pump sends it after the earlier ones."""
        self._queue.put_nowait(update)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(
                self._pump(), name=f"cadenza-acp-updates-{self.session_id}"
            )

    async def flush(self) -> None:
        """Wait until every queued update has been written to the client."""
        await self._queue.join()

    async def _pump(self) -> None:
        while True:
            update = await self._queue.get()
            try:
                await self._sink.session_update(self.session_id, update)
            except Exception as exc:  # a closed connection: nothing more can be sent
                log.warning("session %s: an update could not be sent: %s", self.session_id, exc)
            finally:
                self._queue.task_done()

    async def aclose(self) -> None:
        """Stop the pump (queued updates that were not sent are dropped)."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
