def compute_area(width, height):
    """The area of a rectangle."""
    return width * height
