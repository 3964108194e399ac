"""Message schedules (``allow_msg_schedules``, ADR-51) on both targets.

Every expectation was read off nats-server 2.15.1.  Facts pinned here:

* Config: enabling schedules turns roll-ups on and ``deny_purge`` off (API level
  2); pedantic refuses instead; discard new and counters are refused; an update
  may enable schedules but never disable them.
* A message with ``Nats-Schedule`` is stored on its subject as published, plus
  ``Nats-Rollup: sub``, and acknowledged as any message.  When due, the stream
  stores on ``Nats-Schedule-Target`` the schedule's payload and headers, minus
  ``Nats-Schedule*``, ``Nats-Expected-*``, ``Nats-Msg-Id``, ``Nats-TTL`` and
  ``Nats-Rollup``, plus ``Nats-Scheduler: <schedule subject>``,
  ``Nats-Schedule-Next: purge`` (one-off; the schedule's subject is then
  purged) or the next time (RFC 3339, in the schedule's time zone), then
  ``Nats-TTL`` / ``Nats-Rollup`` from ``Nats-Schedule-TTL`` / ``Nats-Schedule-Rollup``.
  With ``Nats-Schedule-Source`` the payload and headers are the last message
  of that subject.  The produced message is not published on core NATS.
* ``@at`` in the past fires at once; ahead, on time; ``@every 1s`` and a cron
  with seconds repeat; a plain message on a schedule's subject cancels it, and
  a client's ``Nats-Schedule-Next: purge`` + ``Nats-Scheduler`` removes it.
* Publish refusals: pattern 10189 (``@every 500ms``, 5 fields, out of range, a
  time zone with ``@at``, never matching), time zone 10223, target 10190
  (missing, itself, outside the stream, wildcard), TTL 10191 (10166 when TTLs
  are off), rollup 10192, source 10203, scheduler 10212, disabled 10188.
* A schedule on a file stream survives a restart.
"""

from __future__ import annotations

import asyncio
import base64
import re
import time
from typing import Any

import nats
import pytest

from tests.harness.js import api, connect, rfc3339_ns
from tests.harness.publish import ack, err
from tests.harness.stream_config import create, created, invalid, update, updated
from tests.harness.streams import meta
from tests.harness.streams import stream_config as config
from tests.harness.targets import Target
from tests.harness.wait import WAIT

SEC = 1_000_000_000
PAST = "@at 2020-01-01T00:00:00Z"


async def make(nc: nats.NATS, name: str = "S", **cfg: Any) -> None:
    body = {"name": name, "subjects": [name.lower() + ".>"], "storage": "memory", "allow_msg_schedules": True}
    reply = await api(nc, f"$JS.API.STREAM.CREATE.{name}", {**body, **cfg})
    assert "error" not in reply, reply


async def pub(nc: nats.NATS, subject: str, headers: dict[str, str] | None = None, payload: bytes = b"x") -> bytes:
    return (await nc.request(subject, payload, headers=headers, timeout=WAIT)).data


async def get(nc: nats.NATS, stream: str, **request: Any) -> tuple[int, str, bytes, bytes] | None:
    reply = await api(nc, f"$JS.API.STREAM.MSG.GET.{stream}", request)
    if "error" in reply:
        return None
    msg = reply["message"]
    return msg["seq"], msg["subject"], base64.b64decode(msg.get("hdrs", "")), base64.b64decode(msg.get("data", ""))


async def get_ts(nc: nats.NATS, stream: str, seq: int) -> int:
    reply = await api(nc, f"$JS.API.STREAM.MSG.GET.{stream}", {"seq": seq})
    return rfc3339_ns(reply["message"]["time"])


async def subjects(nc: nats.NATS, stream: str = "S") -> dict[str, int]:
    reply = await api(nc, f"$JS.API.STREAM.INFO.{stream}", {"subjects_filter": ">"})
    return reply["state"].get("subjects", {})


async def poll(target: Target, ready: Any, limit: float = 5.0) -> Any:
    value = await target.elapse_until(ready, limit)
    assert value, "not reached in time"
    return value


