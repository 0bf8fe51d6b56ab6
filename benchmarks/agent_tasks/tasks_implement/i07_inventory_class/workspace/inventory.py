class Inventory:
    """Counts of items in stock."""

    def __init__(self):
        self._counts = {}

    def add(self, item, amount=1):
        """Add ``amount`` of ``item`` (a positive number; else ``ValueError``)."""
        raise NotImplementedError

    def remove(self, item, amount=1):
        """Take ``amount`` of ``item`` away.

        ``ValueError`` when fewer than ``amount`` are in stock (nothing changes then). An
        item whose count reaches 0 is forgotten.
        """
        raise NotImplementedError

    def count(self, item):
        """How many of ``item`` are in stock (0 for an unknown item)."""
        raise NotImplementedError
