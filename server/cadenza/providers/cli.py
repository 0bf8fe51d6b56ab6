"""Agent CLIs as model backends: one shared turn function plus a small adapter per CLI.

Names: ``cli/claude``, ``cli/codex``, ``cli/gemini``, ``cli/opencode``, ``cli/grok``.

A CLI takes a prompt and prints an answer; it has no native tool calling that Cadenza can use,
so tools are offered by prompt (DESIGN §2 items 2-3): the whole conversation is rendered as text
with the envelope instructions of ``envelope``, and the answer must contain one JSON envelope
``{"content": str, "tool_calls": [{"name", "arguments"}]}``, found by ``find_envelope`` (a
structural scan with the JSON decoder, in a code fence or amid prose).

**Exactly-once repair** (``cli_turn``): an answer without an envelope while tools are offered is
a contract miss; the turn asks again exactly once, with ``CORRECTION_PROMPT``; if that answer has
no envelope either, the FIRST answer's text is accepted as the final answer (no tool calls).
Never more than one retry. A valid envelope with an empty ``tool_calls`` ends the turn.

Each call runs the CLI in its own process group, in an empty temporary folder (its own agent
tools see nothing of the workspace: Cadenza's tools act through the envelope), with a time
limit; on timeout or cancellation the whole group is killed at once (SIGKILL).

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

import asyncio
import contextlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import anyio

from cadenza.messages import AssistantReply, Usage
from cadenza.providers.base import ModelRequest, ProviderError, TextSink
from cadenza.providers.envelope import find_envelope
from cadenza.providers.envelope import map_messages as map_envelope_messages
from cadenza.secrets import redact, secret_from_env

DEFAULT_TIMEOUT_S = 300.0
"""Longest time one CLI call may take before it is killed (seconds)."""
STDERR_TAIL_CHARS = 600
"""How much of a failed CLI's stderr goes into the error (its last characters)."""
PREVIOUS_REPLY_CHARS = 4000
"""How much of a rejected answer the correction prompt quotes back (characters)."""
REAP_TIMEOUT_S = 5.0
"""How long to wait for a killed process to be reaped (seconds)."""
CLI_KEY_ENV = (
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "CODEX_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "XAI_API_KEY",
    "GROK_API_KEY",
    "OPENROUTER_API_KEY",
)
"""Keys a CLI may read from the environment it inherits: hidden from errors if it prints one."""

REPLY_INSTRUCTION = """\
# Your reply
Reply now with exactly one JSON object, {"tool_calls": [...], "content": "..."}, and nothing \
else: no prose around it, no code fence. To act, put the call in tool_calls; an empty \
tool_calls list ends your turn at once, so never describe an action without making its call."""

REQUIRED_CALL = "This reply must contain at least one tool call."

CORRECTION_PROMPT = """\
# Correction
Your previous reply (quoted above) did not contain the required JSON object, so it could not \
be used. Reply again with exactly one JSON object of the form \
{"tool_calls": [{"name": "<tool>", "arguments": {...}}], "content": "<short note>"} and \
nothing else. Use an empty tool_calls list only if the task is done."""
"""Sent once, after a contract miss; tests look for its first line in the second call."""


@dataclass(frozen=True, kw_only=True)
class CliAnswer:
    """What a CLI answered: the model's text, and token counts when the CLI reports them."""

    text: str
    usage: Usage | None = None


def _load_json(stdout: str, who: str) -> Any:
    try:
        return json.loads(stdout)
    except ValueError:
        raise ProviderError(
            redact(f"{who}: the CLI's output is not the JSON it should print: {stdout[:200]!r}")
        ) from None


def read_claude(stdout: str, who: str) -> CliAnswer:
    """``claude -p --output-format json``: one object; ``result`` is the answer.

    Raises:
        ProviderError: Not JSON, no ``result``, or ``is_error`` set.
    """
    data = _load_json(stdout, who)
    if not isinstance(data, dict) or not isinstance(data.get("result"), str):
        raise ProviderError(redact(f"{who}: no `result` in the CLI's JSON: {stdout[:200]!r}"))
    if data.get("is_error"):
        raise ProviderError(redact(f"{who}: the CLI reported an error: {data['result'][:500]}"))
    usage = data.get("usage")
    tokens = None
    if isinstance(usage, dict):
        prompt = sum(
            int(usage.get(k) or 0)
            for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        )
        tokens = Usage(prompt_tokens=prompt, completion_tokens=int(usage.get("output_tokens") or 0))
    return CliAnswer(text=data["result"], usage=tokens)


