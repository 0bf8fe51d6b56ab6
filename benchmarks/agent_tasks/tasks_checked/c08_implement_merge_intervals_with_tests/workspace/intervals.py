def merge_intervals(intervals):
    """Merge overlapping or touching closed intervals.

    `intervals` is a list of (start, end) pairs with start <= end, in any order. Return a new
    list of pairs sorted by start where no two pairs overlap or touch: (1, 3) and (3, 5) merge
    into (1, 5); (1, 2) and (4, 5) stay apart. The input list is not changed.
    """
    raise NotImplementedError
