"""Cadenza: an LLM coding agent hosted in an LSP-framed JSON-RPC server."""

__version__ = "0.1.0"
