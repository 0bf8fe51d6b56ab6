def compare_versions(a, b):
    """Compare two dotted version strings such as ``"1.10.2"``.

    Returns -1 when ``a`` is older than ``b``, 1 when it is newer, 0 when they are equal.
    Parts are compared as numbers, left to right (``"1.10"`` is newer than ``"1.9"``); a
    missing part counts as 0, so ``"1.2"`` equals ``"1.2.0"``.
    """
    left = [int(p) for p in a.split(".")]
    right = [int(p) for p in b.split(".")]
    size = max(len(left), len(right))
    left += [0] * (size - len(left))
    right += [0] * (size - len(right))
    return (left > right) - (left < right)
