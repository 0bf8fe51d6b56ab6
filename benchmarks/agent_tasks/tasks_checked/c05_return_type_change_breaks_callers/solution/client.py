import settings


def host_of(url):
    return settings.read_address(url)["host"]


def is_default_port(url):
    return settings.read_address(url)["port"] == 80
