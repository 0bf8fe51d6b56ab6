def wrap(text, width):
    """Break ``text`` into lines of at most ``width`` characters, at spaces.

    Words are separated by runs of whitespace; the lines keep the words in order, joined by
    single spaces, each line as long as it can be without passing ``width``. A word longer
    than ``width`` goes on a line of its own, unbroken. Returns the list of lines ([] for a
    text without words).
    """
    lines = []
    line = ""
    for word in text.split():
        if not line:
            line = word
        elif len(line) + 1 + len(word) <= width:
            line += " " + word
        else:
            lines.append(line)
            line = word
    if line:
        lines.append(line)
    return lines
