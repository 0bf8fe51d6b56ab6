"""The session host: sessions for any face, made and driven once (docs/architecture.md).

Everything a face needs to create, run, wait, resume, restore and end a session:

- ``service``: the session service the faces call: sessions assembled, configured and listed
  for both; started, prompted, answered, steered, cancelled, undone, restored and loaded as
  tasks for the LSP face (the ACP face runs each prompt turn itself); ``ports``: the port and
  event types a face takes from below the host (the only bridge; ``lint-imports`` holds the
  faces to it);
- ``client_tools``: ``run_command`` and ``read_file`` through a client that can run them;
- ``build``: workflow lookup, checkpoint, transcript, permission gate, the engine ``Session``;
- ``providers``: the providers sessions share; ``settings``: a session's engine settings;
- ``live`` and ``driver``: live sessions as tasks, run → wait for the person → resume;
- ``stored`` and ``restore``: stored sessions read back and revived; ``lock``: one process
  per session;
- ``edits``: the one checkpointed edit delivery around a face's raw edit; ``checkpoints`` and
  ``undo_plan``: the records and the plan that undoes a session;
- ``transcripts``: transcripts that never fail a session; ``mcp``: MCP servers' tools.

The faces (``cadenza.lsp``, ``cadenza.acp``) keep only argument translation, their ``Editor``
and their wire.
"""
