def parse_query(query):
    """Parse a URL query string into a dict of lists.

    ``"a=1&b=2&a=3"`` -> ``{"a": ["1", "3"], "b": ["2"]}``: pairs are separated by ``&``,
    a key from its value by the first ``=``; a pair without ``=`` has the value ``""``;
    empty pairs (``"a=1&&b=2"``) are skipped; values keep their order. ``+`` in a key or a
    value stands for a space. An empty string gives ``{}``.
    """
    raise NotImplementedError
