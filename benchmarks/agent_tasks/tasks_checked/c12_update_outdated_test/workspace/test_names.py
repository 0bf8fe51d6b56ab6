from names import initials


def test_two_names():
    assert initials("Ada Lovelace") == "AL"


def test_lowercase_input():
    assert initials("grace brewster hopper") == "G.B.H."
