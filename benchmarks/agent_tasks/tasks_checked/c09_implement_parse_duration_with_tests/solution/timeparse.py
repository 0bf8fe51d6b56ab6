import re

_DURATION = re.compile(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?")


def parse_duration(text):
    """Seconds in a duration such as "1h30m", "45s", "2m5s" or "1h".

    The units are h, m and s, each at most once and in that order; at least one must be
    there. Anything else (an empty string, "10", "5x", "1m1h") raises ValueError.
    """
    match = _DURATION.fullmatch(text)
    if not text or match is None:
        raise ValueError(f"not a duration: {text!r}")
    hours, minutes, seconds = (int(part or 0) for part in match.groups())
    return hours * 3600 + minutes * 60 + seconds
