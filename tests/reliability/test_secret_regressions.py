"""Regression tests for the secret leaks suite 6 found (docs/lab/reliability.md)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cadenza.engine.events import FileEdited
from cadenza.engine.session import Session
from cadenza.messages import ToolCall
from cadenza.secrets import REDACTED, register_known_keys, register_secret
from cadenza.tools.base import ToolContext
from cadenza.tools.dispatch.execution import PreparedCall, prepare, run
from cadenza.tools.registry import default_tools
from tests.doubles import MemoryEditor, ScriptedProvider, reply
from tests.doubles import call as call_tool

SECRET = "sk-test-REGRESSION-" + os.urandom(8).hex()


async def _call(root: Path, name: str, arguments: str) -> tuple[str, MemoryEditor, object]:
    prepared = prepare(ToolCall(id="1", name=name, arguments=arguments), default_tools())
    assert isinstance(prepared, PreparedCall)
    editor = MemoryEditor()
    result = await run(prepared, ToolContext(root=root, host=editor))
    return result.content, editor, result


async def test_tool_results_redact_registered_keys(tmp_path: Path) -> None:
    # Found by suite 6: `run_command env` and reading a workspace .env put the API key into the
    # tool result, hence into cadenza/sessionUpdate, the transcript and the next model request.
    register_secret(SECRET)
    (tmp_path / ".env").write_text(f"OPENAI_API_KEY={SECRET}\n")
    content, _, _ = await _call(tmp_path, "read_file", '{"path": ".env"}')
    assert SECRET not in content and REDACTED in content
    content, _, _ = await _call(tmp_path, "run_command", '{"command": "cat .env"}')
    assert SECRET not in content and REDACTED in content


async def test_edit_diffs_redact_keys_but_the_file_keeps_them(tmp_path: Path) -> None:
    # Found by suite 6: the diff of an edit to .env (tool_call_update, transcript) held the key.
    # Redacted where it leaves (the FileEdited event); the session keeps the exact text, which
    # its test check compares with the disk.
    register_secret(SECRET)
    (tmp_path / ".env").write_text(f"OPENAI_API_KEY={SECRET}\n")
    provider = ScriptedProvider(
        [
            reply(call_tool("edit_file", "e1", path=".env", old_string="\n", new_string="\nX=1\n")),
            reply(content="done"),
        ]
    )
    editor = MemoryEditor()
    session = Session(session_id="s1", task="t", root=tmp_path, provider=provider, editor=editor)
    await session.run()
    assert (tmp_path / ".env").read_text() == f"OPENAI_API_KEY={SECRET}\nX=1\n"
    assert editor.edits and SECRET in editor.edits[0].new_text  # what was applied: exact
    assert session.rt.written[(tmp_path / ".env").resolve()] == f"OPENAI_API_KEY={SECRET}\nX=1\n"
    published = [e for e in editor.events if isinstance(e, FileEdited)]
    assert published and all(SECRET not in (e.old_text or "") + e.new_text for e in published)
    assert REDACTED in published[0].new_text
    assert all(SECRET not in str(r.messages) for r in provider.requests)


async def test_keys_of_providers_not_in_use_are_redacted_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Found by suite 6: ANTHROPIC_API_KEY in the environment of a server whose sessions use
    # openai/... was never registered, so `run_command env` showed it.
    other = "sk-ant-test-REGRESSION-" + os.urandom(8).hex()
    monkeypatch.setenv("ANTHROPIC_API_KEY", other)
    register_known_keys.cache_clear()
    content, _, _ = await _call(tmp_path, "run_command", '{"command": "env"}')
    assert other not in content and "ANTHROPIC_API_KEY=" + REDACTED in content
