from geometry import compute_area


def describe(width, height):
    return f"{width}x{height} has area {compute_area(width, height)}"


if __name__ == "__main__":
    print(describe(3, 4))
