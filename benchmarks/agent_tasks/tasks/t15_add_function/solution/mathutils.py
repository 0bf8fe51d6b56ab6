def square(x):
    return x * x


def clamp(value, low, high):
    return max(low, min(value, high))
