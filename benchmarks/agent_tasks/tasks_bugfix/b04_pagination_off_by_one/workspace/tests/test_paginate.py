import pytest

from paginate import get_page, page_count, page_links


def test_partial_last_page_is_counted():
    assert page_count(45, 20) == 3


def test_exact_multiple_of_the_page_size():
    assert page_count(40, 20) == 2


def test_middle_page(products):
    page = get_page(products, 2)
    assert page.items[0] == "product-20"
    assert len(page.items) == 20
    assert page.has_previous and page.has_next


def test_last_page_has_no_next(products):
    page = get_page(products[:40], 2)
    assert page.items[-1] == "product-39"
    assert not page.has_next


def test_page_past_the_end_is_refused(products):
    with pytest.raises(ValueError):
        get_page(products, 4)


def test_links_around_the_current_page():
    assert page_links(5, 10) == [3, 4, 5, 6, 7]
    assert page_links(1, 3) == [1, 2, 3]
