"""Priority groups (ADR-42) as nats-server 2.15.1 implements them: overflow, pinned_client, prioritized.

Every expectation was read off the real 2.15.1 binary; where the ADR and the
server differ, the server wins (and the difference is named below).  The basic
400/423 statuses of the pull path are in ``test_pull_requests.py`` and the
create-time validation table and UNPIN errors in ``test_consumer_api.py``; this
file builds on them.

Facts pinned down here (R1, non-clustered, default account ``$G``):

* Config: ``priority_policy`` needs a pull consumer (10178 is checked before the
  group count, 10159).  Several groups, duplicates and 16-character names are
  accepted; ConsumerInfo ``priority_groups`` lists only the first group.  Any ack
  policy is accepted (the ADR's "explicit only" is not enforced).  Updates may
  switch between every policy, none included (the ADR says they can't); only
  groups without a policy (10196) and a timeout without a policy (10197) are
  refused.  ``priority_timeout`` defaults to 2m for pinned_client only -- also
  when an update omits it -- and is kept as given for overflow/prioritized.
* Pull path order: not-overflow (min_*) -> not-pinned (id) -> priority range ->
  [JSON requests only] group missing -> unknown group -> pin id mismatch.
* overflow: a request with min_pending/min_ack_pending is skipped (cycled) until
  ``min_pending <= num_pending`` counted *with* the message about to be delivered,
  or ``min_ack_pending <= num_ack_pending`` counted *before* it; either suffices.
  Unconditional requests are served in plain FIFO/round-robin order, so a waiting
  conditional request never blocks them -- but a satisfied one is not put behind
  them either (the ADR's special case for max_ack_pending 1 is not implemented).
  A no_wait request below its threshold ends with ``404 No Messages``.
* pinned_client: the first waiting request without an id that is about to get a
  message gets a new 22-character NUID pin (advisory PINNED); each delivery of a
  pinned consumer gets ``Nats-Pin-Id: <pin>`` appended to its headers (not counted
  against max_bytes).  Requests without id are skipped while a pin exists.  A pull
  with another id is refused at once with ``423 Nats-Pin-Id mismatch`` while a pin
  exists; while none exists it is queued and, when a message comes, answered
  ``423 Nats-Wrong-Pin-Id`` + Nats-Pending-Messages/Bytes (what it still wanted).
  Non-JSON pulls carry no group: they never get a pin, are served only while nobody
  is pinned, and their messages carry an *empty* ``Nats-Pin-Id:`` header.
  A pull with the right id re-arms the ``priority_timeout`` timer; a request merely
  waiting does not.  When the timer fires: advisory UNPINNED reason ``timeout``;
  UNPIN: reason ``admin`` (sent even when nobody was pinned, and for overflow
  consumers).  When a message larger than a freshly pinned request's max_bytes
  ends it (409), the pin is dropped again without an UNPINNED advisory.  The pin
  survives a policy switch on update and keeps blocking id-less pulls.
* prioritized: the waiting queue is ordered by ``priority`` (0 first); equal
  priorities are FIFO and a request wanting more goes behind its equals; a JSON
  request without ``priority`` is priority 0; non-JSON requests come after 9.
  Pulls written together are served by priority round after round; with messages
  already pending nats-server usually queues the whole read first (its delivery
  goroutine may start sooner), and fakejs always does.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.harness.env import env_fixture
from tests.harness.js import MS, SEC, ZERO_TIME, api, rfc3339_ns
from tests.harness.pull import PullEnv, PullWire, ack, bad_request, pending
from tests.harness.targets import Target
from tests.harness.wait import WAIT, poll
from tests.harness.wire import Frame

C = "$JS.API.CONSUMER."
T = "io.nats.jetstream.api.v1."
ADV = "$JS.EVENT.ADVISORY.CONSUMER."
NUID = re.compile(r"[A-Za-z0-9]{22}")
RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z")
QUIET = 0.25  # seconds to watch for something that must not happen

PINNED = {"priority_policy": "pinned_client", "priority_groups": ["A"]}
OVERFLOW = {"priority_policy": "overflow", "priority_groups": ["A"]}
PRIORITIZED = {"priority_policy": "prioritized", "priority_groups": ["A"]}

PIN_MISMATCH = b"NATS/1.0 423 Nats-Pin-Id mismatch\r\n\r\n"
NO_MESSAGES = b"NATS/1.0 404 No Messages\r\n\r\n"


def wrong_pin(msgs: int, nbytes: int = 0) -> bytes:
    return pending("423 Nats-Wrong-Pin-Id", msgs, nbytes)


def pin_header(pin: str, stored: bytes = b"") -> bytes:
    """The header block of a pinned delivery: the stored headers, then Nats-Pin-Id."""
    lines = stored[len(b"NATS/1.0\r\n") : -2] if stored else b""
    return b"NATS/1.0\r\n" + lines + b"Nats-Pin-Id: " + pin.encode() + b"\r\n\r\n"


def pin_of(frame: Frame) -> str:
    match = re.search(rb"\r\nNats-Pin-Id: ([^\r]*)\r\n", frame.header or b"")
    assert match, frame.raw
    return match.group(1).decode()


def header_value(frame: Frame, name: str) -> str | None:
    match = re.search(rb"\r\n" + name.encode() + rb": ([^\r]*)\r\n", frame.header or b"")
    return match.group(1).decode() if match else None


# --------------------------------------------------------------------------- environment


class PEnv(PullEnv):
    """``PullEnv`` plus advisories, UNPIN and the consumer's priority state."""

    async def start(self, **kwargs: Any) -> PullWire:  # type: ignore[override]
        kwargs.setdefault("consumer", PINNED)
        wire = await super().start(**kwargs)
        # Subscribed after the consumer exists, so only the group advisories arrive.
        self.adv_pinned = await wire.inbox(f"{ADV}PINNED.S.C")
        self.adv_unpinned = await wire.inbox(f"{ADV}UNPINNED.S.C")
        await wire.ping()
        return wire

    def advisories_of(self, kind: str) -> list[Frame]:
        wire = self.wires[0]
        return wire.on(self.adv_pinned if kind == "PINNED" else self.adv_unpinned)

    async def wait_advisory(self, kind: str, count: int = 1, timeout: float = WAIT) -> Frame:
        wire = self.wires[0]
        await wire.until(lambda: len(self.advisories_of(kind)) >= count, f"{count} {kind} advisory(ies)", timeout)
        return self.advisories_of(kind)[count - 1]

    async def unpin(self, group: str = "A", consumer: str = "C") -> dict:
        return await api(self.nc, f"{C}UNPIN.S.{consumer}", {"group": group})

    async def group_state(self) -> dict:
        (state,) = (await self.info())["priority_groups"]
        return state

    async def update(self, **config: Any) -> dict:
        cfg = {"durable_name": "C", "ack_policy": "explicit", **config}
        return await api(self.nc, f"{C}CREATE.S.C", {"stream_name": "S", "config": cfg, "action": "update"})