def block(*pairs: tuple[str, str]) -> bytes:
    return b"NATS/1.0\r\n" + b"".join(f"{k}: {v}\r\n".encode() for k, v in pairs) + b"\r\n"


def at(seconds_ahead: int) -> tuple[str, int]:
    """An ``@at`` pattern that many whole seconds ahead, and its time in ns."""
    when = int(time.time()) + seconds_ahead
    return "@at " + time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when)), when * SEC


# --------------------------------------------------------------------------- config


async def test_schedule_config_rules(nc) -> None:
    cfg = config(allow_msg_schedules=True, allow_rollup_hdrs=True, metadata=meta(2))
    assert await create(nc, {"name": "A", "allow_msg_schedules": True, "deny_purge": True}) == created(
        {**cfg, "name": "A", "subjects": ["A"]}
    )
    assert await create(nc, {"name": "B", "allow_msg_schedules": True, "discard": "new"}) == invalid(
        "message scheduling cannot use discard new"
    )
    assert await create(nc, {"name": "B", "allow_msg_schedules": True, "pedantic": True}) == invalid(
        "message scheduling cannot be set if roll-ups are disabled"
    )
    assert await create(nc, {"name": "B", "allow_msg_schedules": True, "allow_msg_counter": True}) == invalid(
        "counter stream cannot use message schedules"
    )
    reply = await create(nc, {"name": "B", "allow_msg_schedules": True, "allow_rollup_hdrs": True, "pedantic": True})
    assert reply["config"]["allow_msg_schedules"] is True
    update_kind = "io.nats.jetstream.api.v1.stream_update_response"
    assert await update(nc, {"name": "A"}) == invalid("message schedules can not be disabled", update_kind)
    assert (await create(nc, {"name": "C"}))["config"]["allow_rollup_hdrs"] is False
    assert await update(nc, {"name": "C", "allow_msg_schedules": True}) == updated(
        {**cfg, "name": "C", "subjects": ["C"]}
    )


# --------------------------------------------------------------------------- firing


async def test_at_in_the_past_fires_at_once(target: Target) -> None:
    nc = await connect(target)
    await make(nc, allow_msg_ttl=True)
    core = await nc.subscribe("s.>")
    headers = {
        "Nats-Schedule": PAST,
        "Nats-Schedule-Target": "s.tgt",
        "Nats-Msg-Id": "m1",
        "Foo": "bar",
        "Nats-Schedule-TTL": "5s",
        "Nats-Expected-Last-Subject-Sequence": "0",
    }
    assert await pub(nc, "s.sched.a", headers, b"payload") == ack("S", 1)
    fired = block(("Foo", "bar"), ("Nats-Scheduler", "s.sched.a"), ("Nats-Schedule-Next", "purge"), ("Nats-TTL", "5s"))
    assert await poll(target, lambda: get(nc, "S", seq=2)) == (2, "s.tgt", fired, b"payload")
    assert await get(nc, "S", seq=1) is None  # the one-off schedule is purged
    assert await subjects(nc) == {"s.tgt": 1}
    assert (await core.next_msg(timeout=WAIT)).subject == "s.sched.a"  # the publish itself, nothing else
    with pytest.raises(nats.errors.TimeoutError):
        await core.next_msg(timeout=0.3)
    await make(nc, "T")
    assert await pub(nc, "t.sched", {"Nats-Schedule": "@at 2099-01-01T00:00:00Z", "Nats-Schedule-Target": "t.x"}) == (
        ack("T", 1)
    )
    # Stored as published, plus a subject roll-up.
    expected = block(
        ("Nats-Schedule", "@at 2099-01-01T00:00:00Z"), ("Nats-Schedule-Target", "t.x"), ("Nats-Rollup", "sub")
    )
    assert await get(nc, "T", seq=1) == (1, "t.sched", expected, b"x")
    await nc.close()


