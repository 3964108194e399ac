"""Message schedules (``allow_msg_schedules``): checked at publish, fired on the server clock.

A message with ``Nats-Schedule`` is stored on its own subject (with
``Nats-Rollup: sub``, so a subject holds one schedule).  When it is due the
stream publishes into itself, on ``Nats-Schedule-Target``, the schedule's
payload (or the last message of ``Nats-Schedule-Source``) with the schedule
and ``Nats-Expected-*`` headers, ``Nats-Msg-Id``, ``Nats-TTL`` and
``Nats-Rollup`` stripped, then ``Nats-Scheduler`` (the schedule's subject),
``Nats-Schedule-Next`` (``purge`` for a one-off, else the next time) and the
``Nats-Schedule-TTL`` / ``Nats-Schedule-Rollup`` values as ``Nats-TTL`` /
``Nats-Rollup``.  Storing a ``purge`` message purges the schedule's subject;
storing a repeat re-arms it.  Storing a plain message on a schedule's
subject cancels the schedule.

Schedules are kept by due time in one sorted list and served by one timer
(never sooner than 250ms ahead, as nats-server); a fired schedule waits,
out of the list, until its produced message is stored (or, in a replicated
stream, until the leadership moves: :meth:`MessageSchedules.clear_inflight`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, tzinfo
from typing import NamedTuple

from sortedcontainers import SortedList

from fakejs.core.clock import Clock, EarliestTimer
from fakejs.core.subjects import is_valid_literal_subject, overlap
from fakejs.gocompat import gotime
from fakejs.gocompat.gotime import NS
from fakejs.jetstream.config.stream import StreamConfig
from fakejs.jetstream.errors import ApiError, api_error
from fakejs.jetstream.storage.store import MessageStore, StoredMessage
from fakejs.jetstream.stream import cron
from fakejs.protocol import headers as hdrs

SCHEDULE = "Nats-Schedule"
TIME_ZONE = "Nats-Schedule-Time-Zone"
SCHEDULE_TTL = "Nats-Schedule-TTL"
SCHEDULE_ROLLUP = "Nats-Schedule-Rollup"
TARGET = "Nats-Schedule-Target"
SOURCE = "Nats-Schedule-Source"
SCHEDULER = "Nats-Scheduler"
NEXT = "Nats-Schedule-Next"
PURGE = "purge"
MIN_DELAY = 0.25  # seconds: nats-server never fires its schedule timer sooner
EARLY_NS = 1_000_000  # a timer in float seconds may wake a hair before the due nanosecond
_PREDEFINED = {
    "@yearly": "0 0 0 1 1 *",
    "@annually": "0 0 0 1 1 *",
    "@monthly": "0 0 0 1 * *",
    "@weekly": "0 0 0 * * 0",
    "@daily": "0 0 0 * * *",
    "@midnight": "0 0 0 * * *",
    "@hourly": "0 0 * * * *",
}


class Next(NamedTuple):
    """When a schedule fires (ns, 0 for "not a schedule"), the zone offset it is written in, and whether it repeats."""

    ns: int
    offset: int
    repeat: bool


def _round_second(ns: int) -> int:
    """Go's ``Time.Round(time.Second)``: halves go up."""
    rest = ns % NS
    return ns - rest if rest * 2 < NS else ns + NS - rest


def _text(value: bytes) -> str:
    return value.decode("utf-8", "surrogateescape")


def parse_schedule(pattern: str, zone: tzinfo | None, ts_ns: int, now_ns: int) -> Next:
    """``parseMsgSchedule``: raises ``ValueError`` for an invalid pattern."""
    if not pattern:
        return Next(0, 0, False)
    if pattern.startswith("@at "):
        if zone is not None:
            raise ValueError("time zone not supported for @at")
        text = pattern[4:]
        try:
            at = gotime.parse_rfc3339(text)
        except OverflowError:
            raise ValueError(text) from None
        if at == 0 and not text.startswith("0001"):
            at = 1  # the epoch is a time; only Go's zero time means "no schedule"
        return Next(at, 0, False)
    if pattern.startswith("@every "):
        if zone is not None:
            raise ValueError("time zone not supported for @every")
        every = gotime.parse_duration(pattern[7:])
        if every < NS:
            raise ValueError("interval below one second")
        next_ns = _round_second(ts_ns) + every
        if next_ns < now_ns:
            next_ns = _round_second(now_ns) + every
        return Next(next_ns, 0, True)
    fields = cron.parse(_PREDEFINED.get(pattern, pattern))
    moment = cron.next_after(fields, ts_ns, zone)
    if moment.timestamp() * NS < now_ns:
        moment = cron.next_after(fields, _round_second(now_ns), zone)
    offset = moment.utcoffset()
    return Next(int(moment.timestamp()) * NS, int(offset.total_seconds()) if offset else 0, True)