# fakejs runs on a manual clock here: every wait below lets the server's time pass explicitly.
pytestmark = pytest.mark.manual_clock

env = env_fixture(PEnv)


def check_advisory(frame: Frame, kind: str, *, sid: int, group: str = "A", **last: str) -> dict:
    """Byte-exact advisory check; ``id`` and ``timestamp`` must only be well formed."""
    doc = json.loads(frame.payload)
    assert NUID.fullmatch(doc.get("id", "")), doc
    assert RFC3339.fullmatch(doc.get("timestamp", "")), doc
    name = "pinned" if kind == "PINNED" else "unpinned"
    expected = {
        "type": f"io.nats.jetstream.advisory.v1.consumer_group_{name}",
        "id": doc["id"],
        "timestamp": doc["timestamp"],
        "account": "$G",
        "stream": "S",
        "consumer": "C",
        "group": group,
        **last,
    }
    payload = json.dumps(expected, separators=(",", ":")).encode()
    subject = f"{ADV}{kind}.S.C".encode()
    assert frame.raw == b"MSG %s %d %d\r\n%s\r\n" % (subject, sid, len(payload), payload)
    return doc


# =========================================================================== configuration


async def create(env: PEnv, name: str, **config: Any) -> dict:
    cfg = {"durable_name": name, "ack_policy": "explicit", **config}
    return await api(env.nc, f"{C}CREATE.S.{name}", {"stream_name": "S", "config": cfg})


def priority_view(reply: dict) -> tuple:
    assert "error" not in reply, reply
    config = reply["config"]
    keys = ("priority_groups", "priority_policy", "priority_timeout")
    return tuple(config.get(key) for key in keys), reply.get("priority_groups")


UNPINNED_STATE = [{"group": "A", "pinned_ts": ZERO_TIME}]


@pytest.mark.parametrize(
    "before, after, view",
    [
        ({}, PINNED, ((["A"], "pinned_client", 120 * SEC), UNPINNED_STATE)),
        (PINNED, {}, ((None, None, None), None)),
        (PINNED, OVERFLOW, ((["A"], "overflow", None), UNPINNED_STATE)),
        (
            OVERFLOW,
            {**PRIORITIZED, "priority_groups": ["B", "A"]},
            ((["B", "A"], "prioritized", None), [{"group": "B", "pinned_ts": ZERO_TIME}]),
        ),
        (PRIORITIZED, {"priority_policy": "none"}, ((None, None, None), None)),
    ],
)
async def test_update_switches_policy(env: PEnv, before: dict, after: dict, view: tuple) -> None:
    """Unlike the ADR, 2.15.1 lets an update switch policies freely, to and from none."""
    await env.start(consumer=before)
    assert priority_view(await env.update(**after)) == view
    assert priority_view(await env.info()) == view


@pytest.mark.parametrize(
    "change, err",
    [
        (
            {"priority_policy": "none", "priority_groups": ["A"]},
            (10196, "consumer can not have priority groups when policy is none"),
        ),
        ({"priority_timeout": SEC}, (10197, "PinnedTTL cannot be set when PriorityPolicy is none")),
    ],
)
async def test_update_refused_without_policy(env: PEnv, change: dict, err: tuple) -> None:
    await env.start(consumer={**PINNED, "priority_timeout": 5 * SEC})
    reply = await env.update(**change)
    assert reply == {
        "type": T + "consumer_create_response",
        "error": {"code": 400, "err_code": err[0], "description": err[1]},
    }
    assert priority_view(await env.info()) == ((["A"], "pinned_client", 5 * SEC), UNPINNED_STATE)


async def test_priority_timeout_defaults_only_for_pinned_client(env: PEnv) -> None:
    await env.start()
    assert priority_view(await env.update(**PINNED, priority_timeout=5 * SEC))[0] == (["A"], "pinned_client", 5 * SEC)
    assert priority_view(await env.update(**PINNED))[0] == (
        ["A"],
        "pinned_client",
        120 * SEC,
    )  # omitted -> default again
    assert priority_view(await env.update(**OVERFLOW, priority_timeout=3 * SEC))[0] == (["A"], "overflow", 3 * SEC)
    assert priority_view(await env.update(**OVERFLOW))[0] == (["A"], "overflow", None)
    reply = await create(env, "P", **PRIORITIZED, priority_timeout=7 * SEC)
    assert priority_view(reply)[0] == (["A"], "prioritized", 7 * SEC)


async def test_several_groups_only_first_reported(env: PEnv) -> None:
    """More than one group (the ADR's "one group only" is not enforced); pulls may name any of them."""
    groups = ["abcdefghijklmnop", "A-_/=9", "A-_/=9"]
    wire = await env.start(consumer={"priority_policy": "overflow", "priority_groups": groups}, messages=2)
    info = await env.info()
    assert info["config"]["priority_groups"] == groups
    assert info["priority_groups"] == [{"group": "abcdefghijklmnop", "pinned_ts": ZERO_TIME}]
    second = await wire.pull({"batch": 1, "group": "A-_/=9"})
    first = await wire.pull({"batch": 1, "group": "abcdefghijklmnop"})
    assert [f.payload for f in await wire.wait(second)] == [b"m0"]
    assert [f.payload for f in await wire.wait(first)] == [b"m1"]


@pytest.mark.parametrize("group", ["a b", "a*", ">", "\u00e9", "a\tb"])
async def test_group_name_characters_refused(env: PEnv, group: str) -> None:
    await env.start(make_consumer=False)
    reply = await create(env, "C", priority_policy="overflow", priority_groups=["A", group])
    text = "Valid priority group name must match A-Z, a-z, 0-9, -_/=)+ and may not exceed 16 characters"
    assert reply["error"] == {"code": 400, "err_code": 10162, "description": text}


async def test_any_ack_policy_accepted(env: PEnv) -> None:
    """The ADR wants ack policy explicit for overflow and pinned_client; 2.15.1 does not insist."""
    wire = await env.start(make_consumer=False, messages=1)
    for policy in ("none", "all"):
        for name, config in (("O" + policy, OVERFLOW), ("P" + policy, PINNED)):
            reply = await create(env, name, **config, ack_policy=policy)
            assert reply["config"]["ack_policy"] == policy, reply
    inbox = await wire.pull({"batch": 1, "group": "A"}, consumer="Pnone")
    (frame,) = await wire.wait(inbox)
    assert frame.payload == b"m0" and NUID.fullmatch(pin_of(frame))


