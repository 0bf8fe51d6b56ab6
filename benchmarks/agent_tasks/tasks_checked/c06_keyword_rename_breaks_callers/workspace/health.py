import net


def probe(url):
    """A quick check: short timeout, a few retries."""
    return net.fetch(url, retries=3, timeout=2)


def probe_default(url):
    return net.fetch(url)
