def slugify(title):
    """Turn a title into a URL slug.

    Lowercase; every run of characters that are not ASCII letters or digits becomes one "-";
    no "-" at the start or the end. "Hello, World!" -> "hello-world".
    """
    raise NotImplementedError
