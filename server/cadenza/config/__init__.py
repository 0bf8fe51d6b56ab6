"""Configuration: ``cadenza.toml`` (user config dir, then workspace), environment, init options.

What a workspace's own file may set, and what only in a trusted folder: ``config.workspace``.

Precedence for the model, highest first: the ``model`` argument of
``cadenza.startSession``, ``initializationOptions``, ``CADENZA_MODEL``, ``cadenza.toml``, the
embedded default. Secrets never live here: API keys come only from the environment.

The ground floor: it imports nothing above it, so the settings of MCP servers (``config.mcp``)
and of the interactive browser (``config.browser``) live here, not with the code that uses them.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    ValidationError,
    field_validator,
)
from pydantic.alias_generators import to_camel

from cadenza.config.browser import BrowserSettings
from cadenza.config.mcp import McpConfig
from cadenza.config.workspace import (
    WorkspaceSettings,
    read_workspace_settings,
    refused_note,
    untrusted_note,
)
from cadenza.permission_rules import RuleSet, parse_rule
from cadenza.types import Ending

APP_NAME = "cadenza"
DEFAULT_LOCAL_MODEL = "local/qwen2.5-coder-1.5b"
MAX_CANDIDATES = 8
"""``[loop] candidates`` at most: each is a model request at once and a test run."""
LOCAL_CANDIDATES = 3
"""``[loop] candidates`` of the embedded models' loop: the agent slots their server gets, and the
replies tried after failed tests (docs/local-model.md, "Candidates")."""
MAX_CONTEXT_SIZE = 131_072
"""``contextSize`` at most (tokens): llama-server holds a KV cache this long per slot, so a
larger value (from any source, a workspace's ``cadenza.toml`` included) could take all memory."""


class ConfigError(Exception):
    """A config file or option set is invalid; the message names the file and field."""


ENV_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
"""An environment variable's name: ``api_key_env`` holds a name, never the key itself."""


class ModelPrice(BaseModel):
    """A model's price per million tokens, for a cost the provider does not report."""

    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0, description="Price of a million prompt tokens.")
    output: float = Field(ge=0, description="Price of a million completion tokens.")
    currency: str = Field(default="USD", pattern=r"^[A-Z]{3}$", description="ISO 4217 code.")


class ProviderOptions(BaseModel):
    """Settings of one provider, under ``[providers.NAME]`` (``NAME`` as in ``NAME/MODEL``).

    CLI adapters use ``[providers."cli/claude"]`` and so on. Secrets never live here: an API
    key is read from the environment variable named by ``api_key_env``. See docs/providers.md.
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True, alias_generator=to_camel)

    kind: Literal["openai", "anthropic"] | None = Field(
        default=None,
        description="Wire API of a provider name Cadenza does not know (e.g. a second server).",
    )
    base_url: str | None = Field(default=None, description="e.g. http://127.0.0.1:8080/v1")
    api_key_env: str | None = Field(
        default=None,
        pattern=ENV_NAME_PATTERN,
        description="Name of the environment variable holding the API key.",
    )
    headers: dict[str, str] = Field(
        default_factory=dict, description="Extra HTTP headers (not for secrets)."
    )
    stream: bool | None = Field(default=None, description="Stream replies (server-sent events).")
    envelope: bool | None = Field(
        default=None, description="JSON-envelope mode with response_format json_schema."
    )
    timeout_s: float | None = Field(
        default=None, gt=0, description="Read timeout of a request, or a CLI call's limit (s)."
    )
    attempts: int | None = Field(
        default=None, ge=1, le=10, description="HTTP attempts per model call (1: no retry)."
    )
    extra_body: dict[str, Any] = Field(
        default_factory=dict, description="Extra request body fields, sent as they are."
    )
    prices: dict[str, ModelPrice] = Field(
        default_factory=dict,
        description="Prices per million tokens by model name, for the cost of each call.",
    )
    executable: str | None = Field(
        default=None, description="CLI adapters: the program to run (name or path)."
    )
    args: list[str] | None = Field(
        default=None, description="CLI adapters: arguments replacing the adapter's defaults."
    )


class PermissionConfig(BaseModel):
    """``[permissions]``: which tools ask first, how long a prompt waits, allow/deny rules.

    The rules (``cadenza.permission_rules``: ``TOOL`` or ``TOOL:PATTERN``) count only from
    the person's own ``cadenza.toml``: a workspace's file never sets ``[permissions]``, and
    ``initializationOptions`` may not set rules (``lsp.options``).
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True, alias_generator=to_camel)

    gated: list[str] = Field(
        default_factory=lambda: ["run_command", "delete_file", "browse_interactive"],
        description="Tools that ask before each call (allow/reject once or always).",
    )
    timeout_s: float = Field(
        default=300.0,
        gt=0,
        le=86_400,
        description="Seconds a permission prompt waits; then the call gets a timeout result.",
    )
    allow: list[str] = Field(
        default_factory=list,
        description="Calls that run without asking, e.g. 'run_command:pytest *' (deny wins).",
    )
    deny: list[str] = Field(
        default_factory=list,
        description="Calls refused without asking, e.g. 'run_command:rm *' or 'delete_file'.",
    )

    @field_validator("allow", "deny")
    @classmethod
    def _rules(cls, value: list[str]) -> list[str]:
        """Each rule must read (``permission_rules.parse_rule``); the message says why not."""
        for text in value:
            parse_rule(text)  # a RuleError is a ValueError: pydantic reports it
        return value

    def rule_set(self) -> RuleSet:
        """The allow and deny rules, read."""
        return RuleSet.parse(allow=self.allow, deny=self.deny)

    def with_rules(self, allow: list[str], deny: list[str]) -> PermissionConfig:
        """A copy with more of the person's rules (``cadenza serve --allow``, ``--deny``)."""
        return self.model_copy(update={"allow": self.allow + allow, "deny": self.deny + deny})


