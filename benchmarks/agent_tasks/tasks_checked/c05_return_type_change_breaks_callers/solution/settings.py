def read_address(text):
    """Parse 'host:port' (the port defaults to 80) into {"host": ..., "port": ...}."""
    host, _, port = text.partition(":")
    return {"host": host, "port": int(port or 80)}
