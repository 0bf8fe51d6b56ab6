"""How each agent CLI is run and where its answer is in what it prints.

Adapters, from each CLI's documentation of its non-interactive mode:

- claude: ``claude -p --output-format json``, prompt on stdin; the answer is the ``result``
  field ("CLI reference" and "Headless mode", https://docs.claude.com/en/docs/claude-code).
- codex: ``codex exec --skip-git-repo-check --sandbox read-only -``, prompt on stdin (``-``);
  the final message is all of stdout ("Non-interactive mode",
  https://developers.openai.com/codex/noninteractive).
- gemini: ``gemini --output-format json -p PROMPT``; the answer is the ``response`` field
  ("Headless mode reference", https://geminicli.com/docs/cli/headless/).
- opencode: ``opencode run --format json``, prompt on stdin; JSON lines, the answer is the text
  of the ``text`` events' ``part`` ("CLI > run", https://opencode.ai/docs/cli/).
- grok: ``grok --format json --prompt PROMPT``; JSON lines, the answer is the ``text`` events.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from cadenza.messages import Usage
from cadenza.providers.base import ProviderError
from cadenza.providers.cli_turn import CliAnswer
from cadenza.providers.replies import cached_prompt_tokens, reported_error
from cadenza.secrets import redact_then_cut


def _quoted(stdout: str) -> str:
    """The start of a CLI's output for an error, redacted before it is cut."""
    return repr(redact_then_cut(stdout, 200, ""))


def _load_json(stdout: str, who: str) -> Any:
    try:
        return json.loads(stdout)
    except ValueError:
        raise ProviderError(
            f"{who}: the CLI's output is not the JSON it should print: "
            f"{redact_then_cut(stdout, 200, '')!r}"
        ) from None


def read_claude(stdout: str, who: str) -> CliAnswer:
    """``claude -p --output-format json``: one object; ``result`` is the answer.

    Raises:
        ProviderError: Not JSON, no ``result``, or ``is_error`` set.
    """
    data = _load_json(stdout, who)
    if not isinstance(data, dict) or not isinstance(data.get("result"), str):
        raise ProviderError(f"{who}: no `result` in the CLI's JSON: {_quoted(stdout)}")
    if data.get("is_error"):
        raise reported_error(who, "CLI", redact_then_cut(data["result"], 500, ""))
    usage = data.get("usage")
    tokens = None
    if isinstance(usage, dict):
        tokens = Usage(
            prompt_tokens=cached_prompt_tokens(usage),
            completion_tokens=int(usage.get("output_tokens") or 0),
        )
    return CliAnswer(text=data["result"], usage=tokens)


def read_gemini(stdout: str, who: str) -> CliAnswer:
    """``gemini --output-format json``: one object; ``response`` is the answer.

    Raises:
        ProviderError: Not JSON, an ``error`` object, or no ``response``.
    """
    data = _load_json(stdout, who)
    if isinstance(data, dict) and data.get("error"):
        raise reported_error(who, "CLI", data["error"])
    if not isinstance(data, dict) or not isinstance(data.get("response"), str):
        raise ProviderError(f"{who}: no `response` in the CLI's JSON: {_quoted(stdout)}")
    return CliAnswer(text=data["response"])


def _json_lines(stdout: str) -> list[dict[str, Any]]:
    events = []
    for line in stdout.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            events.append(value)
    return events


def _read_events(stdout: str, who: str, text_of: Callable[[dict[str, Any]], Any]) -> CliAnswer:
    events = _json_lines(stdout)
    if not events:  # an older version printing plain text
        return CliAnswer(text=stdout.strip())
    for event in events:
        if event.get("type") == "error":
            detail = event.get("message") or event.get("error") or event
            raise reported_error(who, "CLI", detail)
    texts = [text_of(e) for e in events if e.get("type") == "text"]
    return CliAnswer(text="\n\n".join(t for t in texts if isinstance(t, str)))


def read_opencode(stdout: str, who: str) -> CliAnswer:
    """``opencode run --format json``: JSON lines; ``text`` events carry ``part.text``.

    Raises:
        ProviderError: An ``error`` event.
    """
    return _read_events(stdout, who, lambda e: (e.get("part") or {}).get("text"))


def read_grok(stdout: str, who: str) -> CliAnswer:
    """``grok --format json``: JSON lines; ``text`` events carry ``text``.

    Raises:
        ProviderError: An ``error`` event.
    """
    return _read_events(stdout, who, lambda e: e.get("text"))


def read_plain(stdout: str, who: str) -> CliAnswer:
    """All of stdout is the answer (``codex exec`` prints only the final message there)."""
    return CliAnswer(text=stdout.strip())


@dataclass(frozen=True, kw_only=True)
class CliAdapter:
    """How to run one agent CLI.

    The command line is ``executable, *args, [model_flag, model], *tail`` followed by the
    prompt when ``prompt_via == "argument"``; with ``"stdin"`` the prompt is written to stdin.

    Attributes:
        name: ``claude`` in ``cli/claude``.
        executable: Program name or path; ``CADENZA_CLI_<NAME>`` or config may replace it.
        args: Arguments before the model flag; config ``args`` may replace them.
        tail: Arguments that must come last (e.g. ``-p`` before an argument prompt).
        prompt_via: Where the prompt goes.
        model_flag: The flag naming the CLI's model (for ``cli/claude/sonnet``).
        read: Finds the answer in the CLI's stdout.
    """

    name: str
    executable: str
    args: tuple[str, ...]
    tail: tuple[str, ...] = ()
    prompt_via: Literal["stdin", "argument"]
    model_flag: str | None = "--model"
    read: Callable[[str, str], CliAnswer] = field(repr=False)

    @property
    def env_var(self) -> str:
        """The environment variable that overrides the executable."""
        return f"CADENZA_CLI_{self.name.upper()}"

    def argv(self, executable: str, model: str | None, prompt: str) -> list[str]:
        """The full command line for one call."""
        argv = [executable, *self.args]
        if model and self.model_flag:
            argv += [self.model_flag, model]
        argv += self.tail
        if self.prompt_via == "argument":
            argv.append(prompt)
        return argv


ADAPTERS: dict[str, CliAdapter] = {
    a.name: a
    for a in (
        CliAdapter(
            name="claude",
            executable="claude",
            args=("-p", "--output-format", "json"),
            prompt_via="stdin",
            read=read_claude,
        ),
        CliAdapter(
            name="codex",
            executable="codex",
            args=("exec", "--skip-git-repo-check", "--sandbox", "read-only"),
            tail=("-",),
            prompt_via="stdin",
            read=read_plain,
        ),
        CliAdapter(
            name="gemini",
            executable="gemini",
            args=("--output-format", "json"),
            tail=("-p",),
            prompt_via="argument",
            read=read_gemini,
        ),
        CliAdapter(
            name="opencode",
            executable="opencode",
            args=("run", "--format", "json"),
            prompt_via="stdin",
            read=read_opencode,
        ),
        CliAdapter(
            name="grok",
            executable="grok",
            args=("--format", "json"),
            tail=("--prompt",),
            prompt_via="argument",
            read=read_grok,
        ),
    )
}