def read_gemini(stdout: str, who: str) -> CliAnswer:
    """``gemini --output-format json``: one object; ``response`` is the answer.

    Raises:
        ProviderError: Not JSON, an ``error`` object, or no ``response``.
    """
    data = _load_json(stdout, who)
    if isinstance(data, dict) and data.get("error"):
        raise ProviderError(redact(f"{who}: the CLI reported an error: {data['error']}"))
    if not isinstance(data, dict) or not isinstance(data.get("response"), str):
        raise ProviderError(redact(f"{who}: no `response` in the CLI's JSON: {stdout[:200]!r}"))
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
            raise ProviderError(redact(f"{who}: the CLI reported an error: {detail}"))
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


def render_prompt(request: ModelRequest) -> str:
    """The conversation as one prompt: system text with the envelope instructions, then turns.

    Assistant turns appear as the envelopes they were; tool results as user turns (the same
    rendering as the JSON-envelope mode of HTTP servers).
    """
    parts: list[str] = []
    turns: list[str] = []
    for message in map_envelope_messages(request.messages, request.tools, request.ending):
        if message["role"] == "system":
            parts.append(message["content"])
        else:
            turns.append(f"## {message['role']}\n{message['content']}")
    if turns:
        parts.append("# Conversation so far\n" + "\n\n".join(turns))
    instruction = REPLY_INSTRUCTION
    if request.tools and request.tool_choice == "required":
        instruction += "\n" + REQUIRED_CALL
    parts.append(instruction)
    return "\n\n".join(parts)


def correction_prompt(prompt: str, rejected: str) -> str:
    """The second prompt after a contract miss: the first, the rejected answer, the correction."""
    quoted = rejected[:PREVIOUS_REPLY_CHARS]
    return f"{prompt}\n\n## assistant (previous reply, rejected)\n{quoted}\n\n{CORRECTION_PROMPT}"


RunPrompt = Callable[[str], Awaitable[CliAnswer]]
"""Runs one prompt through a CLI and returns its answer."""


async def cli_turn(request: ModelRequest, run: RunPrompt, *, id_prefix: str) -> AssistantReply:
    """One model turn through a prompt-in, text-out backend, with exactly-once repair.

    Args:
        request: The conversation and the tools offered.
        run: Calls the backend once (the CLI); raises ``ProviderError`` when it fails.
        id_prefix: Tool call ids are ``{id_prefix}_{i}``.

    Returns:
        The envelope's content and calls; or, after two answers without an envelope, the
        first answer's text with no calls (the final answer). Without tools offered, an answer
        without an envelope is the final answer at once.

    Raises:
        ProviderError: The backend failed (the repair never retries failures, only misses).
    """
    prompt = render_prompt(request)
    first = await run(prompt)
    found = find_envelope(first.text, id_prefix=id_prefix)
    if found is None and request.tools:
        second = await run(correction_prompt(prompt, first.text))
        repaired = find_envelope(second.text, id_prefix=id_prefix)
        if repaired is not None:
            return _reply(repaired, second.usage)
    if found is None:
        return AssistantReply(content=first.text.strip(), finish_reason="stop", usage=first.usage)
    return _reply(found, first.usage)


def _reply(found: tuple[str, list[Any]], usage: Usage | None) -> AssistantReply:
    content, calls = found
    return AssistantReply(
        content=content,
        tool_calls=calls,
        finish_reason="tool_calls" if calls else "stop",
        usage=usage,
    )


