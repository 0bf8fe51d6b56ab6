"""The stdin framing of a real ``cadenza acp``: bad lines are answered and the agent lives on."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from cadenza.acp.wire import INVALID_REQUEST, PARSE_ERROR, check_line
from tests.acp.conftest import WAIT_S, agent_env

INITIALIZE = b'{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":1}}\n'


async def _spawn(tmp_path: Path) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "cadenza",
        "acp",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=(tmp_path / "agent.log").open("wb"),
        env=agent_env("http://127.0.0.1:9", tmp_path / "home"),
        cwd=tmp_path,
    )


async def _answer(process: asyncio.subprocess.Process) -> dict[str, Any]:
    assert process.stdout is not None
    line = await asyncio.wait_for(process.stdout.readline(), WAIT_S)
    assert line, "the agent closed stdout"
    answer: dict[str, Any] = json.loads(line)
    return answer


BAD_LINES: list[tuple[bytes, int]] = [
    (b"[1,2,3]", INVALID_REQUEST),
    (b'[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}]', INVALID_REQUEST),
    (b'"hello"', INVALID_REQUEST),
    (b"42", INVALID_REQUEST),
    (b"true", INVALID_REQUEST),
    (b"null", INVALID_REQUEST),
    (b'{"jsonrpc":"2.0","id":[1],"result":1}', INVALID_REQUEST),
    (b'{"jsonrpc":"2.0","method":5}', INVALID_REQUEST),
    (b"{}", INVALID_REQUEST),
    (b"{not json", PARSE_ERROR),
    (b"\xff\xfe{}", PARSE_ERROR),
]


async def test_bad_lines_get_an_error_answer_and_the_agent_stays(tmp_path: Path) -> None:
    process = await _spawn(tmp_path)
    assert process.stdin is not None
    try:
        for line, code in BAD_LINES:
            process.stdin.write(line + b"\n")
            await process.stdin.drain()
            answer = await _answer(process)
            assert answer == {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": code, "message": answer["error"]["message"]},
            }, line
        process.stdin.write(INITIALIZE)
        await process.stdin.drain()
        answer = await _answer(process)
        assert answer["id"] == 7 and answer["result"]["agentInfo"]["name"] == "cadenza"
        assert process.returncode is None
    finally:
        process.stdin.close()
        rc = await asyncio.wait_for(process.wait(), WAIT_S)
    assert rc == 0


@pytest.mark.parametrize(("line", "code"), BAD_LINES)
def test_check_line_codes(line: bytes, code: int) -> None:
    answer = check_line(line)
    assert answer is not None
    assert json.loads(answer)["error"]["code"] == code


def test_check_line_passes_messages() -> None:
    assert check_line(INITIALIZE.strip()) is None
    assert check_line(b'{"jsonrpc":"2.0","id":"a","result":{}}') is None
    assert check_line(b'{"jsonrpc":"2.0","method":"session/cancel","params":{}}') is None
