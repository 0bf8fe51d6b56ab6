"""``cadenza.listPermissions`` and ``cadenza.revokePermission``: the rules that answer prompts."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from cadenza.schema.base import SparseWireModel, WireModel

RuleSource = Literal["user", "workspace"]
"""``user``: the person's own ``cadenza.toml``; ``workspace``: an "always" answer remembered
for this workspace in the person's state."""


class ListPermissionsArgs(SparseWireModel):
    """``{rootUri?}`` (may be ``{}``): the workspace whose remembered rules are listed."""

    root_uri: str | None = Field(default=None, min_length=1)


class PermissionRuleItem(WireModel):
    """``{rule, decision, source, revocable}``.

    Attributes:
        rule: ``TOOL`` or ``TOOL:PATTERN`` (e.g. ``run_command:pytest *``).
        decision: ``allow`` (runs without asking) or ``deny`` (refused without asking).
        source: Where it comes from.
        revocable: ``cadenza.revokePermission`` can forget it (a rule of the person's
            ``cadenza.toml`` is changed there).
    """

    rule: str
    decision: Literal["allow", "deny"]
    source: RuleSource
    revocable: bool


class ListPermissionsResult(WireModel):
    """``{rules, userConfig}``: the person's rules first, then the workspace's.

    ``userConfig`` is the path of the person's ``cadenza.toml``, where their rules are changed.
    """

    rules: list[PermissionRuleItem] = Field(default_factory=list)
    user_config: str


class RevokePermissionArgs(SparseWireModel):
    """``{rule, decision, rootUri?}``: a remembered rule of the workspace to forget."""

    rule: str = Field(min_length=1, max_length=4096)
    decision: Literal["allow", "deny"]
    root_uri: str | None = Field(default=None, min_length=1)


class RevokePermissionResult(WireModel):
    """``{revoked}``: the rule, as it was; calls it covered are asked about again."""

    revoked: str
