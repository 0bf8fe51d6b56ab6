import json


def load(text):
    """The settings in ``text`` (a JSON object) as a dict."""
    settings = json.loads(text)
    return settings
