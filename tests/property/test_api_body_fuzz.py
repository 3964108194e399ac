"""Differential fuzzing of JetStream API request bodies: fakejs reads them as nats-server does.

Hypothesis writes request bodies -- objects with the endpoint's own keys, the
same keys case-folded (``SEQ``, ``ſeq``, Kelvin ``K``) and duplicated, unknown
keys, values of the wrong type, huge and odd numbers, unicode and escapes,
NUL and invalid UTF-8 bytes, nesting up to past Go's 10,000 levels, cut
short or followed by garbage -- and sends each to one endpoint of both
servers: ``STREAM.CREATE``, ``CONSUMER.CREATE``, ``STREAM.MSG.GET``,
``STREAM.INFO``, ``DIRECT.GET`` and a no-wait pull (``CONSUMER.MSG.NEXT``).
The replies must be equal once timestamps are normalised, and fakejs must
record no internal error nor log a traceback.

Knob: ``FAKEJS_FUZZ_EXAMPLES`` (default 150, a few seconds) sets how many
bodies are tried; a long run is e.g. ``FAKEJS_FUZZ_EXAMPLES=5000``.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.harness.targets import Settings, Target
from tests.harness.tracebacks import no_tracebacks
from tests.harness.wire import Wire

pytestmark = pytest.mark.slow

STREAM = {"name": "S", "subjects": ["s.>"], "allow_direct": True, "storage": "memory"}
CONSUMER = {"stream_name": "S", "config": {"durable_name": "C", "ack_policy": "none"}}

# endpoint -> (subject, member names worth drawing, subject to delete afterwards)
ENDPOINTS: dict[str, tuple[str, list[str], str]] = {
    "create": (
        "$JS.API.STREAM.CREATE.T",
        [
            "name",
            "subjects",
            "retention",
            "max_msgs",
            "max_age",
            "storage",
            "num_replicas",
            "discard",
            "metadata",
            "placement",
            "sources",
            "allow_direct",
            "duplicate_window",
            "description",
        ],
        "$JS.API.STREAM.DELETE.T",
    ),
    "consumer": (
        "$JS.API.CONSUMER.CREATE.S.F",
        [
            "stream_name",
            "config",
            "action",
            "pedantic",
            "durable_name",
            "ack_policy",
            "deliver_policy",
            "backoff",
            "filter_subject",
            "max_deliver",
            "metadata",
            "name",
        ],
        "$JS.API.CONSUMER.DELETE.S.F",
    ),
    "get": ("$JS.API.STREAM.MSG.GET.S", ["seq", "last_by_subj", "next_by_subj", "start_time", "batch"], ""),
    "info": ("$JS.API.STREAM.INFO.S", ["subjects_filter", "deleted_details", "offset"], ""),
    "direct": ("$JS.API.DIRECT.GET.S", ["seq", "last_by_subj", "next_by_subj", "batch", "max_bytes", "multi_last"], ""),
    "next": ("$JS.API.CONSUMER.MSG.NEXT.S.C", ["batch", "max_bytes", "no_wait", "group", "min_pending", "id"], ""),
}
FIXED_VALUES = ["T", "F", "S", "C", "s.a", "t.>", "memory", "limits", "explicit", "all", "a", "", "x\u00e9"]


def _fold_variants(name: str) -> st.SearchStrategy[str]:
    return st.sampled_from([name, name.upper(), name.title(), name.replace("s", "\u017f"), name.replace("k", "\u212a")])


@st.composite
def scalars(draw: st.DrawFn) -> bytes:
    choice = draw(st.integers(0, 9))
    if choice == 0:
        return draw(st.sampled_from([b"1e400", b"-0", b"1.5", b"1e3", b"-1", b"18446744073709551616", b"0", b"2"]))
    if choice == 1:
        return str(draw(st.integers(-(2**70), 2**70))).encode()
    if choice == 2:
        return draw(st.sampled_from([b"true", b"false", b"null"]))
    if choice == 3:
        return json.dumps(draw(st.text(max_size=6))).encode()
    if choice == 4:
        return draw(st.sampled_from([b'"\\u0000"', b'"\\ud800"', b'"\xff"', b'"\\u00e9"', b'"a\\/b"', b'"\\"']))
    return json.dumps(draw(st.sampled_from(FIXED_VALUES))).encode()


@st.composite
def values(draw: st.DrawFn, names: list[str], depth: int = 0) -> bytes:
    choice = draw(st.integers(0, 9 if depth < 3 else 4))
    if choice <= 4:
        return draw(scalars())
    if choice <= 7:
        return draw(objects(names, depth + 1))
    items = draw(st.lists(values(names, depth + 1), max_size=3))
    return b"[" + b",".join(items) + b"]"


@st.composite
def objects(draw: st.DrawFn, names: list[str], depth: int = 0) -> bytes:
    members = []
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.integers(0, 5)) == 0:
            key = json.dumps(draw(st.text(max_size=4))).encode()
        else:
            key = json.dumps(draw(st.sampled_from(names).flatmap(_fold_variants)), ensure_ascii=False).encode()
        members.append(key + b":" + draw(values(names, depth)))
    return b"{" + b",".join(members) + b"}"


@st.composite
def deep(draw: st.DrawFn) -> bytes:
    levels = draw(st.sampled_from([50, 300, 9_999, 10_000, 10_001]))
    if draw(st.booleans()):
        return b"[" * levels + b"]" * levels
    return b'{"a":' * levels + b"1" + b"}" * levels


@st.composite
def bodies(draw: st.DrawFn, names: list[str]) -> bytes:
    body = draw(objects(names)) if draw(st.integers(0, 6)) else draw(deep())
    mutation = draw(st.integers(0, 7))
    if mutation == 0 and body:
        body = body[: draw(st.integers(0, len(body) - 1))]
    elif mutation == 1:
        at = draw(st.integers(0, len(body)))
        body = (
            body[:at]
            + draw(st.sampled_from([b"\x00", b"\xff", b"\xc3\xa9", b"\\", b"x", b" ", b"}", b'"']))
            + body[at:]
        )
    elif mutation == 2:
        body += draw(st.sampled_from([b" {}", b"x", b" []", b"\xe2\x82\xac", b' {"zzz":1}', b" tru"]))
    return body


@st.composite
def requests(draw: st.DrawFn) -> tuple[str, bytes]:
    endpoint = draw(st.sampled_from(sorted(ENDPOINTS)))
    body = draw(bodies(ENDPOINTS[endpoint][1]))
    if endpoint == "next":
        # A pull must not wait: force no_wait as the last member of an object body (the last one wins).
        body = b'{"no_wait":true}' if not body.startswith(b"{") else body
        if body.endswith(b"}") and body.count(b"{") == 1:
            body = body[:-1] + (b"," if body != b"{}" else b"") + b'"no_wait":true}'
    return endpoint, body


_VOLATILE = re.compile(rb'"(created|ts|time|first_ts|last_ts|leader|server_time)":"[^"]*"|Nats-Time-Stamp: [^\r]*')


def normalised(frames: list[bytes]) -> list[bytes]:
    return [_VOLATILE.sub(b"~", frame) for frame in frames]


class Side:
    """One server with a raw connection whose replies arrive on ``_R.<n>``."""

    def __init__(self, target: Target, wire: Wire) -> None:
        self.target = target
        self.wire = wire
        self.count = 0

    async def ask(self, subject: str, body: bytes) -> list[bytes]:
        self.count += 1
        reply = f"_R.{self.count}"
        await self.wire.send(b"PUB %s %s %d\r\n%s\r\n" % (subject.encode(), reply.encode(), len(body), body))
        frames = lambda: [f for f in self.wire.frames if f.subject == reply]  # noqa: E731
        loop_deadline = 40
        while not frames() and loop_deadline:
            await self.wire.pump(0.05)
            loop_deadline -= 1
        while await self.wire.pump(0.03):
            pass
        return [(f.header or b"") + b"|" + f.payload for f in frames()]


_cache: dict[int, tuple[Side, Side]] = {}


async def _sides(both: Any) -> tuple[Side, Side]:
    key = id(both)
    if key not in _cache:
        _cache.clear()
        fake, real = await both(Settings())
        sides = []
        for target in (fake, real):
            wire = await Wire.open(target)
            await wire.send(b"SUB _R.> 1\r\n")
            side = Side(target, wire)
            for subject, body in (
                ("$JS.API.STREAM.CREATE.S", STREAM),
                ("$JS.API.CONSUMER.CREATE.S.C", CONSUMER),
                ("s.a", b"hello"),
            ):
                payload = body if isinstance(body, bytes) else json.dumps(body).encode()
                assert await side.ask(subject, payload)
            sides.append(side)
        _cache[key] = (sides[0], sides[1])
    return _cache[key]


@settings(
    max_examples=int(os.environ.get("FAKEJS_FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(request=requests())
# a rune that Go's read buffer cuts after its first byte, 256 bytes in
@example(request=("consumer", b'{"a":' * 50 + b"1}}}}\xc3\xa9" + b"}" * 46))
async def test_api_bodies_are_read_alike(both, request: tuple[str, bytes]) -> None:
    fake, real = await _sides(both)
    endpoint, body = request
    subject, _, cleanup = ENDPOINTS[endpoint]
    with no_tracebacks():
        got_fake = normalised(await fake.ask(subject, body))
    got_real = normalised(await real.ask(subject, body))
    if cleanup:
        await fake.ask(cleanup, b"")
        await real.ask(cleanup, b"")
    server = getattr(fake.target, "server", None)
    errors = server.take_errors() if server is not None else []
    assert not errors, (endpoint, body, errors)
    assert got_fake == got_real, (endpoint, body[:300])