async def test_push_consumer_is_checked_before_group_count(env: PEnv) -> None:
    await env.start(make_consumer=False)
    reply = await create(env, "C", priority_policy="overflow", deliver_subject="d")
    assert reply["error"] == {
        "code": 400,
        "err_code": 10178,
        "description": "priority groups can not be used with push consumers",
    }


@pytest.mark.parametrize(
    "config, body, text",
    [
        (OVERFLOW, {"id": "x"}, "Not a Pinned Client Priority consumer"),
        (PINNED, {"min_ack_pending": 1, "id": "x"}, "Not a Overflow Priority consumer"),
        (PINNED, {"id": "x", "priority": 10}, "Priority must be between 0 and 9"),
        (PRIORITIZED, {"priority": 10}, "Priority must be between 0 and 9"),
        (PRIORITIZED, {"priority": 0}, "Priority Group missing"),
    ],
)
async def test_pull_checks_order_on_priority_consumers(env: PEnv, config: dict, body: dict, text: str) -> None:
    """Field/policy checks come before the group checks, the group checks before the pin check."""
    wire = await env.start(consumer=config, messages=1)
    inbox = await wire.pull({"batch": 1, **body})
    await wire.wait(inbox)
    assert wire.raw(inbox) == [wire.hmsg(inbox, bad_request(text))]


async def test_group_checks_come_before_the_pin_check(env: PEnv) -> None:
    wire = await env.start(messages=2)
    first = await wire.pull({"batch": 1, "group": "A"})
    await wire.wait(first)  # someone is pinned now
    missing = await wire.pull({"batch": 1, "id": "x"})
    unknown = await wire.pull({"batch": 1, "group": "B", "id": "x"})
    wrong = await wire.pull({"batch": 1, "group": "A", "id": "x"})
    for inbox in (missing, unknown, wrong):
        await wire.wait(inbox)
    assert wire.raw(missing) == [wire.hmsg(missing, bad_request("Priority Group missing"))]
    assert wire.raw(unknown) == [wire.hmsg(unknown, bad_request("Invalid Priority Group"))]
    assert wire.raw(wrong) == [wire.hmsg(wrong, PIN_MISMATCH)]


# =========================================================================== overflow


async def test_min_pending_counts_the_message_about_to_be_delivered(env: PEnv) -> None:
    wire = await env.start(consumer=OVERFLOW, messages=2)
    inbox = await wire.pull({"batch": 5, "group": "A", "min_pending": 3})
    await wire.quiet(QUIET)
    assert wire.on(inbox) == [] and (await env.info())["num_pending"] == 2
    await env.publish("s.2", b"m2")  # 3 pending: the first one goes, which leaves 2 < 3
    (frame,) = await wire.wait(inbox)
    assert frame.raw == wire.msg("s.0", ack(1, 1, 1, await env.stored_ns(1), 2), b"m0", to=inbox)
    await wire.quiet(QUIET)
    assert len(wire.on(inbox)) == 1
    await env.publish("s.3", b"m3")
    frames = await wire.wait(inbox, 2)
    assert frames[1].payload == b"m1"
    await wire.quiet(QUIET)
    info = await env.info()
    assert (len(wire.on(inbox)), info["num_pending"], info["num_waiting"]) == (2, 2, 1)


async def test_min_ack_pending_counts_unacked_before_delivery(env: PEnv) -> None:
    wire = await env.start(consumer=OVERFLOW, messages=5)
    conditional = await wire.pull({"batch": 5, "group": "A", "min_ack_pending": 2})
    await wire.quiet(QUIET)
    assert wire.on(conditional) == []
    taker = await wire.pull({"batch": 1, "group": "A"})
    assert [f.payload for f in await wire.wait(taker)] == [b"m0"]
    await wire.quiet(QUIET)
    assert wire.on(conditional) == []  # 1 unacked < 2
    taker = await wire.pull({"batch": 1, "group": "A"})
    await wire.wait(taker)
    # 2 unacked: served, and every delivery keeps the count above the threshold
    frames = await wire.wait(conditional, 3)
    assert [f.payload for f in frames] == [b"m2", b"m3", b"m4"]
    info = await env.info()
    assert (info["num_ack_pending"], info["num_pending"], info["num_waiting"]) == (5, 0, 1)


async def test_min_ack_pending_drops_below_after_acks(env: PEnv) -> None:
    wire = await env.start(consumer=OVERFLOW, messages=4)
    taker = await wire.pull({"batch": 2, "group": "A"})
    frames = await wire.wait(taker, 2)
    for frame in frames:
        await wire.send(b"PUB %s 0\r\n\r\n" % frame.reply.encode())
    await wire.ping()
    info = await poll(env.info, lambda info: info["num_ack_pending"] == 0, timeout=WAIT, interval=0.01)
    assert info["num_ack_pending"] == 0, "acks not processed"
    conditional = await wire.pull({"batch": 2, "group": "A", "min_ack_pending": 1})
    await wire.quiet(QUIET)
    assert wire.on(conditional) == []


@pytest.mark.parametrize(
    "thresholds",
    [
        {"min_pending": 2, "min_ack_pending": 100},
        {"min_pending": 100, "min_ack_pending": 1},
    ],
)
async def test_either_threshold_suffices(env: PEnv, thresholds: dict) -> None:
    wire = await env.start(consumer=OVERFLOW, messages=3)
    taker = await wire.pull({"batch": 1, "group": "A"})
    await wire.wait(taker)  # 2 pending, 1 unacked
    inbox = await wire.pull({"batch": 1, "group": "A", **thresholds})
    (frame,) = await wire.wait(inbox)
    assert frame.payload == b"m1"


async def test_unconditional_request_overtakes_unsatisfied_one(env: PEnv) -> None:
    wire = await env.start(consumer=OVERFLOW)
    conditional = await wire.pull({"batch": 3, "group": "A", "min_pending": 2})
    plain = await wire.pull({"batch": 3, "group": "A", "min_pending": 0, "min_ack_pending": 0})
    await env.publish("s.x", b"x")
    (frame,) = await wire.wait(plain)
    assert frame.payload == b"x"
    await wire.quiet(QUIET)
    assert wire.on(conditional) == []
    assert await env.waiting() == 2