def _kill_group(process: asyncio.subprocess.Process) -> None:
    """SIGKILL the process's whole group (it leads a session of its own)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


async def _reap(process: asyncio.subprocess.Process) -> None:
    with anyio.CancelScope(shield=True), anyio.move_on_after(REAP_TIMEOUT_S):
        await process.wait()


@dataclass(frozen=True, kw_only=True)
class CliResult:
    """A finished CLI call: exit status and decoded output."""

    returncode: int
    stdout: str
    stderr: str


async def run_process(
    argv: list[str], stdin: str | None, *, timeout_s: float, cwd: Path, who: str
) -> CliResult:
    """Run ``argv`` in a new process group; kill the group on timeout or cancellation.

    Args:
        argv: The command line.
        stdin: Text for stdin (then closed), or None for no stdin.
        timeout_s: Limit for the whole call (seconds).
        cwd: Working folder.
        who: Names the provider in errors.

    Raises:
        ProviderError: The program cannot start, or it ran past ``timeout_s`` (it is killed).
    """
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            start_new_session=True,
        )
    except OSError as exc:
        raise ProviderError(f"{who}: cannot run {argv[0]}: {exc}") from None
    data = stdin.encode("utf-8") if stdin is not None else None
    try:
        with anyio.fail_after(timeout_s):
            out, err = await process.communicate(data)
    except TimeoutError:
        _kill_group(process)
        await _reap(process)
        raise ProviderError(
            f"{who}: {Path(argv[0]).name} gave no answer within {timeout_s:g} s and was stopped"
        ) from None
    except BaseException:  # cancelled: the CLI must not outlive the turn
        _kill_group(process)
        await _reap(process)
        raise
    _kill_group(process)  # whatever it left running in its group
    returncode = process.returncode if process.returncode is not None else -1
    return CliResult(
        returncode=returncode,
        stdout=out.decode("utf-8", "replace"),
        stderr=err.decode("utf-8", "replace"),
    )


class CliProvider:
    """``cli/NAME[/MODEL]``: an agent CLI driven through the JSON-envelope prompt contract.

    Args:
        name: ``PROVIDER/MODEL`` as the person named it (e.g. ``cli/claude``).
        adapter: How to run the CLI.
        model: The CLI's own model (``--model``), or None for its default.
        executable: Replaces the adapter's program (name or path).
        args: Replaces the adapter's ``args``.
        timeout_s: Limit per CLI call (seconds).
    """

    def __init__(
        self,
        *,
        name: str,
        adapter: CliAdapter,
        model: str | None = None,
        executable: str | None = None,
        args: list[str] | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self._name = name
        self.adapter = adapter if args is None else replace(adapter, args=tuple(args))
        self.model = model
        self.executable = executable or os.environ.get(adapter.env_var) or adapter.executable
        self.timeout_s = timeout_s
        self._ids = itertools.count(1)
        for variable in CLI_KEY_ENV:
            secret_from_env(variable)

    @property
    def name(self) -> str:
        """``PROVIDER/MODEL``."""
        return self._name

    def _program(self) -> str:
        found = shutil.which(self.executable)
        if found is None:
            raise ProviderError(
                f"{self._name}: {self.executable!r} is not installed or not on PATH "
                f"(set {self.adapter.env_var} to its path)"
            )
        return found

    async def run_once(self, prompt: str) -> CliAnswer:
        """Run the CLI once on ``prompt`` and find the answer in its output.

        Raises:
            ProviderError: Not installed, timed out, exited non-zero (with its stderr's tail),
                or printed no answer in the adapter's format.
        """
        argv = self.adapter.argv(self._program(), self.model, prompt)
        stdin = prompt if self.adapter.prompt_via == "stdin" else None
        with tempfile.TemporaryDirectory(prefix="cadenza-cli-") as folder:
            result = await run_process(
                argv, stdin, timeout_s=self.timeout_s, cwd=Path(folder), who=self._name
            )
        if result.returncode != 0:
            tail = result.stderr.strip()[-STDERR_TAIL_CHARS:] or result.stdout.strip()[-200:]
            raise ProviderError(
                redact(
                    f"{self._name}: {Path(argv[0]).name} exited with status "
                    f"{result.returncode}: {tail}"
                )
            )
        return self.adapter.read(result.stdout, self._name)

    async def complete(
        self, request: ModelRequest, on_text: TextSink | None = None
    ) -> AssistantReply:
        """Run one turn (see ``cli_turn``); the CLI's answer arrives whole, not streamed.

        Raises:
            ProviderError: As ``run_once``.
        """
        return await cli_turn(request, self.run_once, id_prefix=f"cli_{next(self._ids)}")

    async def aclose(self) -> None:
        """Nothing to release: each call's process is gone when the call returns."""
