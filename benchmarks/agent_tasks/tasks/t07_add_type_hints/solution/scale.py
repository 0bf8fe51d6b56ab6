def scale(values: list[float], factor: float) -> list[float]:
    return [value * factor for value in values]
