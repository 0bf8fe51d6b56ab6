from report import Sale, format_table, grand_total, money


def test_columns_align():
    assert format_table([["a", "bb"], ["ccc", "d"]]) == "a    bb\nccc  d"


def test_missing_cells():
    assert format_table([["x", "y", "z"], ["long"]]) == "x     y  z\nlong"


def test_rest_still_works():
    assert money(grand_total([Sale("tea", 2, 150)])) == "3.00"
