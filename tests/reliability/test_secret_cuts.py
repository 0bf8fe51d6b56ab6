"""Secrets are redacted before any cut, at every exit (unit tests per exit).

The leak these pin: a text is cut first (a provider error after 300 characters, a long line
of a file, a command's output), the key running past the cut loses its end, no longer
matches the registered key, and its head goes out. Each test puts a fresh random key exactly
across the cut of one exit and checks that no piece of it (8 characters or more) is left.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path

import pytest

from cadenza.client.edits import FileChange
from cadenza.client.summary import diff_stat, unified_diff
from cadenza.engine.events import SessionFinished
from cadenza.lsp.updates import PROGRESS_END_CHARS, progress_end
from cadenza.messages import ToolCall
from cadenza.providers.base import ModelRequest, ProviderError
from cadenza.providers.error_text import MESSAGE_CHARS, status_sentence
from cadenza.providers.openai import OpenAIProvider
from cadenza.providers.retry import RetryPolicy
from cadenza.secrets import (
    REDACTED,
    RedactingFilter,
    redact,
    redact_log_handlers,
    redact_piece,
    redact_then_cut,
    register_known_keys,
    register_secret,
)
from cadenza.tools.base import ToolContext
from cadenza.tools.dispatch.execution import PreparedCall, prepare, run
from cadenza.tools.read import MAX_LINE_CHARS
from cadenza.tools.registry import default_tools
from cadenza.tools.shell import DEFAULT_MAX_OUTPUT_BYTES
from tests.doubles import MemoryEditor
from tests.support.fake_openai import FakeOpenAI, Reply


def fresh_key() -> str:
    """A registered key, random, long (as real keys are)."""
    key = "sk-test-CUT-" + os.urandom(24).hex()
    register_secret(key)
    return key


def leaks(key: str, text: str, piece: int = 8) -> list[str]:
    """Pieces of ``key`` of ``piece`` characters found in ``text`` (none: nothing leaked).

    The first 12 characters (``sk-test-CUT-``) are a shared prefix, not the secret part.
    """
    secret = key[12:]
    return [
        secret[i : i + piece]
        for i in range(len(secret) - piece + 1)
        if secret[i : i + piece] in text
    ]


def test_redact_then_cut_never_leaves_a_head() -> None:
    key = fresh_key()
    for at in range(0, 60, 7):
        text = "x" * (100 - at) + key + " and more"
        assert not leaks(key, redact_then_cut(text, 100)), at
    naive = ("x" * 90 + key)[:100]  # the old order: the cut key no longer matches
    assert key[:10] in naive


def test_redact_piece_masks_a_key_cut_at_either_end() -> None:
    key = fresh_key()
    head = "output line\n" + key[:20]
    tail = key[-20:] + "\nlast line\n"
    assert redact_piece(head, cut_after=True) == "output line\n" + REDACTED
    assert redact_piece(tail, cut_before=True) == REDACTED + "\nlast line\n"
    assert redact_piece("plain text", cut_before=True, cut_after=True) == "plain text"


def test_a_key_cut_by_another_program_before_an_ellipsis() -> None:
    # pytest's short test summary, or a logger, shortens a line inside the key and marks the
    # cut; the head left no longer matches the key, and went out as it was.
    key = fresh_key()
    summary = f"FAILED test_x.py::test_key - AssertionError: assert '{key[:16]}..."
    assert redact(summary) == f"FAILED test_x.py::test_key - AssertionError: assert '{REDACTED}..."
    assert redact(f"key={key[:40]}\u2026 (cut)") == f"key={REDACTED}\u2026 (cut)"
    assert redact(f"{key[:20]}... and {key[:30]}...") == f"{REDACTED}... and {REDACTED}..."
    # Shorter heads are no more than the key's public prefix: placeholders stay readable.
    for text in (f"{key[:15]}...", "sk-test-CUT-...", f"{key[:20]} ...", f"{key[:20]}x..."):
        assert redact(text) == text


def test_a_short_key_s_head_before_an_ellipsis() -> None:
    register_secret("hunter2hunter2")
    assert redact("password hunter2h...") == f"password {REDACTED}..."
    assert redact("hunter2...") == "hunter2..."  # under 8 characters: too common to hide


def test_known_keys_include_the_environments_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    token = "ghp_" + os.urandom(16).hex()
    aws = os.urandom(20).hex()
    monkeypatch.setenv("GITHUB_TOKEN", token)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", aws)
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false-but-long")
    register_known_keys.cache_clear()
    register_known_keys()
    text = redact_then_cut(f"{token} {aws} false-but-long", 1000)
    assert text == f"{REDACTED} {REDACTED} false-but-long"


# --- provider errors -------------------------------------------------------------------------


def test_a_server_message_echoing_the_key_after_its_cut() -> None:
    key = fresh_key()
    message = "y" * (MESSAGE_CHARS - 20) + f" Authorization: Bearer {key} was refused"
    body = json.dumps({"error": {"message": message}})
    sentence = status_sentence("openai/test", 401, body)
    assert not leaks(key, sentence), sentence
    assert "HTTP 401" in sentence and "set OPENAI_API_KEY to a valid key" in sentence


@pytest.mark.parametrize("status", [401, 500])
async def test_an_error_reply_through_the_provider(
    status: int, caplog: pytest.LogCaptureFixture
) -> None:
    key = "sk-test-CUT-" + os.urandom(24).hex()
    echo = "z" * 290 + f" key={key}"
    retry = RetryPolicy(attempts=2, base_delay_s=0.01, max_delay_s=0.02)
    with FakeOpenAI() as fake:
        fake.script(*[Reply(status=status, error_message=echo)] * 2)
        provider = OpenAIProvider(
            name="openai/test", base_url=fake.base_url, model="test", api_key=key, retry=retry
        )
        try:
            with caplog.at_level(logging.DEBUG), pytest.raises(ProviderError) as caught:
                await provider.complete(ModelRequest(messages=[], tools=[]))
        finally:
            await provider.aclose()
    assert not leaks(key, str(caught.value)), str(caught.value)
    assert not leaks(key, caplog.text)  # the retry's warning (500) and httpx's own lines


def test_every_log_record_is_redacted_once_handlers_are() -> None:
    key = fresh_key()
    handler = logging.StreamHandler(stream=open(os.devnull, "w"))  # noqa: SIM115
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        redact_log_handlers()
        assert any(isinstance(f, RedactingFilter) for f in handler.filters)
        record = logging.LogRecord("cadenza.any", logging.WARNING, __file__, 1, "%s", (key,), None)
        assert handler.filter(record)
        assert record.getMessage() == REDACTED
    finally:
        root.removeHandler(handler)
        handler.stream.close()


# --- tool results ------------------------------------------------------------------------------


async def _result(root: Path, name: str, **arguments: object) -> str:
    prepared = prepare(
        ToolCall(id="1", name=name, arguments=json.dumps(arguments)), default_tools()
    )
    assert isinstance(prepared, PreparedCall)
    return (await run(prepared, ToolContext(root=root, host=MemoryEditor()))).content


async def test_read_file_cuts_a_long_line_after_redacting(tmp_path: Path) -> None:
    key = fresh_key()
    (tmp_path / "config.js").write_text("x" * (MAX_LINE_CHARS - 10) + key + "\n")
    content = await _result(tmp_path, "read_file", path="config.js")
    assert "line cut at" in content and not leaks(key, content)


async def test_search_cuts_a_long_line_after_redacting(tmp_path: Path) -> None:
    key = fresh_key()
    (tmp_path / "config.js").write_text("needle " + "x" * (MAX_LINE_CHARS - 17) + key + "\n")
    content = await _result(tmp_path, "search", pattern="needle")
    assert "config.js" in content and not leaks(key, content)


async def test_run_command_output_cut_across_a_key(tmp_path: Path) -> None:
    key = fresh_key()
    half = DEFAULT_MAX_OUTPUT_BYTES // 2
    # Kept: the first `half` bytes (ending inside the first key) and the last `half` bytes
    # (starting inside the second key); the middle is dropped while the command runs.
    script = (
        "import sys\n"
        f"key = {key!r}\n"
        f"sys.stdout.write('h' * ({half} - 20) + key + 'm' * 100000)\n"
        f"sys.stdout.write(key + 't' * ({half} - 21) + '\\n')\n"
    )
    (tmp_path / "emit.py").write_text(script)
    content = await _result(tmp_path, "run_command", command=f"{sys.executable} emit.py")
    assert "bytes omitted" in content
    assert f"h{REDACTED}\n[..." in content and f"...]\n{REDACTED}t" in content
    assert not leaks(key, content)


async def test_run_command_output_a_test_runner_cut_inside_a_key(tmp_path: Path) -> None:
    key = "db-pass-CUT-" + os.urandom(24).hex()  # no vendor's shape: only its registration hides it
    register_secret(key)
    script = f"print('E   AssertionError: assert ' + repr({key!r})[:24] + '...')\n"
    (tmp_path / "summary.py").write_text(script)
    content = await _result(tmp_path, "run_command", command=f"{sys.executable} summary.py")
    assert f"assert '{REDACTED}..." in content and not leaks(key, content), content


# --- what a face or the headless client shows -------------------------------------------------


def test_progress_end_cuts_after_redacting() -> None:
    key = fresh_key()
    message = "e" * (PROGRESS_END_CHARS - 30) + key
    end = SessionFinished(stop_reason="error", message=message)
    shown = progress_end(end)
    assert len(shown) <= PROGRESS_END_CHARS and not leaks(key, shown), shown


def test_the_clients_diffs_mask_a_key_the_file_holds() -> None:
    key = fresh_key()
    change = FileChange(path="leak.txt", kind="created", before=None, after=f"KEY={key}\n")
    diff = "\n".join(unified_diff(change, max_lines=1000))
    assert f"+KEY={REDACTED}" in diff and not leaks(key, diff)
    assert diff_stat(change).added == 1
