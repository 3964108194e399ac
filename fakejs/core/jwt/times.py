"""A user JWT's connect times: ``times`` (daily ``start``-``end`` ranges, ``HH:MM:SS``) in ``times_location``.

nats-server's ``validateTimes``: without ``times`` a user may connect at
any time; with them, only inside one of the ranges, read on the day of
``now`` in the ``times_location`` time zone (the server's own when left
out), a range whose end comes before its start running past midnight.
The login then lasts until the end of the range that leaves it the most
time (nats-server's expiration timer), unless the JWT expires first.
The fields themselves are validated with the rest of the user claim
(:mod:`fakejs.core.jwt.user_validation`): a user JWT with a bad range or an
unknown time zone is not valid.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from fakejs.core.jwt.user_validation import clock_time


def _ranges(nats: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    value = nats.get("times")
    return [r for r in value if isinstance(r, dict)] if isinstance(value, list) else []


def _zone(nats: Mapping[str, Any]) -> datetime.tzinfo | None:
    """The ``times_location`` zone; None when it is not a known IANA name (the local zone when unset)."""
    name = nats.get("times_location")
    if not name:
        return datetime.datetime.now().astimezone().tzinfo
    try:
        return ZoneInfo(str(name))
    except (ZoneInfoNotFoundError, ValueError):
        return None


def connect_window(nats: Mapping[str, Any], now: float) -> tuple[bool, float]:
    """Whether a user may connect at ``now`` (Unix seconds), and for how long (0: no end from its times)."""
    ranges = _ranges(nats)
    zone = _zone(nats)
    if not ranges:
        return True, 0.0
    if zone is None:
        return False, 0.0
    current = datetime.datetime.fromtimestamp(now, zone)
    allowed, valid_for = False, 0.0
    for entry in ranges:
        start_clock, end_clock = clock_time(entry.get("start")), clock_time(entry.get("end"))
        if start_clock is None or end_clock is None:
            return False, 0.0
        start = current.replace(hour=start_clock[0], minute=start_clock[1], second=start_clock[2], microsecond=0)
        end = current.replace(hour=end_clock[0], minute=end_clock[1], second=end_clock[2], microsecond=0)
        inside, remaining = _in_range(start, end, current)
        if inside and (not allowed or remaining > valid_for):
            allowed, valid_for = True, remaining
    return allowed, valid_for


def _in_range(start: datetime.datetime, end: datetime.datetime, now: datetime.datetime) -> tuple[bool, float]:
    """nats-server's ``validateTimeRangeAt``: inside the range, and the seconds left to its end."""
    if start < now < end:
        return True, (end - now).total_seconds()
    if start > end:  # past midnight
        if end > now:
            return True, (end - now).total_seconds()
        end += datetime.timedelta(days=1)
        if start < now < end:
            return True, (end - now).total_seconds()
    return False, 0.0
