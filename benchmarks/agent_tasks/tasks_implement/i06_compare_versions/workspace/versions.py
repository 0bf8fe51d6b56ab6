def compare_versions(a, b):
    """Compare two dotted version strings such as ``"1.10.2"``.

    Returns -1 when ``a`` is older than ``b``, 1 when it is newer, 0 when they are equal.
    Parts are compared as numbers, left to right (``"1.10"`` is newer than ``"1.9"``); a
    missing part counts as 0, so ``"1.2"`` equals ``"1.2.0"``.
    """
    raise NotImplementedError
