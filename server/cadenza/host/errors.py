"""Why the host cannot do what a face asked; each face words it in its own protocol."""

from __future__ import annotations


class SetupError(Exception):
    """A session cannot be set up as asked.

    An unknown or invalid workflow, a malformed model name or an unknown provider (the message
    names the file and the field, or the model), or a local model that cannot be found or
    pulled. The LSP face answers ``InvalidParams`` (``RequestFailed`` for a pull); the ACP
    face a ``RequestError``.
    """


class Unavailable(Exception):
    """A stored or live session cannot do what was asked.

    Unknown, unreadable, running, over, locked by another server, or its transcript cannot be
    gone on from (the message says which).
    """
