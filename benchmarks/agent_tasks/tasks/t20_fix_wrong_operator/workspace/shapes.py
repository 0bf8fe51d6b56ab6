def rect_area(width, height):
    return width + height


def square_area(side):
    return rect_area(side, side)