async def test_satisfied_conditional_request_keeps_its_place(env: PEnv) -> None:
    """The ADR asks to prefer unconditional pulls when max_ack_pending is 1; 2.15.1 serves FIFO."""
    wire = await env.start(consumer={**OVERFLOW, "max_ack_pending": 1})
    conditional = await wire.pull({"batch": 1, "group": "A", "min_pending": 1})
    plain = await wire.pull({"batch": 1, "group": "A"})
    assert await env.waiting() == 2
    await env.publish("s.x", b"x")
    assert [f.payload for f in await wire.wait(conditional)] == [b"x"]
    await wire.quiet(QUIET)
    assert wire.on(plain) == []


async def test_request_below_threshold_expires(env: PEnv) -> None:
    wire = await env.start(consumer=OVERFLOW, messages=1)
    inbox = await wire.pull({"batch": 4, "group": "A", "min_pending": 5, "max_bytes": 1000, "expires": 300 * MS})
    await wire.wait(inbox)
    assert wire.raw(inbox) == [wire.hmsg(inbox, pending("408 Request Timeout", 4, 1000))]
    assert (await env.info())["num_pending"] == 1


async def test_no_wait_request_below_threshold_gets_no_messages(env: PEnv) -> None:
    wire = await env.start(consumer=OVERFLOW, messages=1)
    inbox = await wire.pull({"batch": 1, "group": "A", "min_pending": 5, "no_wait": True})
    await wire.wait(inbox)
    assert wire.raw(inbox) == [wire.hmsg(inbox, NO_MESSAGES)]
    assert await env.waiting() == 0


async def test_priority_field_is_ignored_without_prioritized_policy(env: PEnv) -> None:
    wire = await env.start(consumer=OVERFLOW)
    low = await wire.pull({"batch": 1, "group": "A", "priority": 9})
    high = await wire.pull({"batch": 1, "group": "A", "priority": 0})
    assert await env.waiting() == 2
    await env.publish("s.x", b"1")
    await env.publish("s.x", b"2")
    assert [f.payload for f in await wire.wait(low)] == [b"1"]
    assert [f.payload for f in await wire.wait(high)] == [b"2"]


# =========================================================================== pinned_client


async def test_first_request_gets_pin_on_every_delivery(env: PEnv) -> None:
    wire = await env.start(messages=3)
    inbox = await wire.pull({"batch": 3, "group": "A"})
    frames = await wire.wait(inbox, 3)
    pin = pin_of(frames[0])
    assert NUID.fullmatch(pin)
    for i, frame in enumerate(frames):
        reply = ack(1, i + 1, i + 1, await env.stored_ns(i + 1), 2 - i)
        assert frame.raw == wire.hmsg(f"s.{i}", pin_header(pin), b"m%d" % i, reply=reply, to=inbox)
    state = await env.group_state()
    assert list(state) == ["group", "pinned_client_id", "pinned_ts"]
    assert state["pinned_client_id"] == pin
    advisory = check_advisory(await env.wait_advisory("PINNED"), "PINNED", sid=wire.sids[env.adv_pinned], pinned_id=pin)
    assert abs(rfc3339_ns(state["pinned_ts"]) - rfc3339_ns(advisory["timestamp"])) < SEC
    assert env.advisories_of("UNPINNED") == []


async def test_pin_header_follows_stored_headers_and_is_not_counted_in_max_bytes(env: PEnv) -> None:
    wire = await env.start(make_consumer=False)
    stored = b"NATS/1.0\r\nK: v\r\n\r\n"
    await env.publish("s.h", b"hello", headers={"K": "v"})
    await env.publish("s.p", b"x")
    await env.add_consumer("C", **PINNED)  # after the messages: exact pending counts in the ack replies
    inbox = await wire.pull({"batch": 3, "group": "A", "max_bytes": 1000})
    frames = await wire.wait(inbox, 2)
    pin = pin_of(frames[0])
    replies = [ack(1, 1, 1, await env.stored_ns(1), 1), ack(1, 2, 2, await env.stored_ns(2), 0)]
    assert frames[0].raw == wire.hmsg("s.h", pin_header(pin, stored), b"hello", reply=replies[0], to=inbox)
    assert frames[1].raw == wire.hmsg("s.p", pin_header(pin), b"x", reply=replies[1], to=inbox)
    await env.publish("s.q", b"y")
    frames = await wire.wait(inbox, 4)
    reply3 = ack(1, 3, 3, await env.stored_ns(3), 0)
    used = (3 + len(replies[0]) + len(stored) + 5) + (3 + len(replies[1]) + 1) + (3 + len(reply3) + 1)
    assert frames[3].raw == wire.hmsg(inbox, pending("409 Batch Completed", 0, 1000 - used))


async def test_requests_without_id_wait_while_pinned(env: PEnv) -> None:
    wire = await env.start(messages=1)
    first = await wire.pull({"batch": 1, "group": "A"})
    pin = pin_of((await wire.wait(first))[0])
    others = [await wire.pull({"batch": 5, "group": "A"}), await wire.pull(b"5")]
    assert await env.waiting() == 2
    for i in range(3):
        await env.publish("s.x", b"%d" % i)
    await wire.quiet(QUIET)
    assert [wire.on(inbox) for inbox in others] == [[], []]
    pinned = await wire.pull({"batch": 5, "group": "A", "id": pin})
    frames = await wire.wait(pinned, 3)
    assert [(f.payload, pin_of(f)) for f in frames] == [(b"0", pin), (b"1", pin), (b"2", pin)]
    assert await env.waiting() == 3
    assert (await env.group_state())["pinned_client_id"] == pin
    assert len(env.advisories_of("PINNED")) == 1


async def test_only_the_first_waiting_request_is_pinned(env: PEnv) -> None:
    wire = await env.start()
    a = await wire.pull({"batch": 2, "group": "A"})
    b = await wire.pull({"batch": 2, "group": "A"})
    assert await env.waiting() == 2
    for i in range(3):
        await env.publish("s.x", b"%d" % i)
    frames = await wire.wait(a, 2)
    assert [f.payload for f in frames] == [b"0", b"1"] and pin_of(frames[0]) == pin_of(frames[1])
    await wire.quiet(QUIET)
    assert wire.on(b) == []
    assert (await env.info())["num_pending"] == 1


