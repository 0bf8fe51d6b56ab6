import settings


def host_of(url):
    return settings.read_address(url)[0]


def is_default_port(url):
    return settings.read_address(url)[1] == 80
