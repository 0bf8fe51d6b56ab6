def mean(values):
    if not values:
        return 0.0
    return sum(values) / len(values)
