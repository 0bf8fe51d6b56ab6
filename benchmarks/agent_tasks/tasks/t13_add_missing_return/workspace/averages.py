def average(values):
    total = sum(values)
    result = total / len(values)
