def last_n(items, n):
    """The last n items of items (all of them when n >= len(items))."""
    if n <= 0:
        return []
    return items[len(items) - n - 1 :]
