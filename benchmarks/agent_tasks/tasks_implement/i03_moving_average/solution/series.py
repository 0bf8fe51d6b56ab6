def moving_average(values, window):
    """The averages of every ``window`` consecutive values, in order.

    ``moving_average([1, 2, 3, 4], 2)`` -> ``[1.5, 2.5, 3.5]``. Fewer values than ``window``
    give ``[]``. A ``window`` below 1 raises ``ValueError``.
    """
    if window < 1:
        raise ValueError("window must be at least 1")
    return [
        sum(values[i : i + window]) / window for i in range(len(values) - window + 1)
    ]