class LoopConfig(BaseModel):
    """``[loop]``: the loop variant (``cadenza.engine.variants``).

    Unset keys keep the provider's default (the ``local`` provider's measured one, or the
    hosted models' one).
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True, alias_generator=to_camel)

    ending: Ending | None = Field(
        default=None, description="empty: a reply with no call ends; complete: the call does."
    )
    prime: StrictBool | None = Field(
        default=None, description="The files the task names in the first message."
    )
    repeats: Literal["observe", "run"] | None = Field(
        default=None, description="observe: a repeated identical call gets a note, not a rerun."
    )
    stuck_limit: StrictInt | None = Field(
        default=None, ge=0, le=100, description="Noted repeats before the movement stops (0: off)."
    )
    edit: Literal["all", "old_string", "write_file", "line_range", "text"] | None = Field(
        default=None,
        description="The edit tool offered (all: every one; text: code in fenced blocks).",
    )
    core_tools: StrictBool | None = Field(
        default=None, description="Only read/list/search/create plus the edit tool."
    )
    repair: StrictBool | None = Field(
        default=None, description="Exactly-once repair of a reply cut by the token limit."
    )
    edit_echo: StrictBool | None = Field(
        default=None, description="An edit's result shows the changed lines and how to finish."
    )
    syntax_guard: StrictBool | None = Field(
        default=None, description="Refuse edits that break a file's syntax (py, sh, js)."
    )
    done_gate: StrictBool | None = Field(
        default=None, description="Refuse complete(done) right after a failed call, once."
    )
    checks: Literal["off", "rename", "acted", "all"] | None = Field(
        default=None,
        description=(
            "Checks before done: rename leftovers; all: also that something changed, the"
            " errors and the tests; acted: those, only after edits or commands."
        ),
    )
    rules: StrictBool | None = Field(
        default=None, description="Project rule files (AGENTS.md...) in the system prompt."
    )
    intel_tools: (
        list[Literal["find_references", "go_to_definition", "rename_symbol", "diagnostics"]] | None
    ) = Field(
        default=None,
        description="The code-intelligence tools offered when a language server serves them.",
    )
    edit_diagnostics: StrictBool | None = Field(
        default=None, description="An edit's result carries the errors it introduced."
    )
    test_feedback: StrictBool | None = Field(
        default=None, description="The tests run after each change; the model reads the result."
    )
    reply_budget: StrictBool | None = Field(
        default=None,
        description="Reply tokens sized from the files in play; a repeating reply is stopped.",
    )
    plan: StrictBool | None = Field(
        default=None, description="The agent keeps a to-do list (update_plan) the editor shows."
    )
    candidates: StrictInt | None = Field(
        default=None,
        ge=0,
        le=MAX_CANDIDATES,
        description="After failed tests, replies asked at once and tried on a copy (0/1: off).",
    )

    def agent_slots(self) -> int:
        """The embedded server's agent slots: one per candidate reply, each with its context.

        Unset: the local loop's ``LOCAL_CANDIDATES``.
        """
        return max(1, LOCAL_CANDIDATES if self.candidates is None else self.candidates)


class ChecksConfig(BaseModel):
    """``[checks]``: the done check ``tests`` (``cadenza.engine.project_tests``).

    A workspace's own ``cadenza.toml`` may set ``test`` only in a folder the person trusted
    (``config.workspace``: it names a program); the command never runs unasked either way
    (the permission gate asks as for any ``run_command``).
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True, alias_generator=to_camel)

    test: str | None = Field(
        default=None,
        description='The test command (run at the workspace root); unset: detected; "": none.',
    )
    test_timeout_s: float = Field(
        default=120.0, gt=0, le=600, description="Seconds the test command may run."
    )


