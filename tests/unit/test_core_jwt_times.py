"""fakejs.core.jwt.times without a server: a user JWT's connect times, at fixed instants."""

from __future__ import annotations

import datetime

from fakejs.core.jwt.times import connect_window
from fakejs.core.jwt.user_validation import user_issues

UTC = datetime.UTC


def at(hour: int, minute: int = 0, second: int = 0) -> float:
    return datetime.datetime(2026, 3, 1, hour, minute, second, tzinfo=UTC).timestamp()


def window(*ranges: tuple[str, str], zone: str = "UTC") -> dict[str, object]:
    return {"times": [{"start": s, "end": e} for s, e in ranges], "times_location": zone}


def test_no_times_allow_any_time() -> None:
    assert connect_window({}, at(3)) == (True, 0.0)


def test_inside_a_range_the_login_lasts_until_its_end() -> None:
    assert connect_window(window(("09:00:00", "17:00:00")), at(16, 59, 30)) == (True, 30.0)
    assert connect_window(window(("09:00:00", "17:00:00")), at(17)) == (False, 0.0)
    assert connect_window(window(("09:00:00", "17:00:00")), at(9)) == (False, 0.0)  # the start itself is outside


def test_a_range_past_midnight() -> None:
    night = window(("22:00:00", "06:00:00"))
    assert connect_window(night, at(23)) == (True, 7 * 3600.0)
    assert connect_window(night, at(5)) == (True, 3600.0)
    assert connect_window(night, at(12))[0] is False


def test_the_range_leaving_the_most_time_wins() -> None:
    assert connect_window(window(("08:00:00", "10:00:00"), ("07:00:00", "12:00:00")), at(9)) == (True, 3 * 3600.0)


def test_ranges_are_read_in_their_time_zone() -> None:
    tokyo = window(("09:00:00", "10:00:00"), zone="Asia/Tokyo")  # 00:00 to 01:00 UTC
    assert connect_window(tokyo, at(0, 30)) == (True, 1800.0)
    assert connect_window(tokyo, at(9, 30))[0] is False


def test_bad_ranges_and_zones_make_the_jwt_invalid() -> None:
    assert user_issues(window(("9:00:00", "10:00:00"))) == []
    assert user_issues(window(("09:00", "10:00:00"))) == ['start in time range is invalid "09:00"']
    assert user_issues(window(("09:00:00", ""))) == ["time ranges end must contain an end"]
    assert user_issues(window(("09:00:00", "10:00:00"), zone="Nowhere/Else")) == [
        "could not parse iana time zone by name: unknown time zone Nowhere/Else"
    ]
    assert connect_window(window(("09:00:00", "10:00:00"), zone="Nowhere/Else"), at(9, 30)) == (False, 0.0)
