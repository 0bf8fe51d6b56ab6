import pytest

from appconfig import load


def test_defaults_without_file_or_environment():
    settings = load()
    assert settings["log_level"] == "info"
    assert settings["workers"] == 2
    assert settings["server"] == {"host": "127.0.0.1", "port": 8000}


def test_file_overrides_one_key_of_a_table():
    settings = load('log_level = "debug"\n[server]\nport = 9000\n')
    assert settings["log_level"] == "debug"
    assert settings["server"] == {"host": "127.0.0.1", "port": 9000}


def test_environment_wins_over_the_file():
    settings = load("workers = 4\n", {"APP_WORKERS": "8", "APP_LOG_LEVEL": "WARNING"})
    assert settings["workers"] == 8
    assert settings["log_level"] == "warning"


def test_bad_worker_count_is_refused():
    with pytest.raises(ValueError):
        load("workers = 0\n")


def test_a_second_load_starts_from_the_defaults():
    load('[server]\nhost = "0.0.0.0"\n')
    settings = load()
    assert settings["server"]["host"] == "127.0.0.1"
    assert settings["workers"] == 2