class CadenzaConfig(BaseModel):
    """Settings of the server, validated (units in the field descriptions)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    model: str | None = Field(default=None, description="PROVIDER/MODEL, e.g. openai/gpt-4.1")
    models: list[str] = Field(
        default_factory=list,
        description="More PROVIDER/MODEL names the editors' model pickers offer.",
    )
    max_steps: int = Field(
        default=25, ge=1, le=1000, alias="maxSteps", description="Model requests per session."
    )
    max_tokens: int | None = Field(
        default=None, ge=16, alias="maxTokens", description="Completion tokens per model request."
    )
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    time_budget_s: float | None = Field(
        default=None,
        ge=0,
        le=86_400,
        alias="timeBudgetS",
        description=(
            "Wall time a session's run may take (seconds), time waiting for the person not "
            "counted; 0: none; unset: 600 for local models, none for the others."
        ),
    )
    context_size: int = Field(
        default=8192,
        ge=512,
        le=MAX_CONTEXT_SIZE,
        alias="contextSize",
        description=f"The model's context window (tokens), at most {MAX_CONTEXT_SIZE}.",
    )
    providers: dict[str, ProviderOptions] = Field(
        default_factory=dict, description="Per-provider settings, keyed by provider name."
    )
    review: Literal["auto", "confirm"] = Field(
        default="auto",
        description="auto: edits apply at once; confirm: the person reviews each change first.",
    )
    permissions: PermissionConfig = Field(default_factory=PermissionConfig)
    browser: BrowserSettings = Field(
        default_factory=BrowserSettings,
        description="browse_interactive: headless, executablePath, remoteDebuggingPort...",
    )
    mcp: McpConfig = Field(
        default_factory=McpConfig,
        description="MCP servers whose tools each session gets (docs/mcp.md).",
    )
    loop: LoopConfig = Field(
        default_factory=LoopConfig, description="The loop variant (docs/local-model.md)."
    )
    checks: ChecksConfig = Field(
        default_factory=ChecksConfig, description="The done checks' test command and bound."
    )

    def merged(self, overrides: dict[str, Any], source: str) -> CadenzaConfig:
        """A copy with ``overrides`` applied (camelCase or snake_case keys).

        Raises:
            ConfigError: An override is unknown or invalid; the message names ``source``.
        """
        # One spelling per field (the camelCase alias where there is one): a field given both
        # as ``max_tokens`` and ``maxTokens`` would be rejected as an extra input.
        to_alias = {
            name: info.alias for name, info in CadenzaConfig.model_fields.items() if info.alias
        }
        data = self.model_dump(exclude_unset=True, by_alias=True)
        for key, value in overrides.items():
            key = to_alias.get(key, key)
            section = SECTIONS.get(key)
            if section and isinstance(value, dict) and isinstance(data.get(key), dict):
                # Key by key: an override of one knob keeps the others the user set.
                ours = section.model_validate(data[key]).model_dump(
                    exclude_unset=True, by_alias=True
                )
                fields = section.model_fields
                theirs = {(fields[k].alias if k in fields else k): v for k, v in value.items()}
                value = {**ours, **theirs}
            data[key] = value
        return _validate(data, source)


SECTIONS: dict[str, type[BaseModel]] = {
    "loop": LoopConfig,
    "checks": ChecksConfig,
    "permissions": PermissionConfig,
}
"""Tables merged key by key across the config sources."""


def _validate(data: dict[str, Any], source: str) -> CadenzaConfig:
    try:
        return CadenzaConfig.model_validate(data)
    except ValidationError as exc:
        fields = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in exc.errors()
        )
        raise ConfigError(f"{source}: {fields}") from None


def user_config_dir() -> Path:
    """The platform's per-user config folder for Cadenza."""
    return Path(platformdirs.user_config_dir(APP_NAME))


