from text import slugify


def test_example_from_the_docstring():
    assert slugify("Hello, World!") == "hello-world"


def test_runs_of_separators_become_one_dash():
    assert slugify("a  --  b") == "a-b"


def test_no_dash_at_the_ends():
    assert slugify("  (draft) notes ") == "draft-notes"
