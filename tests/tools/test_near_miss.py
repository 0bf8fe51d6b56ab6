"""The "not found" error that quotes where ``old_string`` was meant (``tools.near_miss``)."""

from __future__ import annotations

from cadenza.tools.near_miss import near_miss

STUB = (
    "def slugify(title):\n"
    '    """Turn a title into a URL slug.\n'
    "\n"
    '    "Hello, World!" -> "hello-world".\n'
    '    """\n'
    "    raise NotImplementedError\n"
)


def test_lines_left_out_between_first_and_last_are_quoted() -> None:
    # The checked set's c07: the function's first line and body, the docstring left out.
    old = "def slugify(title):\n    raise NotImplementedError"
    error = near_miss(STUB, old, "text.py")
    assert error is not None
    assert "its first line is line 1" in error and "lines 1-6" in error
    assert error.endswith(STUB.rstrip("\n"))


def test_other_quotes_and_spacing_find_the_line() -> None:
    text = 'x = 1\nprint("total:", total)\ny = 2\n'
    error = near_miss(text, "print('total:',  total)", "a.py")
    assert error is not None and error.endswith(
        "line 2, exactly as they are (copy old_string "
        "from here, every line between its first and "
        'last included):\nprint("total:", total)'
    )


def test_no_near_miss_when_the_first_line_is_not_there_once() -> None:
    assert near_miss(STUB, "def other():\n    pass", "text.py") is None
    twice = "pass\nx = 1\npass\n"
    assert near_miss(twice, "pass\nx = 2", "a.py") is None
    assert near_miss(STUB, "\n  \n", "text.py") is None


def test_a_last_line_far_away_or_before_gives_old_string_s_length() -> None:
    text = "a = 1\n" + "".join(f"n{i} = {i}\n" for i in range(60)) + "end()\n"
    error = near_miss(text, "a = 1\nzzz\nend()", "a.py")
    assert error is not None and "lines 1-3" in error
    assert error.endswith("a = 1\nn0 = 0\nn1 = 1")
    error = near_miss("b()\na()\n", "a()\nb()", "a.py")
    assert error is not None and error.endswith("a()")
