"""An account's JetStream limits (``accounts { A { jetstream { ... } } }``), on both targets from one configuration.

Each test logs in as a user of a limited account and meets one limit:
what ``$JS.API.INFO`` reports, the stream count, the per-stream consumer
cap, byte reservations and the per-stream byte caps of each storage type,
``max_bytes_required``, the account's ``max_ack_pending`` as the consumer
default and ceiling, and publishes refused once the account's memory is
used up.  The replies are compared as JSON, error codes and texts included.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import nats
import pytest

from tests.harness.configured import configured_servers
from tests.harness.wait import WAIT

ACCOUNTS = """
accounts {
  A {
    users: [{user: a, password: a}]
    jetstream: {
      max_mem: 4096, max_file: 65536, max_streams: 3, max_consumers: 2, max_ack_pending: 50,
      mem_max_stream_bytes: 2048, disk_max_stream_bytes: 8192
    }
  }
  R { users: [{user: r, password: r}], jetstream: { max_bytes_required: true } }
  M { users: [{user: m, password: m}], jetstream: { max_mem: 1024 } }
}
"""

Request = Callable[..., Awaitable[dict[str, Any]]]


@pytest.fixture
async def login(target_kind: str, tmp_path) -> AsyncIterator[Callable[[str], Awaitable[Request]]]:
    """Start this test's kind of server from :data:`ACCOUNTS`; ``login(user)`` gives a JSON request function."""
    async with configured_servers(target_kind, tmp_path) as start:
        target = await start(ACCOUNTS)
        clients: list[nats.aio.client.Client] = []

        async def connect(user: str) -> Request:
            nc = await nats.connect(target.url, user=user, password=user)
            clients.append(nc)

            async def request(subject: str, body: Any = None) -> dict[str, Any]:
                payload = b"" if body is None else json.dumps(body).encode() if not isinstance(body, bytes) else body
                reply = await nc.request(subject, payload, timeout=WAIT)
                doc: dict[str, Any] = json.loads(reply.data)
                return doc

            return request

        yield connect
        for nc in clients:
            await nc.close()


def stream(name: str, **config: Any) -> tuple[str, dict[str, Any]]:
    return f"$JS.API.STREAM.CREATE.{name}", {"name": name, "subjects": [f"{name.lower()}.>"], **config}


def error(doc: dict[str, Any]) -> tuple[int, str] | None:
    return (doc["error"]["err_code"], doc["error"]["description"]) if "error" in doc else None


async def test_account_info_reports_the_limits(login) -> None:
    request = await login("a")
    info = await request("$JS.API.INFO")
    assert info["limits"] == {
        "max_memory": 4096,
        "max_storage": 65536,
        "max_streams": 3,
        "max_consumers": 2,
        "max_ack_pending": 50,
        "memory_max_stream_bytes": 2048,
        "storage_max_stream_bytes": 8192,
        "max_bytes_required": False,
    }
    assert "tiers" not in info


async def test_the_stream_count(login) -> None:
    request = await login("a")
    for name in ("S1", "S2", "S3"):
        assert error(await request(*stream(name, storage="file"))) is None
    assert error(await request(*stream("S4", storage="file"))) == (10027, "maximum number of streams reached")
    assert error(await request(*stream("S1", storage="file"))) is None  # the same stream again is no new stream


async def test_stream_max_consumers_over_the_account_s(login) -> None:
    request = await login("a")
    refused = await request(*stream("S", storage="file", max_consumers=3))
    assert error(refused) == (10026, "maximum consumers limit reached")


async def test_byte_caps_and_reservations(login) -> None:
    request = await login("a")
    too_big = await request(*stream("BIG", storage="memory", max_bytes=4096))
    assert error(too_big) == (10122, "stream max bytes exceeds account limit max stream bytes")
    assert error(await request(*stream("M1", storage="memory", max_bytes=2048))) is None
    assert error(await request(*stream("M2", storage="memory", max_bytes=2048))) is None
    full = await request(*stream("M3", storage="memory"))  # even an unbounded stream reserves a byte
    assert error(full) == (10028, "insufficient memory resources available")
    file_cap = await request(*stream("F", storage="file", max_bytes=8193))
    assert error(file_cap) == (10122, "stream max bytes exceeds account limit max stream bytes")
    grown = await request("$JS.API.STREAM.UPDATE.M2", {**stream("M2")[1], "storage": "memory", "max_bytes": 4000})
    assert error(grown) == (10122, "stream max bytes exceeds account limit max stream bytes")


async def test_max_bytes_required(login) -> None:
    request = await login("r")
    assert error(await request(*stream("S", storage="file"))) == (
        10113,
        "account requires a stream config to have max bytes set",
    )
    assert error(await request(*stream("S", storage="file", max_bytes=1000))) is None


async def test_consumers_per_stream_and_max_ack_pending(login) -> None:
    request = await login("a")
    await request(*stream("S", storage="file"))
    made = await request(
        "$JS.API.CONSUMER.CREATE.S.C1", {"stream_name": "S", "config": {"name": "C1", "ack_policy": "explicit"}}
    )
    assert made["config"]["max_ack_pending"] == 50  # the account's limit, below the default 1000
    over = {"stream_name": "S", "config": {"name": "C2", "ack_policy": "explicit", "max_ack_pending": 51}}
    assert error(await request("$JS.API.CONSUMER.CREATE.S.C2", over)) == (
        10121,
        "consumer max ack pending exceeds system limit of 50",
    )
    assert error(await request("$JS.API.CONSUMER.CREATE.S.C2", {"stream_name": "S", "config": {"name": "C2"}})) is None
    third = await request("$JS.API.CONSUMER.CREATE.S.C3", {"stream_name": "S", "config": {"name": "C3"}})
    assert error(third) == (10026, "maximum consumers limit reached")


async def test_publishes_stop_when_the_account_memory_is_used_up(login) -> None:
    request = await login("m")
    await request(*stream("S", storage="memory"))
    acks = [await request("s.x", b"x" * 100) for _ in range(12)]
    stored = [ack for ack in acks if "error" not in ack]
    refused = [ack for ack in acks if "error" in ack]
    assert refused, "the account's memory limit was never reached"
    assert refused[0] == {
        "error": {"code": 400, "err_code": 10002, "description": "resource limits exceeded for account"},
        "stream": "S",
        "seq": 0,
    }
    assert [ack["seq"] for ack in stored] == list(range(1, len(stored) + 1))
    info = await request("$JS.API.STREAM.INFO.S")
    assert info["state"]["messages"] == len(stored) and info["state"]["bytes"] <= 1024