async def test_unpin_hands_the_pin_to_the_next_request(env: PEnv) -> None:
    wire = await env.start(messages=1)
    first = await wire.pull({"batch": 1, "group": "A"})
    old = pin_of((await wire.wait(first))[0])
    stale = await wire.pull({"batch": 5, "group": "A", "id": old, "max_bytes": 2000})
    fresh = await wire.pull({"batch": 2, "group": "A"})
    assert await env.waiting() == 2

    assert await env.unpin() == {"type": T + "consumer_unpin_response"}
    check_advisory(await env.wait_advisory("UNPINNED"), "UNPINNED", sid=wire.sids[env.adv_unpinned], reason="admin")
    assert await env.group_state() == {"group": "A", "pinned_ts": ZERO_TIME}
    assert await env.waiting() == 2  # nothing happens before a message comes

    await env.publish("s.x", b"x")
    (frame,) = await wire.wait(fresh)
    new = pin_of(frame)
    assert NUID.fullmatch(new) and new != old
    await wire.wait(stale)
    assert wire.raw(stale) == [wire.hmsg(stale, wrong_pin(5, 2000))]
    check_advisory(await env.wait_advisory("PINNED", 2), "PINNED", sid=wire.sids[env.adv_pinned], pinned_id=new)
    state = await env.group_state()
    assert state["pinned_client_id"] == new and state["pinned_ts"] != ZERO_TIME
    # The old id is now refused at once.
    again = await wire.pull({"batch": 1, "group": "A", "id": old})
    await wire.wait(again)
    assert wire.raw(again) == [wire.hmsg(again, PIN_MISMATCH)]


async def test_stale_request_reports_what_it_still_wanted(env: PEnv) -> None:
    wire = await env.start(messages=2)
    inbox = await wire.pull({"batch": 5, "group": "A", "max_bytes": 500})
    frames = await wire.wait(inbox, 2)
    used = sum(len(f.subject) + len(f.reply) + len(f.payload) for f in frames)  # the pin header is not counted
    assert await env.unpin() == {"type": T + "consumer_unpin_response"}
    await env.publish("s.x", b"x")
    await wire.wait(inbox, 3)
    assert wire.raw(inbox)[2] == wire.hmsg(inbox, wrong_pin(3, 500 - used))
    assert await env.waiting() == 0
    assert (await env.info())["num_pending"] == 1  # the message waits for the next request
    assert await env.group_state() == {"group": "A", "pinned_ts": ZERO_TIME}


async def test_unpin_without_pin_still_sends_advisory(env: PEnv) -> None:
    wire = await env.start()
    assert await env.unpin() == {"type": T + "consumer_unpin_response"}
    check_advisory(await env.wait_advisory("UNPINNED"), "UNPINNED", sid=wire.sids[env.adv_unpinned], reason="admin")
    await env.add_consumer("O", **{**OVERFLOW, "priority_groups": ["G", "A"]})
    other = await wire.inbox(f"{ADV}UNPINNED.S.O")
    await wire.ping()
    assert await env.unpin("A", "O") == {"type": T + "consumer_unpin_response"}
    await wire.wait(other)
    doc = json.loads(wire.on(other)[0].payload)
    assert list(doc) == ["type", "id", "timestamp", "account", "stream", "consumer", "group", "reason"]
    assert (doc["consumer"], doc["group"], doc["reason"]) == ("O", "A", "admin")
    assert env.advisories_of("PINNED") == []


async def test_non_json_pulls_get_an_empty_pin_header(env: PEnv) -> None:
    """A bare batch carries no group: no pin is made, but the header is stamped anyway (empty)."""
    wire = await env.start(messages=2)
    inbox = await wire.pull(b"2")
    frames = await wire.wait(inbox, 2)
    for i, frame in enumerate(frames):
        reply = ack(1, i + 1, i + 1, await env.stored_ns(i + 1), 1 - i)
        assert frame.raw == wire.hmsg(f"s.{i}", b"NATS/1.0\r\nNats-Pin-Id: \r\n\r\n", b"m%d" % i, reply=reply, to=inbox)
    assert await env.group_state() == {"group": "A", "pinned_ts": ZERO_TIME}
    await wire.quiet(QUIET)
    assert env.advisories_of("PINNED") == []


async def test_max_bytes_refusal_takes_a_fresh_pin_back(env: PEnv) -> None:
    wire = await env.start(messages=1)
    small = await wire.pull({"batch": 2, "group": "A", "max_bytes": 5})
    await wire.wait(small)
    assert wire.raw(small) == [wire.hmsg(small, pending("409 Message Size Exceeds MaxBytes", 2, 5))]
    advisory = await env.wait_advisory("PINNED")  # the pin was made, then taken back silently
    first = json.loads(advisory.payload)["pinned_id"]
    check_advisory(advisory, "PINNED", sid=wire.sids[env.adv_pinned], pinned_id=first)
    assert await env.group_state() == {"group": "A", "pinned_ts": ZERO_TIME}
    inbox = await wire.pull({"batch": 1, "group": "A"})
    (frame,) = await wire.wait(inbox)
    assert frame.payload == b"m0" and pin_of(frame) != first
    await env.wait_advisory("PINNED", 2)
    assert env.advisories_of("UNPINNED") == []


async def test_pin_survives_switch_to_overflow(env: PEnv) -> None:
    """The pin is consumer state, not config: it stays after an update and blocks id-less pulls."""
    wire = await env.start(messages=2)
    first = await wire.pull({"batch": 1, "group": "A"})
    pin = pin_of((await wire.wait(first))[0])
    reply = await env.update(**OVERFLOW)
    assert reply["priority_groups"][0]["pinned_client_id"] == pin
    blocked = await wire.pull({"batch": 1, "group": "A"})
    await wire.quiet(QUIET)
    assert wire.on(blocked) == [] and await env.waiting() == 1
    refused = await wire.pull({"batch": 1, "group": "A", "id": pin})
    await wire.wait(refused)
    assert wire.raw(refused) == [wire.hmsg(refused, bad_request("Not a Pinned Client Priority consumer"))]
    assert await env.unpin() == {"type": T + "consumer_unpin_response"}
    (frame,) = await wire.wait(blocked)
    assert frame.raw == wire.msg(
        "s.1", ack(1, 2, 2, await env.stored_ns(2), 0), b"m1", to=blocked
    )  # no pin header any more


async def test_no_wait_pull_with_pin_id(env: PEnv) -> None:
    wire = await env.start(messages=2)
    first = await wire.pull({"batch": 1, "group": "A"})
    pin = pin_of((await wire.wait(first))[0])
    served = await wire.pull({"batch": 3, "group": "A", "id": pin, "no_wait": True})
    frames = await wire.wait(served, 2)
    assert frames[0].payload == b"m1" and pin_of(frames[0]) == pin
    assert frames[1].raw == wire.hmsg(served, NO_MESSAGES)
    empty = await wire.pull({"batch": 1, "group": "A", "id": pin, "no_wait": True})
    await wire.wait(empty)
    assert wire.raw(empty) == [wire.hmsg(empty, NO_MESSAGES)]
    assert (await env.group_state())["pinned_client_id"] == pin


