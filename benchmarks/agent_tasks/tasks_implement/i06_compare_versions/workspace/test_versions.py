from versions import compare_versions


def test_numeric_parts():
    assert compare_versions("1.10", "1.9") == 1


def test_missing_part_is_zero():
    assert compare_versions("1.2", "1.2.0") == 0


def test_older():
    assert compare_versions("0.9.9", "1.0") == -1
