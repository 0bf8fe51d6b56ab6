from datetime import date

from urlbuild import build_url, join_path, query_value

BASE = "https://api.example.com/v2/"


def test_one_slash_between_segments():
    assert join_path(BASE, "orders", 42) == "https://api.example.com/v2/orders/42"
    assert join_path("https://api.example.com/v2") == "https://api.example.com/v2"


def test_a_slash_inside_a_segment_is_encoded():
    assert join_path(BASE, "files", "a/b.txt") == "https://api.example.com/v2/files/a%2Fb.txt"


def test_parameters_are_sorted_and_encoded():
    url = build_url(BASE, "search", q="red shoes", page=2)
    assert url == "https://api.example.com/v2/search?page=2&q=red%20shoes"


def test_none_parameters_are_left_out():
    assert build_url(BASE, "orders", cursor=None) == "https://api.example.com/v2/orders"


def test_booleans_and_dates():
    assert query_value(True) == "true"
    assert query_value(date(2024, 2, 29)) == "2024-02-29"


def test_list_values_are_comma_joined():
    url = build_url(BASE, "orders", status=["open", "paid"])
    assert url == "https://api.example.com/v2/orders?status=open,paid"
