def parse_duration(text):
    """Seconds in a duration such as "1h30m", "45s", "2m5s" or "1h".

    The units are h, m and s, each at most once and in that order; at least one must be
    there. Anything else (an empty string, "10", "5x", "1m1h") raises ValueError.
    """
    raise NotImplementedError
