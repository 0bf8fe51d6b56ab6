import json


def save(records, path):
    """Write records (a list of dicts) to path as JSON lines."""
    with open(path, "w", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record) + "\n")
