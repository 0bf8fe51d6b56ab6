from collections import Counter

from wordfreq import count_words, top_words, words


def test_words_are_lower_cased_and_keep_apostrophes():
    assert words("Don't PANIC: 42 towels.") == ["don't", "panic", "towels"]


def test_stop_words_are_left_out():
    assert count_words("The cat and the hat") == Counter({"cat": 1, "hat": 1})


def test_counting_into_a_running_total():
    total = Counter({"budget": 2})
    count_words("The budget vote", total)
    assert total == Counter({"budget": 3, "vote": 1})


def test_each_article_is_counted_on_its_own():
    first = count_words("Council approves budget")
    second = count_words("Library reopens")
    assert first == Counter({"council": 1, "approves": 1, "budget": 1})
    assert second == Counter({"library": 1, "reopens": 1})


def test_own_stop_words():
    assert count_words("Rain rain go away", stop_words={"go", "away"}) == Counter({"rain": 2})


def test_top_words_breaks_ties_alphabetically():
    counts = Counter({"park": 3, "bridge": 1, "school": 3, "road": 2})
    assert top_words(counts, 3) == [("park", 3), ("school", 3), ("road", 2)]
