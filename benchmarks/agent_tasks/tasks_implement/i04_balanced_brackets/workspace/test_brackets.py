from brackets import is_balanced


def test_balanced():
    assert is_balanced("f(a[1], {b})")


def test_wrong_kind():
    assert not is_balanced("(]")


def test_unclosed():
    assert not is_balanced("(()")
