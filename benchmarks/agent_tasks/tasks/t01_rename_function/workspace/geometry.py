def calc_area(width, height):
    """The area of a rectangle."""
    return width * height
