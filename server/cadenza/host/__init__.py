"""The session host: sessions for any face, made and driven once (docs/architecture.md).

Everything a face needs to create, run, wait, resume, restore and end a session:

- ``build``: workflow lookup, checkpoint, transcript, permission gate, the engine ``Session``;
- ``providers``: the providers sessions share; ``settings``: a session's engine settings;
- ``live`` and ``driver``: live sessions as tasks, run → wait for the person → resume;
- ``stored`` and ``restore``: stored sessions read back and revived; ``lock``: one process
  per session;
- ``edits``: the one checkpointed edit delivery around a face's raw edit; ``checkpoints`` and
  ``undo_plan``: the records and the plan that undoes a session;
- ``transcripts``: transcripts that never fail a session; ``mcp``: MCP servers' tools.

The faces (``cadenza.lsp``, ``cadenza.acp``) keep only protocol translation.
"""
