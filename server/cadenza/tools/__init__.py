"""Workspace tools the model calls, and their dispatch."""
