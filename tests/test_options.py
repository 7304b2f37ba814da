"""Typed rule options: a configured value is converted to its declared type or refused."""

from __future__ import annotations

import pytest

from podfit.options import Option, OptionError, check_value, parse_duration


@pytest.mark.parametrize(
    ("text", "seconds"), [("10", 10.0), ("10s", 10.0), ("500ms", 0.5), ("2m", 120.0), (" 1.5s ", 1.5)]
)
def test_durations(text, seconds):
    assert parse_duration(text) == seconds
    assert check_value(Option("t", "duration", 10, ""), text) == seconds


@pytest.mark.parametrize("text", ["", "fast", "10 minutes", "-1s", "1e3s"])
def test_bad_durations(text):
    with pytest.raises(ValueError):
        parse_duration(text)
    with pytest.raises(OptionError, match="must be a duration"):
        check_value(Option("t", "duration", 10, ""), text)


def test_types_minimum_and_choices():
    assert check_value(Option("n", "integer", 1, "", minimum=0), 0) == 0
    with pytest.raises(OptionError, match="at least 0"):
        check_value(Option("n", "integer", 1, "", minimum=0), -1)
    for bad in (True, 1.5, "2"):
        with pytest.raises(OptionError, match="must be an integer"):
            check_value(Option("n", "integer", 1, ""), bad)
    assert check_value(Option("b", "boolean", True, ""), False) is False
    with pytest.raises(OptionError):
        check_value(Option("b", "boolean", True, ""), "yes")
    assert check_value(Option("d", "duration", 1, ""), 3) == 3.0
