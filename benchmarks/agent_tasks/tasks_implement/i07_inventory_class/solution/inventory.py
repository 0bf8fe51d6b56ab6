class Inventory:
    """Counts of items in stock."""

    def __init__(self):
        self._counts = {}

    def add(self, item, amount=1):
        """Add ``amount`` of ``item`` (a positive number; else ``ValueError``)."""
        if amount <= 0:
            raise ValueError("amount must be positive")
        self._counts[item] = self._counts.get(item, 0) + amount

    def remove(self, item, amount=1):
        """Take ``amount`` of ``item`` away.

        ``ValueError`` when fewer than ``amount`` are in stock (nothing changes then). An
        item whose count reaches 0 is forgotten.
        """
        have = self._counts.get(item, 0)
        if amount > have:
            raise ValueError(f"only {have} of {item} in stock")
        if have == amount:
            del self._counts[item]
        else:
            self._counts[item] = have - amount

    def count(self, item):
        """How many of ``item`` are in stock (0 for an unknown item)."""
        return self._counts.get(item, 0)
