from config import HOST


def address():
    return f"http://{HOST}:{8080}/"
