from config import HOST, PORT


def address():
    return f"http://{HOST}:{PORT}/"
