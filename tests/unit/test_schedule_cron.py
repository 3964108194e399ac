"""nats-server's six-field cron and the ``Nats-Schedule`` patterns, as pure functions."""

from __future__ import annotations

from datetime import UTC
from zoneinfo import ZoneInfo

import pytest

from fakejs.gocompat.gotime import NS, parse_rfc3339, rfc3339
from fakejs.jetstream.errors import ApiError
from fakejs.jetstream.stream import cron
from fakejs.jetstream.stream.schedules import Next, parse_schedule, strip_prefix, time_zone
from fakejs.protocol import headers as hdrs


def nxt(pattern: str, after: str, zone: str | None = None) -> str:
    moment = cron.next_after(cron.parse(pattern), parse_rfc3339(after), ZoneInfo(zone) if zone else None)
    return moment.isoformat()


@pytest.mark.parametrize(
    "pattern",
    [
        "0 0 0 * *",
        "0 0 0 * * * *",
        "60 * * * * *",
        "* 60 * * * *",
        "* * 24 * * *",
        "* * * 0 * *",
        "* * * 32 * *",
        "* * * * 0 *",
        "* * * * 13 *",
        "* * * * * 7",
        "5-3 * * * * *",
        "*/0 * * * * *",
        "1/2/3 * * * * *",
        "1-2-3 * * * * *",
        "x * * * * *",
        "-1 * * * * *",
        "1.5 * * * * *",
        "* * * * janu *",
        "* * * * * sunday",
    ],
)
def test_invalid_patterns(pattern: str) -> None:
    with pytest.raises(cron.CronError):
        cron.parse(pattern)


def test_field_bits() -> None:
    second, minute, hour, dom, month, dow = cron.parse("5/20 1-10/3 +2 ? JAN,Jul mon-FRI")
    assert [v for v in range(60) if second >> v & 1] == [5, 25, 45]
    assert [v for v in range(60) if minute >> v & 1] == [1, 4, 7, 10]
    assert [v for v in range(24) if hour >> v & 1] == [2]
    assert dom & cron.STAR_BIT and [v for v in range(32) if dom >> v & 1] == list(range(1, 32))
    assert [v for v in range(13) if month >> v & 1] == [1, 7]
    assert [v for v in range(7) if dow >> v & 1] == [1, 2, 3, 4, 5]
    assert cron.parse("*/1 * * * * *")[0] & cron.STAR_BIT  # a step of one keeps the star
    assert not cron.parse("*/2 * * * * *")[0] & cron.STAR_BIT
    assert cron.parse("1,,2 * * * * *")[0] == 0b110  # empty list items are skipped


def test_next_times() -> None:
    assert nxt("*/15 * * * * *", "2026-03-01T00:00:07Z") == "2026-03-01T00:00:15+00:00"
    assert nxt("* * * * * *", "2026-03-01T00:00:07.9Z") == "2026-03-01T00:00:08+00:00"
    assert nxt("0 30 9 * * mon-fri", "2026-03-07T10:00:00Z") == "2026-03-09T09:30:00+00:00"
    assert nxt("0 0 0 1 1 *", "2026-03-07T10:00:00Z") == "2027-01-01T00:00:00+00:00"
    assert nxt("0 0 0 29 2 *", "2026-03-07T10:00:00Z") == "2028-02-29T00:00:00+00:00"
    assert nxt("0 0 0 31 * *", "2026-04-01T00:00:00Z") == "2026-05-31T00:00:00+00:00"


def test_day_of_month_and_week() -> None:
    # Neither a star: either day matches.  One a star: both must.
    assert nxt("0 0 0 13 * fri", "2026-03-01T00:00:00Z") == "2026-03-06T00:00:00+00:00"
    assert nxt("0 0 0 * * fri", "2026-03-01T00:00:00Z") == "2026-03-06T00:00:00+00:00"
    assert nxt("0 0 0 13 * *", "2026-03-01T00:00:00Z") == "2026-03-13T00:00:00+00:00"
    assert nxt("0 0 0 13 * ?", "2026-03-01T00:00:00Z") == "2026-03-13T00:00:00+00:00"


def test_time_zones_and_daylight_saving() -> None:
    assert nxt("0 0 9 * * *", "2026-03-07T12:00:00Z", "America/New_York") == "2026-03-07T09:00:00-05:00"
    assert nxt("0 0 9 * * *", "2026-03-07T14:00:00Z", "America/New_York") == "2026-03-08T09:00:00-04:00"
    assert nxt("0 0 0 * * *", "2026-03-07T12:00:00Z", "Asia/Kolkata") == "2026-03-08T00:00:00+05:30"


def test_never_matching_gives_up() -> None:
    with pytest.raises(cron.CronError):
        nxt("0 0 0 30 2 *", "2026-03-01T00:00:00Z")


