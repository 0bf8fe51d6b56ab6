"""Why nothing came goes to the editor's log: an invoked completion past the time limit, and
the first request a model that cannot fill in the middle gets; ``cadenza complete`` prints it."""

from __future__ import annotations

import argparse
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from lsprotocol import types
from pygls.workspace import TextDocument

from cadenza.client import complete as complete_module
from cadenza.client.complete import Completion, complete_main
from cadenza.host.completions import FAILED, CompletionAnswer
from cadenza.lsp import completions

URI = "file:///w/a.py"


class TimedOut:
    async def complete(self, query: Any) -> CompletionAnswer:
        detail = "the model server did not answer within 60 s"
        return CompletionAnswer(text="", outcome="timeout", detail=detail)


class Unsupported:
    """Why completions are off, in every answer; said before from the second on."""

    def __init__(self) -> None:
        self.answers = 0

    async def complete(self, query: Any) -> CompletionAnswer:
        self.answers += 1
        detail = "inline completions are off: openai/x cannot fill in the middle"
        return CompletionAnswer(
            text="", outcome="unsupported", detail=detail, said_before=self.answers > 1
        )


class Failed:
    async def complete(self, query: Any) -> CompletionAnswer:
        return CompletionAnswer(text="", outcome="failed", detail=FAILED)


class NothingToAdd:
    async def complete(self, query: Any) -> CompletionAnswer:
        return CompletionAnswer(text="", outcome="completed")


def server(service: Any = None) -> Any:
    logged: list[types.LogMessageParams] = []
    workspace = SimpleNamespace(
        text_documents={URI: TextDocument(URI, "x = \n")}, folders={}, root_path="/w"
    )
    ls = SimpleNamespace(
        workspace=workspace, window_log_message=logged.append, logged=logged, protocol=None
    )
    ls._cadenza_completions = service or TimedOut()
    return ls


def params(trigger: types.InlineCompletionTriggerKind) -> types.InlineCompletionParams:
    return types.InlineCompletionParams(
        text_document=types.TextDocumentIdentifier(uri=URI),
        position=types.Position(line=0, character=4),
        context=types.InlineCompletionContext(trigger_kind=trigger),
    )


async def test_an_invoked_completion_past_the_time_limit_is_logged() -> None:
    ls = server()
    answer = await completions.inline_completion(
        ls, params(types.InlineCompletionTriggerKind.Invoked)
    )
    assert list(answer.items) == []
    [logged] = ls.logged
    assert logged.type == types.MessageType.Error
    assert logged.message == "no inline completion: the model server did not answer within 60 s"


async def test_an_automatic_completion_past_the_time_limit_stays_silent() -> None:
    ls = server()
    await completions.inline_completion(ls, params(types.InlineCompletionTriggerKind.Automatic))
    assert ls.logged == []


async def test_why_completions_are_off_is_logged_once_never_shown() -> None:
    ls = server(Unsupported())
    for _ in range(3):
        answer = await completions.inline_completion(
            ls, params(types.InlineCompletionTriggerKind.Automatic)
        )
        assert list(answer.items) == []
    [logged] = ls.logged
    assert logged.type == types.MessageType.Warning
    assert logged.message == "inline completions are off: openai/x cannot fill in the middle"


async def test_an_invoked_completion_hears_every_failure_as_an_error() -> None:
    invoked = params(types.InlineCompletionTriggerKind.Invoked)
    unsupported = server(Unsupported())
    for _ in range(2):  # said before to an editor's log, still said to an explicit ask
        await completions.inline_completion(unsupported, invoked)
    assert [(m.type, m.message) for m in unsupported.logged] == 2 * [
        (types.MessageType.Error, "inline completions are off: openai/x cannot fill in the middle")
    ]
    failed = server(Failed())
    await completions.inline_completion(failed, invoked)
    [said] = failed.logged
    assert said.type == types.MessageType.Error and said.message == (
        "no inline completion: the local model server could not answer (the server's log has "
        "the details)"
    )
    quiet = server(NothingToAdd())
    await completions.inline_completion(quiet, invoked)
    assert quiet.logged == []
    automatic = server(Failed())
    await completions.inline_completion(
        automatic, params(types.InlineCompletionTriggerKind.Automatic)
    )
    assert automatic.logged == []


@pytest.mark.parametrize(
    ("completion", "out", "err", "status"),
    [
        (
            Completion(
                text="",
                errors=("no inline completion: the model server did not answer within 60 s",),
            ),
            "",
            "error: no inline completion: the model server did not answer within 60 s\n",
            1,
        ),
        (
            Completion(
                text="",
                errors=("inline completions are off: model smollm2-135m is not pulled",),
            ),
            "",
            "error: inline completions are off: model smollm2-135m is not pulled\n",
            1,
        ),
        (Completion(text="", notes=("a warning",)), "", "note: a warning\n", 0),
        (Completion(text=""), "", "", 0),
        (Completion(text="1"), "1\n", "", 0),
    ],
)
def test_cadenza_complete_fails_when_the_model_did_and_prints_nothing_to_add(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    completion: Completion,
    out: str,
    err: str,
    status: int,
) -> None:
    (tmp_path / "a.py").write_text("x = \n", encoding="utf-8")

    async def fake(target: Any, options: Any) -> Completion:
        return completion

    monkeypatch.setattr(complete_module, "complete", fake)
    args = argparse.Namespace(path=str(tmp_path / "a.py"), line=1, column=5, workspace=None)
    assert complete_main(args) == status
    printed = capsys.readouterr()
    assert (printed.out, printed.err) == (out, err)