async def test_partly_served_no_wait_pull_keeps_the_pin(env: PEnv) -> None:
    """A no_wait pull that gets the pin and one message, then ``404 No Messages``, leaves the pin in place."""
    wire = await env.start(messages=1)
    first = await wire.pull({"batch": 5, "group": "A", "no_wait": True})
    frames = await wire.wait(first, 2)
    pin = pin_of(frames[0])
    assert frames[0].payload == b"m0"
    assert frames[1].raw == wire.hmsg(first, NO_MESSAGES)
    assert (await env.group_state())["pinned_client_id"] == pin
    await env.publish("s.x", b"x")
    # nats-server counts a message into a consumer's pending a moment after the PubAck, when a
    # no_wait pull could still get 404: this pull waits for it
    served = await wire.pull({"batch": 1, "group": "A", "id": pin, "expires": 5000 * MS})
    (frame,) = await wire.wait(served)
    assert frame.payload == b"x" and pin_of(frame) == pin
    assert env.advisories_of("UNPINNED") == []


@pytest.mark.slow
async def test_pin_times_out_without_pulls(env: PEnv) -> None:
    """priority_timeout counts from the last pull carrying the pin; a waiting request does not count."""
    wire = await env.start(consumer={**PINNED, "priority_timeout": 1000 * MS}, messages=1)
    first = await wire.pull({"batch": 1, "group": "A"})
    pin = pin_of((await wire.wait(first))[0])
    keeper = await wire.pull({"batch": 5, "group": "A", "id": pin, "max_bytes": 1000, "expires": 10_000 * MS})
    other = await wire.pull({"batch": 2, "group": "A", "expires": 10_000 * MS})
    assert await env.waiting() == 2
    started = env.target.now()
    frame = await env.wait_advisory("UNPINNED")
    elapsed = env.target.now() - started
    assert 0.8 <= elapsed < 5.0, elapsed  # not held until the waiting requests expire (10 s)
    check_advisory(frame, "UNPINNED", sid=wire.sids[env.adv_unpinned], reason="timeout")
    assert await env.group_state() == {"group": "A", "pinned_ts": ZERO_TIME}
    assert await env.waiting() == 2
    await env.publish("s.x", b"x")
    (frame,) = await wire.wait(other)
    new = pin_of(frame)
    assert new != pin and frame.payload == b"x"
    await wire.wait(keeper)
    assert wire.raw(keeper) == [wire.hmsg(keeper, wrong_pin(5, 1000))]
    check_advisory(await env.wait_advisory("PINNED", 2), "PINNED", sid=wire.sids[env.adv_pinned], pinned_id=new)


@pytest.mark.slow
async def test_pulls_with_pin_id_keep_the_pin(env: PEnv) -> None:
    wire = await env.start(consumer={**PINNED, "priority_timeout": 1000 * MS}, messages=1)
    first = await wire.pull({"batch": 1, "group": "A"})
    pin = pin_of((await wire.wait(first))[0])
    for _ in range(6):  # 1.8s of keep-alive pulls, each well inside the timeout
        await env.elapse(0.3)
        inbox = await wire.pull({"batch": 1, "group": "A", "id": pin, "no_wait": True})
        await wire.wait(inbox)
        assert wire.raw(inbox) == [wire.hmsg(inbox, NO_MESSAGES)]
    last = env.target.now()
    assert env.advisories_of("UNPINNED") == []
    assert (await env.group_state())["pinned_client_id"] == pin
    await env.wait_advisory("UNPINNED")
    assert env.target.now() - last >= 0.8
    # A pull without an id is not a keep-alive either: it is what takes the next pin.
    inbox = await wire.pull({"batch": 1, "group": "A"})
    await env.publish("s.x", b"x")
    (frame,) = await wire.wait(inbox)
    assert pin_of(frame) != pin


async def test_update_changes_timeout_of_a_running_pin(env: PEnv) -> None:
    """The timer is re-armed with the current priority_timeout on the next pull carrying the pin."""
    wire = await env.start(messages=1)
    first = await wire.pull({"batch": 1, "group": "A"})
    pin = pin_of((await wire.wait(first))[0])
    await env.update(**PINNED, priority_timeout=300 * MS)
    await wire.quiet(0.5)
    assert env.advisories_of("UNPINNED") == []  # the running 2m timer is left alone
    keep = await wire.pull({"batch": 1, "group": "A", "id": pin, "no_wait": True})
    await wire.wait(keep)
    started = env.target.now()
    await env.wait_advisory("UNPINNED")
    assert 0.2 <= env.target.now() - started < 5.0  # the new 300 ms, not the old 2 minutes


# --------------------------------------------------------------------------- an ADR-37 style consume loop


class GroupConsumer:
    """A client's consume loop for a priority group, as ADR-37/ADR-42 describe it.

    One pull at a time on its own inbox: ``batch`` messages, ``expires``, the
    group (and overflow thresholds or a priority), plus the pin id once a
    delivery brought one.  A message with a ``Nats-Pin-Id`` it doesn't have yet
    means "pinned"; a 423 status means "unpinned": the id is forgotten and the
    next pull goes without it.  When the outstanding pull is used up (messages
    or an end status with Nats-Pending-Messages), the next one is sent.
    Messages are acked.  Drive it with :meth:`poll` from a ``Wire.until``
    condition (``wire.until(lambda: c.poll() or cond())``).
    """

    def __init__(
        self, wire: PullWire, group: str, *, batch: int = 10, expires: int = 5000 * MS, **options: Any
    ) -> None:
        self.wire = wire
        self.group = group
        self.batch = batch
        self.expires = expires
        self.options = options
        self.inbox = ""
        self.pin_id = ""
        self.owed = 0
        self.seen = 0
        self.stopped = False
        self.messages: list[Frame] = []
        self.events: list[tuple[str, str]] = []
        self.pulls: list[dict] = []

    async def start(self) -> GroupConsumer:
        self.inbox = await self.wire.inbox()
        self._pull()
        await self.wire.ping()
        return self

    def request(self) -> dict:
        body: dict[str, Any] = {"batch": self.batch, "expires": self.expires, "group": self.group, **self.options}
        if self.pin_id:
            body["id"] = self.pin_id
        return body

    def _pull(self) -> None:
        body = self.request()
        self.pulls.append(body)
        payload = json.dumps(body).encode()
        subject = b"$JS.API.CONSUMER.MSG.NEXT.S.C " + self.inbox.encode()
        self.wire.client.writer.write(b"PUB %s %d\r\n%s\r\n" % (subject, len(payload), payload))
        self.owed = self.batch

    def poll(self) -> bool:
        """Handle what arrived; returns False so it can lead an ``or`` chain."""
        frames = self.wire.on(self.inbox)
        for frame in frames[self.seen :]:
            self.seen += 1
            status = frame.status
            if status is None:
                pin = header_value(frame, "Nats-Pin-Id")
                if pin and pin != self.pin_id:
                    self.pin_id = pin
                    self.events.append(("pinned", pin))
                self.messages.append(frame)
                self.wire.client.writer.write(b"PUB %s 0\r\n\r\n" % frame.reply.encode())
                self.owed -= 1
            elif status.startswith("100"):
                continue
            else:
                if status.startswith("423"):
                    self.pin_id = ""
                    self.events.append(("unpinned", status))
                left = header_value(frame, "Nats-Pending-Messages")
                self.owed = 0 if left is None else self.owed - int(left)
            if self.owed <= 0 and not self.stopped:
                self._pull()
        return False

    def payloads(self) -> list[bytes]:
        return [f.payload for f in self.messages]