def time_zone(hdr: bytes) -> tzinfo | None:
    """``Nats-Schedule-Time-Zone``: absent is ``None``; empty or unknown is refused (10223)."""
    name = hdrs.get(hdr, TIME_ZONE)
    if name is None:
        return None
    text = _text(name)
    if text == "UTC":
        return UTC
    if text == "Local":
        return _local_zone()
    # Only a message naming a time zone loads the time zone database (start-up time)
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(text) if text else _bad_zone()
    except (ZoneInfoNotFoundError, ValueError):
        return _bad_zone()


@functools.cache
def _local_zone() -> tzinfo:
    """Go's ``time.Local``: ``$TZ`` when set (empty is UTC), else /etc/localtime, else UTC."""
    # Only a message naming the local time zone loads the time zone database (start-up time)
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    name = os.environ.get("TZ")
    try:
        if name is not None:
            return ZoneInfo(name.removeprefix(":")) if name else UTC
        with open("/etc/localtime", "rb") as local:
            return ZoneInfo.from_file(local, key="Local")
    except (OSError, ValueError, ZoneInfoNotFoundError):
        return UTC


def _bad_zone() -> tzinfo:
    raise api_error("JSMessageSchedulesTimeZoneInvalidErr")


def next_of(hdr: bytes | None, ts_ns: int, now_ns: int) -> Next:
    """The schedule a message's headers describe (``Next(0, ...)`` when none); raises the 10223/10189 refusals."""
    if not hdr:
        return Next(0, 0, False)
    zone = time_zone(hdr)
    try:
        return parse_schedule(_text(hdrs.get(hdr, SCHEDULE) or b""), zone, ts_ns, now_ns)
    except ValueError:
        raise api_error("JSMessageSchedulesPatternInvalidErr") from None


def _ttl_ok(hdr: bytes, parse_ttl: Callable[[bytes], int]) -> bool:
    value = hdrs.get(hdr, SCHEDULE_TTL)
    if not value:
        return True
    try:
        parse_ttl(value)
    except ValueError:
        return False
    return True


def _in_stream(cfg: StreamConfig, subject: str) -> bool:
    return any(overlap(own, subject) for own in cfg["subjects"] or [])


def check_publish(
    cfg: StreamConfig, store: MessageStore, subject: str, hdr: bytes, now_ns: int, parse_ttl: Callable[[bytes], int]
) -> bytes:
    """The schedule headers of a client's message, in nats-server's order; returns the headers to store."""
    return check_headers(cfg, subject, hdr, now_ns, parse_ttl, functools.partial(holds_other, store))[0]


def holds_other(store: MessageStore, subject: str) -> bool:
    """Whether the subject's last stored message is something other than a schedule (none: no)."""
    last = store.last_message(subject)
    return last is not None and not hdrs.get(last.hdr, SCHEDULE)


def check_headers(
    cfg: StreamConfig,
    subject: str,
    hdr: bytes,
    now_ns: int,
    parse_ttl: Callable[[bytes], int],
    holds_other: Callable[[str], bool],
) -> tuple[bytes, bool]:
    """The schedule headers of a client's message (a single publish or one of a batch), in nats-server's order.

    ``holds_other`` says whether a subject's last message (stored, or earlier
    in the batch) is not a schedule: a client may purge only a schedule.
    Returns the headers to store (a schedule gains ``Nats-Rollup: sub``) and
    whether the message is a schedule.
    """
    enabled = cfg["allow_msg_schedules"]
    try:
        schedule = next_of(hdr, now_ns, now_ns)
    except ApiError:
        if not enabled:
            raise api_error("JSMessageSchedulesDisabledErr") from None
        raise
    if schedule.ns:
        hdr = _check_schedule(cfg, subject, hdr, parse_ttl)
    next_value = hdrs.get(hdr, NEXT)
    if next_value:
        scheduler = _text(hdrs.get(hdr, SCHEDULER) or b"")
        if _text(next_value) != PURGE or not scheduler or scheduler == subject:
            raise api_error("JSMessageSchedulesSchedulerInvalidErr")
        if not is_valid_literal_subject(scheduler):
            raise api_error("JSMessageSchedulesSchedulerInvalidErr")
        if not enabled:
            raise api_error("JSMessageSchedulesDisabledErr")
        if holds_other(scheduler):
            raise api_error("JSMessageSchedulesSchedulerInvalidErr")
    elif hdrs.get(hdr, SCHEDULER):
        raise api_error("JSMessageSchedulesSchedulerInvalidErr")
    return hdr, bool(schedule.ns)


