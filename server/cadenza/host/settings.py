"""A session's engine settings from the configuration (shared by the LSP and ACP faces)."""

from __future__ import annotations

from cadenza.config import CadenzaConfig
from cadenza.engine.runtime import SessionSettings
from cadenza.engine.variants import API_LOOP, LOCAL_LOOP, LoopSettings

LOCAL_PREFIX = "local/"


def loop_settings(config: CadenzaConfig, model: str) -> LoopSettings:
    """The loop variant for ``model`` (``PROVIDER/MODEL``).

    The provider's default (``LOCAL_LOOP`` for ``local/``, ``API_LOOP`` for the others), then
    the keys ``[loop]`` sets.
    """
    base = LOCAL_LOOP if model.startswith(LOCAL_PREFIX) else API_LOOP
    changes = config.loop.model_dump(exclude_none=True)
    return base.replace(**changes) if changes else base


LOCAL_TIME_BUDGET_S = 600.0
"""A run's wall time on a local model when the configuration sets none: a small model on a
laptop's CPU takes 20 to 70 s a step, and a task it has not done in ten minutes it rarely does
later."""


def session_settings(config: CadenzaConfig, model: str) -> SessionSettings:
    """The engine settings of a session on ``model`` under ``config``.

    For ``local/`` models the completion bound is always known to the engine (the cut-reply
    repair doubles it): the configured one; else, under the ``reply_budget`` loop variant, one
    sized per step from the task; else the provider's default. Local models also get a time
    budget (``LOCAL_TIME_BUDGET_S``) unless the configuration sets one (0: none).
    """
    loop = loop_settings(config, model)
    local = model.startswith(LOCAL_PREFIX)
    max_tokens = config.max_tokens
    if max_tokens is None and local and not loop.reply_budget:
        from cadenza.providers.local import DEFAULT_MAX_TOKENS  # imported when a local model is

        max_tokens = DEFAULT_MAX_TOKENS
    budget = config.time_budget_s
    if budget is None and local:
        budget = LOCAL_TIME_BUDGET_S
    return SessionSettings(
        max_steps=config.max_steps,
        max_tokens=max_tokens,
        temperature=config.temperature,
        context_size=config.context_size,
        gated_tools=frozenset(config.permissions.gated),
        permission_timeout_s=config.permissions.timeout_s,
        loop=loop,
        test_command=config.checks.test,
        test_timeout_s=config.checks.test_timeout_s,
        time_budget_s=budget or None,
    )
