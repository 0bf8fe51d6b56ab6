import re


def slugify(title):
    """Turn a title into a URL slug.

    Lowercase; every run of characters that are not ASCII letters or digits becomes one "-";
    no "-" at the start or the end. "Hello, World!" -> "hello-world".
    """
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
