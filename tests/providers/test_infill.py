"""The ``/infill`` client against a real HTTP server: its body, the streamed reply, its limit.

The limit is the longest silence: generation that keeps sending tokens is never cut, however
long it takes in all; a server that says nothing (a prompt that does not get evaluated) is.
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from cadenza.providers.base import ProviderError
from cadenza.providers.infill import (
    InfillClient,
    InfillRequest,
    InfillTimeout,
    InfillUnsupported,
)
from tests.providers.fake_sse import FakeModelServer, Sse, Status


def token(text: str) -> str:
    return json.dumps({"index": 0, "content": text, "stop": False})


FINAL = json.dumps(
    {
        "index": 0,
        "content": "",
        "stop": True,
        "tokens_predicted": 3,
        "tokens_cached": 120,
        "timings": {"prompt_n": 4, "prompt_ms": 12.5, "predicted_n": 3, "predicted_ms": 40.0},
    }
)
REQUEST = InfillRequest(
    prefix="def f(a):\n",
    prompt="    return ",
    suffix="\n",
    n_predict=32,
    t_max_predict_ms=400,
    stop=("\n",),
    timeout_s=0.5,
)


async def test_the_body_streams_on_the_completion_slot_with_the_servers_limits() -> None:
    client = InfillClient("http://127.0.0.1:9", slot=1)
    body = client.body(REQUEST)
    await client.aclose()
    assert body["stream"] is True and body["cache_prompt"] is True and body["id_slot"] == 1
    assert body["n_predict"] == 32 and body["t_max_predict_ms"] == 400
    assert body["input_prefix"] == "def f(a):\n" and body["prompt"] == "    return "
    assert body["stop"] == ["\n"] and body["input_extra"] == []


async def test_the_streamed_middle_is_joined_and_its_figures_kept() -> None:
    with FakeModelServer(Sse(events=[token("a "), token("+ "), token("1"), FINAL])) as server:
        client = InfillClient(server.root_url, slot=1)
        reply = await client.infill(REQUEST)
        await client.aclose()
    assert reply.text == "a + 1"
    assert (reply.tokens_predicted, reply.tokens_cached, reply.tokens_evaluated) == (3, 120, 4)
    assert reply.prompt_ms == 12.5 and reply.predicted_ms == 40.0
    assert server.requests[0].path == "/infill"


async def test_generation_longer_than_the_limit_in_all_is_not_cut() -> None:
    events = [token(f"x{n}") for n in range(8)] + [FINAL]
    with FakeModelServer(Sse(events=events, first_after_s=0.3, gap_s=0.15)) as server:
        client = InfillClient(server.root_url)
        started = time.monotonic()
        reply = await client.infill(REQUEST)  # 0.5 s of silence at most; 1.3 s in all
        took = time.monotonic() - started
        await client.aclose()
    assert took > REQUEST.timeout_s * 2
    assert reply.text == "".join(f"x{n}" for n in range(8))


async def test_a_server_silent_past_the_limit_is_given_up() -> None:
    with FakeModelServer(Sse(events=[token("late"), FINAL], first_after_s=2.0)) as server:
        client = InfillClient(server.root_url)
        started = time.monotonic()
        with pytest.raises(InfillTimeout, match=r"said nothing for 0\.5 s"):
            await client.infill(REQUEST)
        assert time.monotonic() - started < 1.5
        await client.aclose()


async def test_errors_the_model_cannot_fill_in_the_middle_and_a_cut_stream() -> None:
    unsupported = Status(
        code=501,
        body='{"error": {"message": "Infill is not supported by this model: prefix token '
        'is missing. ", "type": "not_supported_error"}}',
    )
    failed = Sse(events=[token("a"), json.dumps({"error": {"message": "out of memory"}})])
    short = Sse(events=[token("a")])
    with FakeModelServer(unsupported, failed, short) as server:
        client = InfillClient(server.root_url)
        with pytest.raises(InfillUnsupported, match="prefix token is missing"):
            await client.infill(REQUEST)
        with pytest.raises(ProviderError, match="out of memory"):
            await client.infill(REQUEST)
        with pytest.raises(ProviderError, match="ended the completion early"):
            await client.infill(REQUEST)
        await client.aclose()


async def test_a_connection_closed_under_the_request_is_tried_once_more() -> None:
    cut = Sse(events=[token("a")], cut_after=0)
    with FakeModelServer(cut, Sse(events=[token("b"), FINAL]), cut, cut) as server:
        client = InfillClient(server.root_url)
        assert (await client.infill(REQUEST)).text == "b"
        with pytest.raises(ProviderError, match="unreachable"):
            await client.infill(REQUEST)  # twice in a row: a server that is going away
        await client.aclose()
    assert len(server.requests) == 4


async def test_cancelling_the_call_closes_the_connection_the_server_sees_it() -> None:
    with FakeModelServer(Sse(events=[token("a")], hold=True)) as server:
        client = InfillClient(server.root_url)
        call = asyncio.create_task(client.infill(REQUEST))
        await asyncio.sleep(0.2)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        deadline = time.monotonic() + 2
        while not server.disconnects and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        await client.aclose()
    assert server.disconnects
