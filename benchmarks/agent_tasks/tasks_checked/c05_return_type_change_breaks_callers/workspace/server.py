from settings import read_address


def bind_message(spec):
    host, port = read_address(spec)
    return f"listening on {host} port {port}"
