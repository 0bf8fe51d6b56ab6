from query import parse_query


def test_repeated_keys():
    assert parse_query("a=1&b=2&a=3") == {"a": ["1", "3"], "b": ["2"]}


def test_no_equals_and_empty_pairs():
    assert parse_query("flag&&x=") == {"flag": [""], "x": [""]}


def test_empty():
    assert parse_query("") == {}