def _user_file(path: Path) -> dict[str, Any]:
    """The user's own ``cadenza.toml`` (trusted: read as it is), or {} when absent.

    Raises:
        ConfigError: Not UTF-8 TOML.
    """
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from None


def _own_config() -> CadenzaConfig:
    """The person's own settings: the defaults and their ``cadenza.toml``.

    Raises:
        ConfigError: Their file is not valid TOML or has an invalid field.
    """
    user_path = user_config_dir() / "cadenza.toml"
    return CadenzaConfig().merged(_user_file(user_path), str(user_path))


def workspace_settings(
    workspace: Path, own: CadenzaConfig | None = None
) -> WorkspaceSettings | None:
    """The workspace's ``cadenza.toml``, classified, a raise of the person's bounds held.

    Args:
        workspace: The workspace folder.
        own: The person's own settings (default: their ``cadenza.toml``, or the defaults
            when it cannot be used).

    Raises:
        ValueError: As ``config.workspace.read_workspace_settings``.
    """
    settings = read_workspace_settings(workspace)
    if settings is None:
        return None
    if own is None:
        try:
            own = _own_config()
        except ConfigError:
            own = CadenzaConfig()
    limits = {
        "maxSteps": own.max_steps,
        "maxTokens": own.max_tokens,
        "contextSize": own.context_size,
        "checks.testTimeoutS": own.checks.test_timeout_s,
    }
    return settings.within(limits)


def load_config(
    workspace: Path | None,
    warnings: list[str] | None = None,
    *,
    trusted: bool = False,
    note_held: bool = True,
) -> CadenzaConfig:
    """Load ``cadenza.toml`` from the user config dir, then the workspace, then the environment.

    The workspace's file counts only as far as ``config.workspace`` allows: its safe settings
    always, its held ones (model, providers, MCP servers, the test command, a bound above the
    person's own...) only when ``trusted``, the others never. A workspace file that cannot be
    used (a link out of the folder, not TOML, an invalid value) is skipped with a warning: it
    never costs the person their own settings.

    Args:
        workspace: The workspace folder, or None.
        warnings: Receives a sentence for each workspace setting or file that was ignored.
        trusted: The person trusts the workspace folder (``host.trust``).
        note_held: Say in ``warnings`` which held settings an untrusted folder had (off when
            the caller asks the person about them first).

    Raises:
        ConfigError: The user's file is not valid TOML or has an invalid field.
    """
    config = _own_config()
    notes: list[str] = []
    settings = None
    if workspace is not None:
        try:
            settings = workspace_settings(workspace, config)
        except ValueError as exc:
            notes.append(f"Cadenza ignored {exc}")
    if settings is not None:
        if settings.refused:
            notes.append(refused_note(settings))
        if settings.held and not trusted and note_held:
            notes.append(untrusted_note(settings))
        data = settings.with_held() if trusted else settings.safe
        try:
            config = config.merged(data, str(settings.path))
        except ConfigError as exc:  # the message starts with the file's path
            notes.append(f"Cadenza ignored {exc}")
    if warnings is not None:
        warnings.extend(notes)
    env_model = os.environ.get("CADENZA_MODEL")
    if env_model:
        config = config.merged({"model": env_model}, "CADENZA_MODEL")
    return config
