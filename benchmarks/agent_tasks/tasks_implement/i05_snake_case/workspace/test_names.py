from names import to_snake


def test_camel():
    assert to_snake("getX") == "get_x"


def test_acronym():
    assert to_snake("HTTPServerError") == "http_server_error"


def test_snake_unchanged():
    assert to_snake("already_snake") == "already_snake"
