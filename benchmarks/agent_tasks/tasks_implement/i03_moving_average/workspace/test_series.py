import pytest

from series import moving_average


def test_pairs():
    assert moving_average([1, 2, 3, 4], 2) == [1.5, 2.5, 3.5]


def test_too_few_values():
    assert moving_average([1, 2], 3) == []


def test_bad_window():
    with pytest.raises(ValueError):
        moving_average([1, 2, 3], 0)
