def scale(values, factor):
    return [value * factor for value in values]
