"""Differential fuzzing of the core protocol: fakejs and nats-server answer alike.

Hypothesis writes scripts from a grammar of client operations (valid and
broken: wrong sizes, bad subjects, odd CONNECT options, garbage); each
script is played against both servers and the answers must match byte for
byte once INFO documents are reduced to their stable fields.  nats-server
hands a message to several matching subscriptions of one connection in map
order, so runs of consecutive MSG frames are compared as multisets.
CONNECT documents include hostile JSON (deep nesting past Go's limit,
repeated and case-folded keys, wrong types, huge numbers, bad escapes, NUL).
Each example also fails if fakejs recorded an error or logged a traceback.

``FAKEJS_FUZZ_EXAMPLES`` sets the number of scripts (60 by default, what CI
runs); a long run is ``FAKEJS_FUZZ_EXAMPLES=5000 pytest tests/property``.
"""

from __future__ import annotations

import json
import os
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.harness.raw import record
from tests.harness.targets import Settings
from tests.harness.tracebacks import no_tracebacks
from tests.harness.wait import WAIT

SUBJECTS = ["a", "a.b", "a.*", "a.>", "b", ">", "*", "a..b", "r.1", "_INBOX.x", "a.b.c", "$NRG.x", "_GR_.x"]
PUBLISH_SUBJECTS = ["a", "a.b", "a.b.c", "b", "r.1", "a.*", "_INBOX.x", "c"]


@st.composite
def connect_op(draw: st.DrawFn) -> bytes:
    options: dict = {}
    for key in ("verbose", "pedantic", "headers", "echo", "no_responders"):
        if draw(st.booleans()):
            options[key] = draw(st.booleans())
    if draw(st.booleans()):
        options["protocol"] = draw(st.sampled_from([0, 1, 1, 2]))
    if draw(st.integers(0, 20)) == 0:
        options["verbose"] = "yes"
    return b"CONNECT " + json.dumps(options).encode() + b"\r\n"


HOSTILE_CONNECT_DOCS = [
    b'{"a":' * 600 + b"1" + b"}" * 600,
    b"[" * 10_001 + b"]" * 10_001,
    b'{"verbose":true,"verbose":false}',
    b'{"verbose":false,"VERBOSE":true}',
    b'{"Verbose":true,"pedantic":true,"PEDANTIC":false}',
    b'{"verbose":"x","pedantic":1}',
    b'{"protocol":"1"}',
    b'{"protocol":1e400}',
    b'{"protocol":1.5}',
    b'{"echo":null,"headers":true,"no_responders":true}',
    rb'{"name":"\u0000\ud800"}',
    rb'{"name":"\p"}',
    b'{"name":"a\x00b"}',
    b'{"name":"\xc3\xa9"}',
    b'{"verbose":true}x',
    b'{"verbose":tru}',
    b"{\xc3\xa9}",
    b"",
]


@st.composite
def hostile_connect_op(draw: st.DrawFn) -> bytes:
    return b"CONNECT " + draw(st.sampled_from(HOSTILE_CONNECT_DOCS)) + b"\r\n"


@st.composite
def sub_op(draw: st.DrawFn) -> bytes:
    subject = draw(st.sampled_from(SUBJECTS)).encode()
    sid = str(draw(st.integers(1, 6))).encode()
    if draw(st.integers(0, 4)) == 0:
        # one member per queue group keeps delivery deterministic
        return b"SUB " + subject + b" q" + sid + b" " + sid + b"\r\n"
    return b"SUB " + subject + b" " + sid + b"\r\n"


@st.composite
def unsub_op(draw: st.DrawFn) -> bytes:
    sid = str(draw(st.integers(1, 6))).encode()
    if draw(st.booleans()):
        return b"UNSUB " + sid + b" " + draw(st.sampled_from([b"0", b"1", b"2", b"x"])) + b"\r\n"
    return b"UNSUB " + sid + b"\r\n"


