from intervals import merge_intervals


def test_overlapping():
    assert merge_intervals([(1, 4), (2, 6)]) == [(1, 6)]


def test_touching_and_apart():
    assert merge_intervals([(3, 5), (1, 3), (7, 8)]) == [(1, 5), (7, 8)]


def test_empty():
    assert merge_intervals([]) == []