def _check_schedule(cfg: StreamConfig, subject: str, hdr: bytes, parse_ttl: Callable[[bytes], int]) -> bytes:
    if not cfg["allow_msg_schedules"]:
        raise api_error("JSMessageSchedulesDisabledErr")
    if not _ttl_ok(hdr, parse_ttl):
        raise api_error("JSMessageSchedulesTTLInvalidErr")
    rollup = hdrs.get(hdr, SCHEDULE_ROLLUP)
    if rollup and rollup != b"sub":
        raise api_error("JSMessageSchedulesRollupInvalidErr")
    if hdrs.get(hdr, SCHEDULE_TTL) and not cfg["allow_msg_ttl"]:
        raise api_error("JSMessageTTLDisabledErr")
    target = _text(hdrs.get(hdr, TARGET) or b"")
    if not target or not is_valid_literal_subject(target) or target == subject:
        raise api_error("JSMessageSchedulesTargetInvalidErr")
    source = _text(hdrs.get(hdr, SOURCE) or b"")
    if source and (source in (target, subject) or not is_valid_literal_subject(source)):
        raise api_error("JSMessageSchedulesSourceInvalidErr")
    if not _in_stream(cfg, target):
        raise api_error("JSMessageSchedulesTargetInvalidErr")
    if source and not _in_stream(cfg, source):
        raise api_error("JSMessageSchedulesSourceInvalidErr")
    own_rollup = hdrs.get(hdr, "Nats-Rollup")
    if not own_rollup:
        return hdrs.add(hdr, "Nats-Rollup", "sub")
    if _text(own_rollup).lower() != "sub":
        raise api_error("JSMessageSchedulesRollupInvalidErr")
    return hdr


def purged_by(hdr: bytes | None) -> str:
    """The schedule subject a stored ``Nats-Schedule-Next: purge`` message purges (empty if none)."""
    if not hdr or hdrs.get(hdr, NEXT) != PURGE.encode():
        return ""
    return _text(hdrs.get(hdr, SCHEDULER) or b"")


def strip_prefix(hdr: bytes | None, prefix: bytes) -> bytes | None:
    """Drop every header line whose key starts with ``prefix`` (case-sensitive, as nats-server)."""
    if not hdr:
        return hdr
    lines = hdr.split(b"\r\n")
    kept = [lines[0]] + [line for line in lines[1:] if not line.startswith(prefix)]
    block = b"\r\n".join(kept)
    return block if len(block) > len(lines[0]) + 4 else None


@dataclass
class _Entry:
    seq: int
    due_ns: int
    inflight: bool = False


class Produced(NamedTuple):
    """The message a due schedule publishes into its stream: target subject, headers, payload."""

    subject: str
    hdr: bytes
    payload: bytes