async def test_at_ahead_fires_on_time(target: Target) -> None:
    nc = await connect(target)
    await make(nc)
    pattern, when = at(2)
    assert await pub(nc, "s.sched", {"Nats-Schedule": pattern, "Nats-Schedule-Target": "s.t"}) == ack("S", 1)
    assert await subjects(nc) == {"s.sched": 1}
    await poll(target, lambda: get(nc, "S", seq=2), limit=6)
    assert await get_ts(nc, "S", 2) >= when
    assert await subjects(nc) == {"s.t": 1}
    await nc.close()


async def test_every_second_repeats(target: Target) -> None:
    nc = await connect(target)
    await make(nc)
    assert await pub(nc, "s.sched", {"Nats-Schedule": "@every 1s", "Nats-Schedule-Target": "s.t"}, b"tick") == ack(
        "S", 1
    )
    await poll(target, lambda: get(nc, "S", seq=3), limit=6)
    nexts = []
    for seq in (2, 3):
        _, subject, hdr, payload = await get(nc, "S", seq=seq)
        found = re.fullmatch(rb"NATS/1.0\r\nNats-Scheduler: s.sched\r\nNats-Schedule-Next: (\S+Z)\r\n\r\n", hdr)
        assert (subject, payload, bool(found)) == ("s.t", b"tick", True), hdr
        nexts.append(rfc3339_ns(found.group(1).decode()))
    assert nexts[1] - nexts[0] == SEC and nexts[0] % SEC == 0
    assert (await subjects(nc))["s.sched"] == 1  # the schedule stays
    # A plain message on the schedule's subject cancels it.
    await pub(nc, "s.sched", None, b"stop")
    await asyncio.sleep(0.3)  # a run already under way may still land
    count = (await subjects(nc))["s.t"]
    await asyncio.sleep(1.6)
    assert (await subjects(nc))["s.t"] == count
    await nc.close()


async def test_cron_with_time_zone(target: Target) -> None:
    nc = await connect(target)
    await make(nc)
    headers = {"Nats-Schedule": "* * * * * *", "Nats-Schedule-Target": "s.t", "Nats-Schedule-Time-Zone": "Asia/Kolkata"}
    assert await pub(nc, "s.sched", headers) == ack("S", 1)
    _, _, hdr, _ = await poll(target, lambda: get(nc, "S", seq=2), limit=6)
    assert re.fullmatch(
        rb"NATS/1.0\r\nNats-Scheduler: s.sched\r\nNats-Schedule-Next: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+05:30\r\n\r\n",
        hdr,
    ), hdr
    patterns = ("@hourly", "@daily", "@midnight", "@weekly", "@monthly", "@yearly", "@annually", "0 30 9 * * mon-fri")
    for pattern in (*patterns, "0 0 12 ? JAN,jul 1-5/2", "*/15 0-59/10 * * * SUN"):
        reply = await pub(nc, "s.other", {"Nats-Schedule": pattern, "Nats-Schedule-Target": "s.u"})
        assert reply.startswith(b'{"stream":"S","seq":'), (pattern, reply)
    await nc.close()


async def test_source_rollup_and_ttl(target: Target) -> None:
    nc = await connect(target)
    await make(nc, allow_msg_ttl=True)
    assert await pub(nc, "s.src", {"X-A": "1", "Nats-Msg-Id": "src", "Nats-TTL": "1h"}, b"from-source") == ack("S", 1)
    for _ in range(2):
        await pub(nc, "s.t", None, b"old")
    headers = {
        "Nats-Schedule": PAST,
        "Nats-Schedule-Target": "s.t",
        "Nats-Schedule-Source": "s.src",
        "Nats-Schedule-Rollup": "sub",
        "Nats-Schedule-TTL": "never",
        "Own": "kept?",
    }
    assert await pub(nc, "s.sched", headers) == ack("S", 4)
    fired = block(
        ("X-A", "1"),
        ("Nats-Scheduler", "s.sched"),
        ("Nats-Schedule-Next", "purge"),
        ("Nats-TTL", "never"),
        ("Nats-Rollup", "sub"),
    )
    assert await poll(target, lambda: get(nc, "S", seq=5)) == (5, "s.t", fired, b"from-source")
    assert await subjects(nc) == {"s.src": 1, "s.t": 1}
    # Without a message on the source subject, the schedule's own content is used.
    headers["Nats-Schedule-Source"] = "s.none"
    assert await pub(nc, "s.sched", headers, b"own") == ack("S", 6)
    fired = block(
        ("Own", "kept?"),
        ("Nats-Scheduler", "s.sched"),
        ("Nats-Schedule-Next", "purge"),
        ("Nats-TTL", "never"),
        ("Nats-Rollup", "sub"),
    )
    assert await poll(target, lambda: get(nc, "S", seq=7)) == (7, "s.t", fired, b"own")
    await nc.close()


