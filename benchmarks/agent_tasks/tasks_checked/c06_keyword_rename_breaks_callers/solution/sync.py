from net import fetch


def pull_all(urls):
    return [fetch(url, timeout_s=30) for url in urls]
