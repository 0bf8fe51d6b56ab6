def read_address(text):
    """Parse 'host:port' (the port defaults to 80) into (host, port)."""
    host, _, port = text.partition(":")
    return host, int(port or 80)
