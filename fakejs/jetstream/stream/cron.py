"""nats-server's cron for message schedules: six fields, seconds first.

``second minute hour day-of-month month day-of-week``; each field is a
comma list of ``*`` / ``?`` / ``N`` / ``N-M`` with an optional ``/step``
(``N/step`` runs to the field's maximum); months and weekdays also take
their three-letter English names.  When either day field is a star both
must match, otherwise either may.  The next time is searched from the
second after ``ts`` in the schedule's time zone (UTC by default) and
given up after five years.  croniter puts seconds last and reads the day
fields differently, hence this small parser.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta, tzinfo

from fakejs.gocompat.gotime import NS

STAR_BIT = 1 << 63
_MONTHS = {
    name: i + 1
    for i, name in enumerate(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"])
}
_DAYS = {name: i for i, name in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])}
_BOUNDS: tuple[tuple[int, int, dict[str, int] | None], ...] = (
    (0, 59, None),
    (0, 59, None),
    (0, 23, None),
    (1, 31, None),
    (1, 12, _MONTHS),
    (0, 6, _DAYS),
)
_GO_INT = re.compile(r"[+-]?[0-9]+")

Fields = tuple[int, int, int, int, int, int]


class CronError(ValueError):
    """The pattern does not parse, or never fires within five years."""


def parse(pattern: str) -> Fields:
    """The six fields as bit sets (bit ``n`` set: value ``n`` matches; ``STAR_BIT`` for a star)."""
    fields = pattern.split()
    if len(fields) != 6:
        raise CronError(f"pattern requires 6 fields, got {len(fields)}")
    second, minute, hour, day_of_month, month, day_of_week = (
        _field(text, bounds) for text, bounds in zip(fields, _BOUNDS, strict=True)
    )
    return second, minute, hour, day_of_month, month, day_of_week


def _field(text: str, bounds: tuple[int, int, dict[str, int] | None]) -> int:
    bits = 0
    for expr in text.split(","):
        if expr:
            bits |= _range(expr, *bounds)
    return bits


def _range(expr: str, low: int, high: int, names: dict[str, int] | None) -> int:
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    extra = 0
    if low_and_high[0] in ("*", "?"):
        start, end, extra = low, high, STAR_BIT
    else:
        start = _int_or_name(low_and_high[0], names)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _int_or_name(low_and_high[1], names)
        else:
            raise CronError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _int(range_and_step[1])
        if len(low_and_high) == 1:
            end = high
        if step > 1:
            extra = 0
    else:
        raise CronError(f"too many slashes: {expr}")
    if start < low or end > high or start > end or step == 0:
        raise CronError(f"range out of bounds: {expr}")
    bits = 0
    for value in range(start, end + 1, step):
        bits |= 1 << value
    return bits | extra


def _int_or_name(expr: str, names: dict[str, int] | None) -> int:
    if names is not None and expr.lower() in names:
        return names[expr.lower()]
    return _int(expr)


def _int(expr: str) -> int:
    """Go's ``strconv.Atoi``, refusing negatives."""
    if not _GO_INT.fullmatch(expr) or not expr.isascii():
        raise CronError(f"failed to parse int from {expr}")
    value = int(expr)
    if value < 0 or value >= 2**63:
        raise CronError(f"negative or out of range number: {expr}")
    return value


def _wall(year: int, month: int, day: int, hour: int, minute: int, second: int, zone: tzinfo) -> datetime:
    """Go's ``time.Date``: months and days beyond their range roll over."""
    year += (month - 1) // 12
    month = (month - 1) % 12 + 1
    moment = date(year, month, 1) + timedelta(days=day - 1)
    return datetime(moment.year, moment.month, moment.day, hour, minute, second, tzinfo=zone)


def _add(moment: datetime, seconds: int, zone: tzinfo) -> datetime:
    """Go's ``Time.Add``: elapsed time, whatever the wall clock does."""
    return (moment.astimezone(UTC) + timedelta(seconds=seconds)).astimezone(zone)


def _truncate_minute(moment: datetime, zone: tzinfo) -> datetime:
    stamp = int(moment.timestamp())
    return datetime.fromtimestamp(stamp - stamp % 60, zone)


def _day_matches(day_of_month: int, day_of_week: int, moment: datetime) -> bool:
    """Whether ``moment``'s day matches (robfig/cron's ``dayMatches``, its ``dom`` and ``dow``): both fields
    when either is a star, else either one."""
    day_of_month_matches = bool((1 << moment.day) & day_of_month)
    day_of_week_matches = bool((1 << ((moment.weekday() + 1) % 7)) & day_of_week)
    if day_of_month & STAR_BIT or day_of_week & STAR_BIT:
        return day_of_month_matches and day_of_week_matches
    return day_of_month_matches or day_of_week_matches


def next_after(fields: Fields, ts_ns: int, zone: tzinfo | None = None) -> datetime:
    """The first time after ``ts_ns`` (whole seconds) the fields match, in ``zone``."""
    zone = zone or UTC
    second, minute, hour, day_of_month, month, day_of_week = fields
    moment = datetime.fromtimestamp(ts_ns // NS + 1, zone)
    truncated = False
    year_limit = moment.year + 5
    while True:
        if moment.year > year_limit:
            raise CronError("pattern exceeds maximum range")
        wrapped = False
        while not (1 << moment.month) & month:
            if not truncated:
                truncated = True
                moment = _wall(moment.year, moment.month, 1, 0, 0, 0, zone)
            moment = _wall(moment.year, moment.month + 1, moment.day, moment.hour, moment.minute, moment.second, zone)
            if moment.month == 1:
                wrapped = True
                break
        if wrapped:
            continue
        while not _day_matches(day_of_month, day_of_week, moment):
            if not truncated:
                truncated = True
                moment = _wall(moment.year, moment.month, moment.day, 0, 0, 0, zone)
            moment = _wall(moment.year, moment.month, moment.day + 1, moment.hour, moment.minute, moment.second, zone)
            if moment.day == 1:
                wrapped = True
                break
        if wrapped:
            continue
        while not (1 << moment.hour) & hour:
            if not truncated:
                truncated = True
                moment = _wall(moment.year, moment.month, moment.day, moment.hour, 0, 0, zone)
            moment = _add(moment, 3600, zone)
            if moment.hour == 0:
                wrapped = True
                break
        if wrapped:
            continue
        while not (1 << moment.minute) & minute:
            if not truncated:
                truncated = True
                moment = _truncate_minute(moment, zone)
            moment = _add(moment, 60, zone)
            if moment.minute == 0:
                wrapped = True
                break
        if wrapped:
            continue
        while not (1 << moment.second) & second:
            truncated = True
            moment = _add(moment, 1, zone)
            if moment.second == 0:
                wrapped = True
                break
        if wrapped:
            continue
        return moment
