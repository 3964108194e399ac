"""A seeded server on a manual clock answers the same client bytes with the same bytes, run after run.

The script below speaks the raw protocol: CONNECT, PING, subscriptions
(one on JetStream advisories), a stream created and published to, an
ephemeral consumer (whose name the server generates), a fetch, an ack and
info requests.  Two fresh servers with the same seed and start time must
answer byte for byte the same, apart from the listening port; so must two
fresh processes with different string hashing.  A different seed gives a
different server id.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys

from fakejs import ManualClock, Server
from tests.harness.raw import RawClient

START_NS = 1_767_225_600_000_000_000  # 2026-01-01T00:00:00Z
SEED = 20260101
INBOX = "_INBOX.det"

CONNECT = {"verbose": False, "pedantic": False, "headers": True, "no_responders": True, "protocol": 1, "name": "det"}
STREAM = {"name": "S", "subjects": ["s.>"], "storage": "memory"}


def _pub(subject: str, reply: str, payload: bytes) -> bytes:
    return f"PUB {subject} {reply} {len(payload)}\r\n".encode() + payload + b"\r\n"


def _hpub(subject: str, reply: str, headers: bytes, payload: bytes) -> bytes:
    size = len(headers) + len(payload)
    return f"HPUB {subject} {reply} {len(headers)} {size}\r\n".encode() + headers + payload + b"\r\n"


class _Session:
    """A raw client that sends one step at a time and waits for the PONG that closes it."""

    def __init__(self, client: RawClient) -> None:
        self.client = client
        self.pongs = 0

    async def step(self, data: bytes) -> bytes:
        start = len(self.client.received)
        await self.client.send(data + b"PING\r\n")
        self.pongs += 1
        while self.client.received.count(b"PONG\r\n") < self.pongs:
            chunk = await asyncio.wait_for(self.client.reader.read(65536), 5)
            assert chunk, "the server hung up"
            self.client.received += chunk
        return bytes(self.client.received[start:])


async def transcript(seed: int) -> bytes:
    """Everything the server sent to the script, with the listening port replaced by ``PORT``."""
    clock = ManualClock(start_ns=START_NS)
    async with Server(seed=seed, clock=clock) as server:
        client = await RawClient.connect(server.host, server.port)
        session = _Session(client)
        await client.read_until(b"\r\n")
        await _play(session, clock)
        await client.close()
        data = bytes(client.received)
        return data.replace(f'"port":{server.port}'.encode(), b'"port":PORT')


async def _play(session: _Session, clock: ManualClock) -> None:
    step = session.step
    await step(b"CONNECT " + json.dumps(CONNECT).encode() + b"\r\n")
    await step(b"SUB $JS.EVENT.ADVISORY.> 1\r\nSUB " + INBOX.encode() + b".* 2\r\n")
    await step(_pub("$JS.API.STREAM.CREATE.S", f"{INBOX}.1", json.dumps(STREAM).encode()))
    await step(_pub("s.a", f"{INBOX}.2", b"hello"))
    await step(_hpub("s.b", f"{INBOX}.3", b"NATS/1.0\r\nNats-Msg-Id: m1\r\n\r\n", b"world"))
    created = await step(
        _pub("$JS.API.CONSUMER.CREATE.S", f"{INBOX}.4", b'{"stream_name":"S","config":{"ack_policy":"explicit"}}')
    )
    name = re.search(rb'"name":"([A-Za-z0-9]+)"', created.split(f"{INBOX}.4".encode(), 1)[1])
    assert name is not None, created
    consumer = name.group(1).decode()
    fetched = await step(_pub(f"$JS.API.CONSUMER.MSG.NEXT.S.{consumer}", f"{INBOX}.5", b'{"batch":2}'))
    acks = re.findall(rb"(\$JS\.ACK\.[^ ]+) ", fetched)
    assert len(acks) == 2, fetched
    await step(_pub(acks[0].decode(), f"{INBOX}.6", b""))
    clock.advance(2.5)  # the first PING: 2 s after CONNECT plus up to 20% jitter
    await step(b"PONG\r\n")
    clock.advance(31)  # the unacked message's ack wait, and the consumer's inactivity threshold
    await step(_pub(f"$JS.API.CONSUMER.MSG.NEXT.S.{consumer}", f"{INBOX}.10", b'{"batch":1,"no_wait":true}'))
    await step(_pub(f"$JS.API.CONSUMER.INFO.S.{consumer}", f"{INBOX}.7", b""))
    await step(_pub("$JS.API.STREAM.INFO.S", f"{INBOX}.8", b""))
    await step(_pub("$JS.API.INFO", f"{INBOX}.9", b""))


async def test_same_seed_same_bytes() -> None:
    first = await transcript(SEED)
    second = await transcript(SEED)
    assert b"$JS.ACK.S." in first and b"io.nats.jetstream.advisory.v1.consumer_action" in first
    assert first == second


async def test_different_seed_different_server_id() -> None:
    ids = []
    for seed in (1, 2):
        async with Server(seed=seed, clock=ManualClock(start_ns=START_NS)) as server:
            ids.append(server.broker.server_id)
    assert ids[0] != ids[1]


def test_same_bytes_in_processes_with_different_string_hashing() -> None:
    """Nothing in a reply depends on set or dict order of strings, which varies between processes."""
    code = (
        "import asyncio, sys; from tests.unit.test_determinism import transcript, SEED; "
        "sys.stdout.buffer.write(asyncio.run(transcript(SEED)))"
    )
    outputs = []
    for hash_seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env, timeout=60, check=True)
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
    assert outputs[0] == asyncio.run(transcript(SEED))