async def wait_num_waiting(env: PEnv, count: int, timeout: float = WAIT) -> None:
    """Poll CONSUMER.INFO (which also drops requests whose reply lost interest)."""
    info = await poll(env.info, lambda info: info["num_waiting"] == count, timeout=timeout, interval=0.01)
    assert info["num_waiting"] == count, f"num_waiting never became {count}"


async def run_until(
    wire: PullWire, consumers: list[GroupConsumer], condition: Callable[[], bool], what: str, timeout: float = WAIT
) -> None:
    def check() -> bool:
        for consumer in consumers:
            consumer.poll()
        return condition()

    await wire.until(check, what, timeout)


async def test_consume_loop_keeps_pin_and_follows_unpin(env: PEnv) -> None:
    wire = await env.start(messages=3)
    a = await GroupConsumer(wire, "A", batch=2).start()
    await run_until(wire, [a], lambda: len(a.messages) == 3, "A to get m0..m2")
    b = await GroupConsumer(wire, "A", batch=2).start()
    for i in range(3, 7):
        await env.publish("s.x", b"m%d" % i)
    await run_until(wire, [a, b], lambda: len(a.messages) == 7, "A to get m3..m6")
    pin = a.pin_id
    assert a.events == [("pinned", pin)] and b.events == [] and b.messages == []
    assert [p.get("id") for p in a.pulls] == [None, pin, pin, pin]  # re-pulls carry the pin
    assert {pin_of(f) for f in a.messages} == {pin}

    assert await env.unpin() == {"type": T + "consumer_unpin_response"}
    for i in range(7, 11):
        await env.publish("s.x", b"m%d" % i)
    await run_until(wire, [a, b], lambda: len(b.messages) == 4 and len(a.events) == 2, "B to take over")
    new = b.pin_id
    assert new != pin and b.events == [("pinned", new)]
    assert a.events[1] == ("unpinned", "423 Nats-Wrong-Pin-Id")
    assert b.payloads() == [b"m7", b"m8", b"m9", b"m10"] and len(a.messages) == 7
    assert a.pulls[-1].get("id") is None  # A pulls on without an id, and waits
    assert (await env.group_state())["pinned_client_id"] == new


@pytest.mark.slow
async def test_consume_loop_fails_over_when_pinned_client_vanishes(env: PEnv) -> None:
    await env.start(consumer={**PINNED, "priority_timeout": 1000 * MS}, messages=2)
    wire_a = await env.open_wire()
    wire_b = await env.open_wire()
    a = await GroupConsumer(wire_a, "A").start()
    await run_until(wire_a, [a], lambda: len(a.messages) == 2, "A to get m0, m1")
    pinned_at = env.target.now()
    b = await GroupConsumer(wire_b, "A").start()
    await wait_num_waiting(env, 2)
    await wire_a.close()  # A crashes: its waiting pull loses interest, the pin stays
    await wait_num_waiting(env, 1)  # the server has seen A go
    await env.publish("s.x", b"late")
    await run_until(wire_b, [b], lambda: len(b.messages) == 1, "B to get the held message")
    assert env.target.now() - pinned_at >= 0.8  # held until the pin timed out
    assert b.payloads() == [b"late"] and b.events == [("pinned", b.pin_id)] and b.pin_id != a.pin_id
    check_advisory(
        await env.wait_advisory("UNPINNED"), "UNPINNED", sid=env.wires[0].sids[env.adv_unpinned], reason="timeout"
    )
    assert len(env.advisories_of("UNPINNED")) == 1


# =========================================================================== prioritized


async def test_lower_priority_number_served_first(env: PEnv) -> None:
    wire = await env.start(consumer=PRIORITIZED)
    inboxes = {p: await wire.pull({"batch": 1, "group": "A", "priority": p}) for p in (5, 1, 3)}
    assert await env.waiting() == 3
    for i in range(3):
        await env.publish("s.x", b"%d" % i)
    got = {p: [f.payload for f in await wire.wait(inbox)] for p, inbox in inboxes.items()}
    assert got == {1: [b"0"], 3: [b"1"], 5: [b"2"]}


async def test_equal_priorities_take_turns_in_arrival_order(env: PEnv) -> None:
    wire = await env.start(consumer=PRIORITIZED)
    a = await wire.pull({"batch": 2, "group": "A", "priority": 2})
    b = await wire.pull({"batch": 2, "group": "A", "priority": 2})
    c = await wire.pull({"batch": 1, "group": "A", "priority": 2})
    d = await wire.pull({"batch": 1, "group": "A", "priority": 3})
    assert await env.waiting() == 4
    for i in range(6):
        await env.publish("s.x", b"%d" % i)
    await wire.until(lambda: sum(1 for f in wire.frames if f.subject == "s.x") == 6, "6 deliveries")
    names = {wire.sids[x]: n for n, x in (("a", a), ("b", b), ("c", c), ("d", d))}
    assert [names[f.sid] for f in wire.frames if f.subject == "s.x"] == ["a", "b", "c", "a", "b", "d"]


async def test_higher_priority_request_is_drained_first(env: PEnv) -> None:
    wire = await env.start(consumer=PRIORITIZED)
    low = await wire.pull({"batch": 1, "group": "A", "priority": 1})
    high = await wire.pull({"batch": 3, "group": "A", "priority": 0})
    assert await env.waiting() == 2
    for i in range(4):
        await env.publish("s.x", b"%d" % i)
    assert [f.payload for f in await wire.wait(high, 3)] == [b"0", b"1", b"2"]
    assert [f.payload for f in await wire.wait(low)] == [b"3"]


