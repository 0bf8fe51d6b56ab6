"""The ``cadenza/*`` wire, declared once for the server and the headless client.

``base``: camelCase models, strict and lenient parsing; ``methods``: the method and command
names; ``commands``: ``cadenza.*`` command arguments and results; ``requests``: the server →
client requests ``cadenza/askUser``, ``cadenza/requestPermission`` and ``cadenza/waitingHuman``;
``intel``: the code-intelligence requests the editor answers from its language servers;
``updates``: ``cadenza/sessionUpdate`` and its update kinds. ``docs/protocol.md`` describes the
same shapes for people. Ground floor: this package imports pydantic, ``cadenza.types`` and
``cadenza.messages`` only, so both the LSP face and the client stand on it.
"""
