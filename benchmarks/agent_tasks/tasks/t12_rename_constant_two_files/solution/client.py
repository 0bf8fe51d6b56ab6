from config import REQUEST_TIMEOUT, RETRIES


def settings():
    return {"timeout": REQUEST_TIMEOUT, "retries": RETRIES}
