def is_balanced(text):
    """Whether the brackets ``()``, ``[]`` and ``{}`` in ``text`` are balanced.

    Every opening bracket is closed by the same kind, in nesting order; other characters are
    ignored. ``"f(a[1], {b})"`` is balanced, ``"(]"`` and ``"(()"`` are not; ``""`` is.
    """
    raise NotImplementedError
