from config import DEFAULT_TIMEOUT, RETRIES


def settings():
    return {"timeout": DEFAULT_TIMEOUT, "retries": RETRIES}