async def test_client_purge_removes_a_schedule(target: Target) -> None:
    nc = await connect(target)
    await make(nc)
    assert await pub(nc, "s.sched", {"Nats-Schedule": "@at 2099-01-01T00:00:00Z", "Nats-Schedule-Target": "s.t"}) == (
        ack("S", 1)
    )
    purge = {"Nats-Schedule-Next": "purge", "Nats-Scheduler": "s.sched"}
    assert await pub(nc, "s.t", purge, b"done") == ack("S", 2)
    assert await subjects(nc) == {"s.t": 1}
    assert await get(nc, "S", seq=2) == (2, "s.t", block(*purge.items()), b"done")
    # A scheduler subject without messages is accepted; one holding a plain message is not.
    assert await pub(nc, "s.t", {"Nats-Schedule-Next": "purge", "Nats-Scheduler": "s.empty"}) == ack("S", 3)
    assert await pub(nc, "s.t", {"Nats-Schedule-Next": "purge", "Nats-Scheduler": "s.t"}) == err(
        "S", 400, 10212, "message schedules invalid scheduler"
    )
    await pub(nc, "s.plain")
    assert await pub(nc, "s.t", {"Nats-Schedule-Next": "purge", "Nats-Scheduler": "s.plain"}) == err(
        "S", 400, 10212, "message schedules invalid scheduler"
    )
    await nc.close()


# --------------------------------------------------------------------------- refusals

PATTERN = (400, 10189, "message schedules pattern is invalid")
TARGET = (400, 10190, "message schedules target is invalid")
TTL = (400, 10191, "message schedules invalid per-message TTL")
ROLLUP = (400, 10192, "message schedules invalid rollup")
SOURCE = (400, 10203, "message schedules source is invalid")
SCHEDULER = (400, 10212, "message schedules invalid scheduler")
ZONE = (400, 10223, "message schedules time zone is invalid")
DISABLED = (400, 10188, "message schedules is disabled")
TTL_OFF = (400, 10166, "per-message TTL is disabled")

