"""``cadenza batch``: many headless sessions over many repositories, as Ray tasks.

An optional extra (``pip install 'cadenza[batch]'``): nothing here imports :mod:`ray` at
import time, so the base install never needs it. :mod:`~cadenza.batch.tasks` reads the
JSONL task file, :mod:`~cadenza.batch.worker` runs one task where Ray puts it (clone, one
headless session through :mod:`cadenza.client`, patch), :mod:`~cadenza.batch.driver` fans the
tasks out and collects them, :mod:`~cadenza.batch.results` writes each result atomically, and
:mod:`~cadenza.batch.cli` is the command. This package may use the client; the client never
imports it (docs/batch.md).
"""
