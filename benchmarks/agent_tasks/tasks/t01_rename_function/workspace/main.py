from geometry import calc_area


def describe(width, height):
    return f"{width}x{height} has area {calc_area(width, height)}"


if __name__ == "__main__":
    print(describe(3, 4))
