"""The Agent Client Protocol face: ``cadenza acp`` runs the engine behind ACP over stdio.

Built on the official ``agent-client-protocol`` package (its schema models, its connection
and ``run_agent``); see ``docs/acp.md``.
"""
