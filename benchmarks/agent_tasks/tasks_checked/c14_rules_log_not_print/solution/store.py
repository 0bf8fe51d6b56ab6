import json
import logging

log = logging.getLogger(__name__)


def save(records, path):
    """Write records (a list of dicts) to path as JSON lines."""
    with open(path, "w", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record) + "\n")
    log.info("saved %d records to %s", len(records), path)