class MessageSchedules:
    """The stream's scheduler: schedule subjects by due time, one timer for the earliest."""

    def __init__(
        self,
        store: MessageStore,
        clock: Clock,
        enabled: Callable[[], bool],
        publish: Callable[[Produced], None],
        parse_ttl: Callable[[bytes], int],
    ) -> None:
        """``enabled`` reads the stream's ``allow_msg_schedules``; ``publish`` stores a produced message."""
        self.store = store
        self.clock = clock
        self.enabled = enabled
        self.publish = publish
        self.parse_ttl = parse_ttl
        self._entries: dict[str, _Entry] = {}
        self._due: SortedList = SortedList()  # (due ns, seq, subject) of schedules not in flight
        self._timer = EarliestTimer(clock, self._fire)
        self._closed = False

    def __len__(self) -> int:
        return len(self._entries)

    # -- bookkeeping ----------------------------------------------------------------------

    def _set(self, subject: str, seq: int, due_ns: int) -> None:
        self._unlist(subject)
        self._entries[subject] = _Entry(seq, due_ns)
        self._due.add((due_ns, seq, subject))

    def _unlist(self, subject: str) -> _Entry | None:
        entry = self._entries.get(subject)
        if entry is not None and not entry.inflight:
            self._due.discard((entry.due_ns, entry.seq, subject))
        return entry

    def forget(self, subject: str) -> None:
        if self._unlist(subject) is not None:
            del self._entries[subject]

    def stored(self, msg: StoredMessage) -> str:
        """A message was stored: a schedule is (re)armed, a plain message cancels its subject's, a repeat re-arms.

        Returns the schedule subject the message purges (``Nats-Schedule-Next: purge``), or empty.
        """
        purged = purged_by(msg.hdr)
        if purged:
            self.forget(purged)
        if self.enabled():
            self._track(msg)
        return purged

    def _track(self, msg: StoredMessage) -> None:
        hdr = msg.hdr
        try:
            schedule = next_of(hdr, msg.ts, self.clock.time_ns())
        except ApiError:
            schedule = Next(0, 0, False)
        if schedule.ns:
            self._set(msg.subject, msg.seq, schedule.ns)
        elif not hdrs.get(hdr, SCHEDULER):
            self.forget(msg.subject)
        next_value = hdrs.get(hdr, NEXT)
        scheduler = _text(hdrs.get(hdr, SCHEDULER) or b"")
        if next_value and next_value != PURGE.encode() and scheduler in self._entries:
            try:
                due = gotime.parse_rfc3339(_text(next_value))
            except ValueError:
                return
            self._set(scheduler, self._entries[scheduler].seq, due)
        self.rearm()

    # -- the timer ------------------------------------------------------------------------

    def rearm(self) -> None:
        if self._closed or not self._due:
            self._timer.cancel()
        else:
            self._timer.arm(max((self._due[0][0] - self.clock.time_ns()) / NS, MIN_DELAY))

    def _fire(self) -> None:
        if self._closed:
            return
        now = self.clock.time_ns()
        produced: list[tuple[int, Produced]] = []
        while self._due and self._due[0][0] <= now + EARLY_NS:
            due_ns, seq, subject = self._due.pop(0)
            msg = self.store.get(seq)
            out = self._produce(msg, due_ns, now) if msg is not None else None
            if out is None:
                self._entries.pop(subject, None)
                continue
            self._entries[subject].inflight = True
            produced.append((seq, out))
        for _, out in sorted(produced, key=lambda item: item[0]):
            self.publish(out)
        self.rearm()

    def _produce(self, msg: StoredMessage, due_ns: int, now_ns: int) -> Produced | None:
        """The message a due schedule publishes, or ``None`` when its headers no longer make one."""
        hdr = msg.hdr
        if not hdr or not hdrs.get(hdr, SCHEDULE):
            return None
        try:
            schedule = next_of(hdr, due_ns, now_ns)
        except ApiError:
            return None
        target = _text(hdrs.get(hdr, TARGET) or b"")
        if not _ttl_ok(hdr, self.parse_ttl) or not target:
            return None
        ttl = _text(hdrs.get(hdr, SCHEDULE_TTL) or b"")
        rollup = _text(hdrs.get(hdr, SCHEDULE_ROLLUP) or b"")
        body = msg
        source = _text(hdrs.get(hdr, SOURCE) or b"")
        if source:
            body = self.store.last_message(source) or msg
        out = body.hdr or None
        for prefix in (b"Nats-Schedule", b"Nats-Expected-"):
            out = strip_prefix(out, prefix)
        for key in ("Nats-Msg-Id", "Nats-TTL", "Nats-Rollup"):
            out = hdrs.remove(out, key) or None if out else None
        out = hdrs.add(out, SCHEDULER, msg.subject)
        next_text = gotime.rfc3339(schedule.ns, schedule.offset) if schedule.repeat else PURGE
        out = hdrs.add(out, NEXT, next_text)
        if ttl:
            out = hdrs.add(out, "Nats-TTL", ttl)
        if rollup:
            out = hdrs.add(out, "Nats-Rollup", rollup)
        return Produced(target, out, body.data)

    def clear_inflight(self) -> None:
        """The stream's leadership moved (``ResetState``): the schedules in flight are due again."""
        for subject, entry in self._entries.items():
            if entry.inflight:
                entry.inflight = False
                self._due.add((entry.due_ns, entry.seq, subject))
        self.rearm()

    def recover(self, messages: Iterator[StoredMessage]) -> None:
        """Rebuild the schedules from stored messages (after a restart)."""
        for msg in messages:
            if msg.hdr and hdrs.get(msg.hdr, SCHEDULE):
                self.stored(msg)

    def close(self) -> None:
        self._closed = True
        self.rearm()