async def test_priority_edges_and_defaults(env: PEnv) -> None:
    """0 and 9 are the edges; no ``priority`` is 0; a non-JSON request comes after 9."""
    wire = await env.start(consumer=PRIORITIZED)
    bodies: list[tuple[str, Any]] = [
        ("bare", b"1"),
        ("nine", {"batch": 1, "group": "A", "priority": 9}),
        ("five", {"batch": 1, "group": "A", "priority": 5}),
        ("default", {"batch": 1, "group": "A"}),
        ("zero", {"batch": 1, "group": "A", "priority": 0}),
    ]
    inboxes = {name: await wire.pull(body) for name, body in bodies}
    assert await env.waiting() == 5
    for i in range(5):
        await env.publish("s.x", b"%d" % i)
    await wire.until(lambda: sum(1 for f in wire.frames if f.subject == "s.x") == 5, "5 deliveries")
    names = {wire.sids[inbox]: name for name, inbox in inboxes.items()}
    assert [names[f.sid] for f in wire.frames if f.subject == "s.x"] == ["default", "zero", "five", "nine", "bare"]


async def test_late_request_with_better_priority_goes_first(env: PEnv) -> None:
    wire = await env.start(consumer=PRIORITIZED)
    early = await wire.pull({"batch": 2, "group": "A", "priority": 4})
    await env.publish("s.x", b"0")
    assert [f.payload for f in await wire.wait(early)] == [b"0"]
    late = await wire.pull({"batch": 1, "group": "A", "priority": 3})
    assert await env.waiting() == 2
    await env.publish("s.x", b"1")
    await env.publish("s.x", b"2")
    assert [f.payload for f in await wire.wait(late)] == [b"1"]
    assert [f.payload for f in await wire.wait(early, 2)] == [b"0", b"2"]


def served_order(wire: PullWire, inboxes: dict[str, str]) -> list[str]:
    names = {wire.sids[inbox]: name for name, inbox in inboxes.items()}
    return [names[f.sid] for f in wire.frames if f.subject == "s.x"]


# Pulls sent in one write, as a client with several fetches in flight does.
ONE_WRITE = [
    ("three", {"batch": 1, "group": "A", "priority": 3}),
    ("one-a", {"batch": 2, "group": "A", "priority": 1}),
    ("nine", {"batch": 1, "group": "A", "priority": 9}),
    ("zero", {"batch": 1, "group": "A", "priority": 0}),
    ("one-b", {"batch": 2, "group": "A", "priority": 1}),
]
BY_PRIORITY = ["zero", "one-a", "one-b", "one-a", "one-b", "three", "nine"]


async def test_pulls_read_together_are_served_by_priority_round_after_round(env: PEnv) -> None:
    wire = await env.start(consumer=PRIORITIZED)
    inboxes = dict(zip([name for name, _ in ONE_WRITE], await wire.pulls_together([b for _, b in ONE_WRITE])))
    assert await env.waiting() == len(ONE_WRITE)
    for i in range(len(BY_PRIORITY)):
        await env.publish("s.x", b"%d" % i)
    await wire.until(lambda: len(served_order(wire, inboxes)) == len(BY_PRIORITY), "every delivery")
    assert served_order(wire, inboxes) == BY_PRIORITY
    assert await env.waiting() == 0


async def test_pulls_read_together_share_pending_messages(env: PEnv, target: Target) -> None:
    """Messages already pending: fakejs queues every pull of the read before it delivers.

    nats-server hands a read's pulls to the consumer as one batch, so it too
    serves by priority -- usually: its delivery goroutine may start after the
    first pull, so there only the shares are checked.
    """
    wire = await env.start(consumer=PRIORITIZED, messages=0)
    for i in range(len(BY_PRIORITY)):
        await env.publish("s.x", b"%d" % i)
    inboxes = dict(zip([name for name, _ in ONE_WRITE], await wire.pulls_together([b for _, b in ONE_WRITE])))
    await wire.until(lambda: len(served_order(wire, inboxes)) == len(BY_PRIORITY), "every delivery")
    served = served_order(wire, inboxes)
    assert sorted(served) == sorted(BY_PRIORITY)
    if target.is_fake:
        assert served == BY_PRIORITY


# =========================================================================== the JavaScript client

JS_DIR = Path(__file__).resolve().parent.parent / "js"


@pytest.fixture(scope="module")
def js_client() -> Path:
    """node plus tests/js/node_modules (installed from package-lock.json on first use)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node/npm not found")
    if not (JS_DIR / "node_modules" / "@nats-io" / "jetstream").is_dir():
        result = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=JS_DIR,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
            env={**os.environ, "CI": "true"},
        )
        if result.returncode != 0:
            pytest.skip(f"npm ci failed in {JS_DIR}: {result.stderr.strip()[-500:]}")
    return Path(node)


async def run_node(node: Path, script: str, *args: str, timeout: float = 60) -> dict:
    """Run a tests/js script without blocking the event loop (fakejs serves from this loop)."""
    proc = await asyncio.create_subprocess_exec(
        str(node),
        str(JS_DIR / script),
        *args,
        cwd=JS_DIR,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise AssertionError(f"{script} did not finish in {timeout}s") from None
    assert proc.returncode == 0, (out.decode(), err.decode())
    return json.loads(out.decode().strip().splitlines()[-1])


@pytest.mark.manual_clock(False)  # the JavaScript client times the server on the real clock
async def test_nats_js_consume_pinned_failover(target: Target, js_client: Path) -> None:
    """@nats-io/jetstream 3.4.0 consume() with a group: pinned, held off, unpinned, taken over."""
    doc = await run_node(js_client, "pinned_failover.mjs", target.url)
    a, b = doc["a"], doc["b"]
    (first,) = {m["pin"] for m in a["msgs"]}
    (second,) = {m["pin"] for m in b["msgs"]}
    assert NUID.fullmatch(first) and NUID.fullmatch(second) and first != second
    assert [(m["data"], m["seq"]) for m in a["msgs"]] == [(f"m{i}", i) for i in range(1, 7)]
    assert [(m["data"], m["seq"]) for m in b["msgs"]] == [(f"m{i}", i) for i in range(7, 13)]
    assert a["events"] == [{"type": "consumer_pinned", "id": first}, {"type": "consumer_unpinned"}]
    assert b["events"] == [{"type": "consumer_pinned", "id": second}]
    (state,) = doc["priority_groups"]
    assert list(state) == ["group", "pinned_client_id", "pinned_ts"]
    assert (state["group"], state["pinned_client_id"]) == ("A", second)
