from settings import read_address


def bind_message(spec):
    address = read_address(spec)
    return f"listening on {address['host']} port {address['port']}"
