import json


def load(text):
    """The settings in ``text`` (a JSON object) as a dict."""
    settings = json.loads(text)
    if "name" not in settings:
        raise ValueError('config: the "name" key is missing')
    return settings
