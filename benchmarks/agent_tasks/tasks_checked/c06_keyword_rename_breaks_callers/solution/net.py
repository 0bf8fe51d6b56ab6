def fetch(url, timeout_s=5, retries=1):
    """Describe the request that would be sent (the transport is plugged in elsewhere)."""
    if timeout_s <= 0:
        raise ValueError("timeout must be positive")
    return {"url": url, "timeout": timeout_s, "retries": retries}