NOW = parse_rfc3339("2026-03-01T12:00:00Z")


def test_parse_schedule() -> None:
    assert parse_schedule("", None, NOW, NOW) == Next(0, 0, False)
    assert parse_schedule("@at 2020-01-01T00:00:00Z", None, NOW, NOW) == Next(
        parse_rfc3339("2020-01-01T00:00:00Z"), 0, False
    )
    assert parse_schedule("@at 2020-01-01T01:00:00+01:00", None, NOW, NOW).ns == parse_rfc3339("2020-01-01T00:00:00Z")
    assert parse_schedule("@at 0001-01-01T00:00:00Z", None, NOW, NOW).ns == 0  # Go's zero time: no schedule
    assert parse_schedule("@at 1970-01-01T00:00:00Z", None, NOW, NOW).ns != 0
    assert parse_schedule("@every 1s", None, NOW + NS // 2, NOW) == Next(NOW + 2 * NS, 0, True)  # half rounds up
    assert parse_schedule("@every 1m30s", None, NOW, NOW) == Next(NOW + 90 * NS, 0, True)
    # Behind the clock (a restart): the next run counts from now.
    assert parse_schedule("@every 10s", None, NOW - 3600 * NS, NOW) == Next(NOW + 10 * NS, 0, True)
    assert parse_schedule("@hourly", None, NOW, NOW) == Next(NOW + 3600 * NS, 0, True)
    daily = parse_schedule("@daily", ZoneInfo("Asia/Kolkata"), NOW, NOW)
    assert (rfc3339(daily.ns, daily.offset), daily.repeat) == ("2026-03-02T00:00:00+05:30", True)
    for pattern in ("@every 500ms", "@every", "@every 1", "@at", "@at 2020-01-01", "@reboot", "bad"):
        with pytest.raises(ValueError):
            parse_schedule(pattern, None, NOW, NOW)
    for pattern in ("@at 2020-01-01T00:00:00Z", "@every 1s"):
        with pytest.raises(ValueError):
            parse_schedule(pattern, UTC, NOW, NOW)


def test_time_zone_header() -> None:
    assert time_zone(hdrs.build([("A", "b")])) is None
    assert time_zone(hdrs.build([("Nats-Schedule-Time-Zone", "UTC")])) is UTC
    assert time_zone(hdrs.build([("Nats-Schedule-Time-Zone", "Europe/Paris")])) == ZoneInfo("Europe/Paris")
    assert time_zone(hdrs.build([("Nats-Schedule-Time-Zone", "Local")])) is not None  # the server's own zone
    for bad in ("", "Nope/Zone", "../etc/passwd"):
        with pytest.raises(ApiError):
            time_zone(hdrs.build([("Nats-Schedule-Time-Zone", bad)]))


def test_strip_prefix_is_case_sensitive_and_line_based() -> None:
    block = hdrs.build(
        [("Nats-Schedule", "x"), ("Nats-Scheduler", "y"), ("X-Nats-Schedule", "z"), ("nats-schedule-ttl", "1s")]
    )
    assert strip_prefix(block, b"Nats-Schedule") == hdrs.build([("X-Nats-Schedule", "z"), ("nats-schedule-ttl", "1s")])
    assert strip_prefix(hdrs.build([("Nats-Schedule", "x")]), b"Nats-Schedule") is None


def test_every_anchors_on_the_rounded_previous_run() -> None:
    first = parse_schedule("@every 1500ms", None, NOW + 1_300_000_000, NOW)
    assert rfc3339(first.ns) == "2026-03-01T12:00:02.5Z"
    again = parse_schedule("@every 1500ms", None, first.ns, NOW)
    assert rfc3339(again.ns) == "2026-03-01T12:00:04.5Z"  # 2.5s rounds up to 3s, plus 1.5s


def test_cron_runs_the_next_second_and_the_named_patterns() -> None:
    just_before = NOW + NS - 1
    assert parse_schedule("* * * * * *", None, just_before, NOW).ns == NOW + NS
    sunday = parse_rfc3339("2026-03-01T00:00:00Z")  # a Sunday
    for pattern, later in [
        ("@yearly", "2027-01-01T00:00:00Z"),
        ("@annually", "2027-01-01T00:00:00Z"),
        ("@monthly", "2026-04-01T00:00:00Z"),
        ("@weekly", "2026-03-08T00:00:00Z"),
        ("@daily", "2026-03-02T00:00:00Z"),
        ("@midnight", "2026-03-02T00:00:00Z"),
        ("@hourly", "2026-03-01T01:00:00Z"),
    ]:
        assert rfc3339(parse_schedule(pattern, None, sunday, sunday).ns) == later, pattern
