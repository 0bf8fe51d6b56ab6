"""The handlers of ``cadenza.listPermissions`` and ``cadenza.revokePermission``.

The rules that answer permission prompts without asking: the person's own (``[permissions]
allow``/``deny`` of their ``cadenza.toml``; listed, changed in that file) and the "always"
answers remembered for the workspace (``engine.permissions.PermissionStore``; listed and
revocable here). Malformed arguments are answered with ``InvalidParams`` (-32602); a rule
that cannot be revoked with ``RequestFailed`` (-32803), and nothing changed.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pygls.lsp.server import LanguageServer

from cadenza.config import PermissionConfig, user_config_dir
from cadenza.lsp.params import command_args, optional_root, request_failed
from cadenza.schema.methods import LIST_PERMISSIONS, REVOKE_PERMISSION
from cadenza.schema.permissions import (
    ListPermissionsArgs,
    ListPermissionsResult,
    PermissionRuleItem,
    RevokePermissionArgs,
    RevokePermissionResult,
)

if TYPE_CHECKING:
    from cadenza.lsp.sessions import SessionManager

log = logging.getLogger(__name__)


def _own(ls: LanguageServer) -> PermissionConfig:
    """The person's ``[permissions]`` (the server's configuration from ``initialize``)."""
    manager: SessionManager = getattr(ls, "sessions")  # noqa: B009 - CadenzaServer.sessions
    return manager.config.permissions


def _user_file() -> Path:
    return user_config_dir() / "cadenza.toml"


def list_permissions(ls: LanguageServer, *arguments: Any) -> dict[str, Any]:
    """``cadenza.listPermissions {rootUri?}`` → ``{rules, userConfig}``."""
    args: ListPermissionsArgs = command_args(
        LIST_PERMISSIONS, ListPermissionsArgs, arguments, optional=True
    )
    own = _own(ls)
    rules = [
        PermissionRuleItem(rule=rule, decision="deny", source="user", revocable=False)
        for rule in own.deny
    ] + [
        PermissionRuleItem(rule=rule, decision="allow", source="user", revocable=False)
        for rule in own.allow
    ]
    root = optional_root(ls.workspace, LIST_PERMISSIONS, args.root_uri)
    if root is not None:
        from cadenza.host.ports import PermissionStore  # the engine: on first use

        rules += [
            PermissionRuleItem(
                rule=stored.rule, decision=stored.decision, source="workspace", revocable=True
            )
            for stored in PermissionStore(root).listed()
        ]
    return ListPermissionsResult(rules=rules, user_config=str(_user_file())).wire()


def revoke_permission(ls: LanguageServer, *arguments: Any) -> dict[str, Any]:
    """``cadenza.revokePermission {rule, decision, rootUri?}`` → ``{revoked}``."""
    args: RevokePermissionArgs = command_args(
        REVOKE_PERMISSION, RevokePermissionArgs, arguments, optional=True
    )
    own = _own(ls)
    if args.rule in (own.allow if args.decision == "allow" else own.deny):
        raise request_failed(
            f"{args.rule} is a rule of your own settings: remove it from "
            f"[permissions] {args.decision} in {_user_file()}"
        )
    root = optional_root(ls.workspace, REVOKE_PERMISSION, args.root_uri)
    if root is None:
        raise request_failed(
            "no workspace folder is open, so there is no remembered rule to revoke"
        )
    from cadenza.host.ports import PermissionStore

    try:
        revoked = PermissionStore(root).revoke(args.rule, args.decision)
    except OSError as exc:
        log.warning("could not revoke %s: %s", args.rule, exc)
        raise request_failed(f"could not revoke {args.rule}: {exc.strerror or exc}") from None
    if not revoked:
        raise request_failed(f"no remembered {args.decision} rule {args.rule} in this workspace")
    return RevokePermissionResult(revoked=args.rule).wire()


def register(server: LanguageServer) -> None:
    """Register the permission commands on ``server``."""
    server.command(LIST_PERMISSIONS)(list_permissions)
    server.command(REVOKE_PERMISSION)(revoke_permission)
