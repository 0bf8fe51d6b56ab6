import os


def home_file(name):
    return os.path.join(os.path.expanduser("~"), name)
