from textwrap2 import wrap


def test_fills_lines():
    assert wrap("the quick brown fox", 10) == ["the quick", "brown fox"]


def test_long_word_alone():
    assert wrap("a extraordinarily b", 5) == ["a", "extraordinarily", "b"]


def test_no_words():
    assert wrap("   ", 4) == []