REFUSALS: list[tuple[dict[str, str], tuple[int, int, str]]] = [
    ({"Nats-Schedule": "@every 500ms", "Nats-Schedule-Target": "s.t"}, PATTERN),
    ({"Nats-Schedule": "@every 1x", "Nats-Schedule-Target": "s.t"}, PATTERN),
    ({"Nats-Schedule": "@at tomorrow", "Nats-Schedule-Target": "s.t"}, PATTERN),
    ({"Nats-Schedule": "0 0 0 * *", "Nats-Schedule-Target": "s.t"}, PATTERN),
    ({"Nats-Schedule": "61 0 0 * * *", "Nats-Schedule-Target": "s.t"}, PATTERN),
    ({"Nats-Schedule": "0 0 0 30 2 *", "Nats-Schedule-Target": "s.t"}, PATTERN),
    ({"Nats-Schedule": "0 0 0 * * 7", "Nats-Schedule-Target": "s.t"}, PATTERN),
    ({"Nats-Schedule": "@daily", "Nats-Schedule-Target": "s.t", "Nats-Schedule-Time-Zone": "Nope/Zone"}, ZONE),
    ({"Nats-Schedule": "@daily", "Nats-Schedule-Target": "s.t", "Nats-Schedule-Time-Zone": ""}, ZONE),
    ({"Nats-Schedule": PAST, "Nats-Schedule-Target": "s.t", "Nats-Schedule-Time-Zone": "Europe/Paris"}, PATTERN),
    ({"Nats-Schedule": "@every 1s", "Nats-Schedule-Target": "s.t", "Nats-Schedule-Time-Zone": "UTC"}, PATTERN),
    ({"Nats-Schedule": PAST}, TARGET),
    ({"Nats-Schedule": PAST, "Nats-Schedule-Target": "s.sched"}, TARGET),
    ({"Nats-Schedule": PAST, "Nats-Schedule-Target": "x.t"}, TARGET),
    ({"Nats-Schedule": PAST, "Nats-Schedule-Target": "s.*"}, TARGET),
    ({"Nats-Schedule": PAST, "Nats-Schedule-Target": "s.t", "Nats-Schedule-TTL": "bad"}, TTL),
    ({"Nats-Schedule": PAST, "Nats-Schedule-Target": "s.t", "Nats-Schedule-TTL": "500ms"}, TTL),
    ({"Nats-Schedule": PAST, "Nats-Schedule-Target": "s.t", "Nats-Schedule-Rollup": "all"}, ROLLUP),
    ({"Nats-Schedule": PAST, "Nats-Schedule-Target": "s.t", "Nats-Schedule-Rollup": "SUB"}, ROLLUP),
    ({"Nats-Schedule": PAST, "Nats-Schedule-Target": "s.t", "Nats-Rollup": "all"}, ROLLUP),
    ({"Nats-Schedule": PAST, "Nats-Schedule-Target": "s.t", "Nats-Schedule-Source": "s.t"}, SOURCE),
    ({"Nats-Schedule": PAST, "Nats-Schedule-Target": "s.t", "Nats-Schedule-Source": "s.sched"}, SOURCE),
    ({"Nats-Schedule": PAST, "Nats-Schedule-Target": "s.t", "Nats-Schedule-Source": "x.y"}, SOURCE),
    ({"Nats-Schedule": PAST, "Nats-Schedule-Target": "s.t", "Nats-Schedule-Source": "s.>"}, SOURCE),
    ({"Nats-Schedule": PAST, "Nats-Schedule-Target": "s.t", "Nats-Schedule-TTL": "5s"}, TTL_OFF),
    ({"Nats-Schedule-Next": "purge"}, SCHEDULER),
    ({"Nats-Schedule-Next": "soon", "Nats-Scheduler": "s.a"}, SCHEDULER),
    ({"Nats-Schedule-Next": "purge", "Nats-Scheduler": "s.sched"}, SCHEDULER),
    ({"Nats-Scheduler": "s.a"}, SCHEDULER),
]

DISABLED_REFUSALS: list[tuple[dict[str, str], tuple[int, int, str]]] = [
    ({"Nats-Schedule": PAST, "Nats-Schedule-Target": "d.t"}, DISABLED),
    ({"Nats-Schedule": "bad"}, DISABLED),
    ({"Nats-Schedule": "@daily", "Nats-Schedule-Time-Zone": "Nope/Zone"}, DISABLED),
    ({"Nats-Schedule-Next": "purge", "Nats-Scheduler": "d.a"}, DISABLED),
    ({"Nats-Schedule-Next": "purge"}, SCHEDULER),
    ({"Nats-Scheduler": "d.a"}, SCHEDULER),
]


async def test_publish_refusals(nc) -> None:
    await make(nc)
    await make(nc, "D", allow_msg_schedules=False)
    got = [await pub(nc, "s.sched", headers) for headers, _ in REFUSALS]
    assert got == [err("S", *want) for _, want in REFUSALS]
    got = [await pub(nc, "d.sched", headers) for headers, _ in DISABLED_REFUSALS]
    assert got == [err("D", *want) for _, want in DISABLED_REFUSALS]
    # An empty pattern is no schedule: stored as it is.
    assert await pub(nc, "s.sched", {"Nats-Schedule": "", "Nats-Schedule-Target": "s.t"}) == ack("S", 1)
    assert (await api(nc, "$JS.API.STREAM.INFO.S"))["state"]["messages"] == 1