@st.composite
def pub_op(draw: st.DrawFn) -> bytes:
    subject = draw(st.sampled_from(PUBLISH_SUBJECTS)).encode()
    payload = draw(st.sampled_from([b"", b"x", b"hello", b"a\r\nb"]))
    reply = draw(st.sampled_from([b"", b"", b"r.1", b"_INBOX.x"]))
    size = len(payload)
    if draw(st.integers(0, 15)) == 0:
        size += draw(st.sampled_from([-1, 1]))
        size = max(size, 0)
    args = subject + (b" " + reply if reply else b"")
    return b"PUB " + args + b" " + str(size).encode() + b"\r\n" + payload + b"\r\n"


@st.composite
def hpub_op(draw: st.DrawFn) -> bytes:
    subject = draw(st.sampled_from(PUBLISH_SUBJECTS)).encode()
    headers = draw(st.sampled_from([b"NATS/1.0\r\n\r\n", b"NATS/1.0\r\nA: b\r\n\r\n"]))
    payload = draw(st.sampled_from([b"", b"hi"]))
    reply = draw(st.sampled_from([b"", b"r.1"]))
    args = subject + (b" " + reply if reply else b"")
    sizes = b"%d %d" % (len(headers), len(headers) + len(payload))
    return b"HPUB " + args + b" " + sizes + b"\r\n" + headers + payload + b"\r\n"


ops = st.one_of(
    connect_op(),
    hostile_connect_op(),
    hostile_connect_op(),
    sub_op(),
    sub_op(),
    unsub_op(),
    pub_op(),
    pub_op(),
    pub_op(),
    hpub_op(),
    st.sampled_from([b"PING\r\n", b"PONG\r\n", b"+OK\r\n", b"ping\r\n"]),
    st.binary(min_size=1, max_size=6).filter(lambda b: not b.upper().startswith(b"P")),
)

scripts = st.lists(ops, min_size=1, max_size=10)

_FRAME = re.compile(rb"(H?MSG) [^\r\n]*?(\d+)\r\n")


def frames(data: bytes) -> list[bytes]:
    """Split a server byte stream into frames (control lines with their payloads)."""
    out = []
    pos = 0
    while pos < len(data):
        end = data.find(b"\r\n", pos)
        if end < 0:
            out.append(data[pos:])
            break
        line = data[pos : end + 2]
        if line.startswith((b"MSG ", b"HMSG ")):
            size = int(line.split()[-1])
            line = data[pos : end + 2 + size + 2]
            end = end + size + 2
        out.append(line)
        pos = end + 2
    return out


def comparable(data: bytes) -> list:
    """Frames, with each run of MSG/HMSG frames as a sorted list."""
    result: list = []
    run: list[bytes] = []
    for frame in frames(data):
        if frame.startswith((b"MSG ", b"HMSG ")):
            run.append(frame)
            continue
        if run:
            result.append(sorted(run))
            run = []
        result.append(frame)
    if run:
        result.append(sorted(run))
    return result


@pytest.mark.slow
@settings(
    max_examples=int(os.environ.get("FAKEJS_FUZZ_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(script=scripts)
async def test_fake_and_real_answer_alike(both, script: list[bytes]) -> None:
    fake, real = await _servers(both)
    with no_tracebacks():
        got_fake = await record(fake.host, fake.port, script, timeout=WAIT)
    assert fake.server.take_errors() == [], script
    got_real = await record(real.host, real.port, script, timeout=WAIT)
    fake_data, fake_closed = got_fake.normalized()
    real_data, real_closed = got_real.normalized()
    assert comparable(fake_data) == comparable(real_data), script
    assert fake_closed == real_closed, script


_cache: dict[int, tuple] = {}


async def _servers(both):
    """One pair of servers per test run, shared by all examples."""
    key = id(both)
    if key not in _cache:
        _cache.clear()
        _cache[key] = await both(Settings(jetstream=False))
    return _cache[key]
