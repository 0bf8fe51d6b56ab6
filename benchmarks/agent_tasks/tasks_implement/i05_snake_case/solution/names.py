import re


def to_snake(name):
    """Turn a camelCase or PascalCase name into snake_case.

    An underscore goes before each capital that follows a lowercase letter or a digit, and
    before the last capital of a run of capitals that is followed by a lowercase letter;
    then everything is lowercased. ``"getX"`` -> ``"get_x"``, ``"HTTPServerError"`` ->
    ``"http_server_error"``, ``"already_snake"`` stays as it is.
    """
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    return name.lower()