# --------------------------------------------------------------------------- restart


async def test_schedule_survives_a_restart(target: Target) -> None:
    nc = await connect(target)
    await make(nc, storage="file")
    pattern, when = at(3)
    assert await pub(nc, "s.sched", {"Nats-Schedule": pattern, "Nats-Schedule-Target": "s.t"}) == ack("S", 1)
    await nc.close()
    await target.restart()
    nc = await connect(target)
    assert await subjects(nc) == {"s.sched": 1}
    await poll(target, lambda: get(nc, "S", seq=2), limit=8)
    assert await get_ts(nc, "S", 2) >= when
    assert await subjects(nc) == {"s.t": 1}
    await nc.close()


ACCEPTED_PATTERNS = [
    "5/20 1-10/3 +2 ? JAN,Jul mon-FRI",
    "*/1 * * * * *",
    "1,,2 * * * * *",
    "0 0 0 13 * fri",
    "0 0 0 29 2 *",
    "  0  0  0  *  *  *  ",
    "@every 1m30s",
    "@every 1.5s",
    "@at 2020-01-01T01:00:00+01:00",
    "@at 2020-01-01T00:00:00.5Z",
    "@at 1970-01-01T00:00:00Z",
]
ACCEPTED_ZONES = ["UTC", "GMT", "Zulu", "Etc/GMT+5", "US/Eastern", "EST5EDT", "right/UTC", " UTC", "Local"]
REFUSED_ZONES = ["utc", "Europe/paris", "/etc/localtime", "../zoneinfo/UTC", "zone.tab"]
REFUSED_PATTERNS = [
    "0 0 0 * * * *",
    "* * 24 * * *",
    "* * * 0 * *",
    "* * * * 13 *",
    "5-3 * * * * *",
    "*/0 * * * * *",
    "1/2/3 * * * * *",
    "1-2-3 * * * * *",
    "-1 * * * * *",
    "1.5 * * * * *",
    "* * * * janu *",
    "@every",
    "@every 1",
    "@at",
    "@at 2020-01-01",
    "@reboot",
    "@DAILY",
]


async def test_pattern_syntax(nc) -> None:
    await make(nc)
    await make(nc, "T", max_msgs_per_subject=1)
    accepted = [
        await pub(nc, "t.sched", {"Nats-Schedule": p, "Nats-Schedule-Target": "t.x"}) for p in ACCEPTED_PATTERNS
    ]
    assert [b"error" in reply for reply in accepted] == [False] * len(ACCEPTED_PATTERNS), accepted
    refused = [await pub(nc, "s.sched", {"Nats-Schedule": p, "Nats-Schedule-Target": "s.x"}) for p in REFUSED_PATTERNS]
    assert refused == [err("S", *PATTERN)] * len(REFUSED_PATTERNS)
    for zone in ACCEPTED_ZONES:
        headers = {"Nats-Schedule": "@daily", "Nats-Schedule-Target": "t.x", "Nats-Schedule-Time-Zone": zone}
        assert b"error" not in await pub(nc, "t.sched", headers), zone
    for zone in REFUSED_ZONES:
        headers = {"Nats-Schedule": "@daily", "Nats-Schedule-Target": "s.x", "Nats-Schedule-Time-Zone": zone}
        assert await pub(nc, "s.sched", headers) == err("S", *ZONE), zone
    # Go's zero time is no schedule at all: stored as it is, without a roll-up.
    headers = {"Nats-Schedule": "@at 0001-01-01T00:00:00Z", "Nats-Schedule-Target": "s.x"}
    assert await pub(nc, "s.zero", headers) == ack("S", 1)
    assert await get(nc, "S", seq=1) == (1, "s.zero", block(*headers.items()), b"x")
