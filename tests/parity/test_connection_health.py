"""Server PINGs, stale connections and slow consumers, on both targets."""

from __future__ import annotations

import asyncio

import nats
import pytest

from tests.harness.raw import RawClient, record
from tests.harness.targets import Settings
from tests.harness.wait import WAIT

QUIET = b'CONNECT {"verbose":false,"pedantic":false}\r\n'


@pytest.mark.slow
@pytest.mark.manual_clock
async def test_stale_connection_is_closed_while_a_ponging_client_lives(make_target) -> None:
    """With ping_interval 1s and ping_max 1: a PING ~1s after CONNECT, then Stale Connection."""
    target = await make_target(Settings(ping_interval=1.0, ping_max=1))
    healthy = await nats.connect(target.url)
    silent = await RawClient.connect(target.host, target.port)
    await silent.read_until(b"\r\n")
    greeting = len(silent.received)
    await silent.send(QUIET)
    await target.elapse_until(silent.hung_up, 6)
    assert await silent.wait_closed(timeout=6)
    assert bytes(silent.received[greeting:]) == b"PING\r\n-ERR 'Stale Connection'\r\n"
    await target.elapse(0.5)
    assert healthy.is_connected
    await healthy.flush(timeout=WAIT)
    await healthy.close()
    await silent.close()


@pytest.mark.slow
@pytest.mark.manual_clock
async def test_client_that_answers_pings_stays(make_target) -> None:
    target = await make_target(Settings(ping_interval=0.5, ping_max=1))
    client = await RawClient.connect(target.host, target.port)
    await client.read_until(b"\r\n")
    await client.send(QUIET)
    answered = 0
    end = target.now() + 2.5
    while target.now() < end and not client.closed:
        await target.elapse_until(lambda: client.read_some(0.001), 0.2)
        pings = client.received.count(b"PING\r\n")
        while answered < pings:
            await client.send(b"PONG\r\n")
            answered += 1
    assert not client.closed
    assert answered >= 2
    await client.close()


BURST = 10  # messages of 32 KiB published before the watcher catches up


async def test_slow_consumer_is_cut_off_without_stalling_others(make_target) -> None:
    target = await make_target(Settings(max_pending=1536 * 1024))
    slow = await RawClient.connect(target.host, target.port)
    await slow.read_until(b"\r\n")
    await slow.send(QUIET + b"SUB firehose 1\r\nPING\r\n")
    await slow.read_until(b"PONG\r\n")
    # `slow` now stops reading.
    publisher = await nats.connect(target.url)
    watcher = await nats.connect(target.url)
    seen = await watcher.subscribe("firehose")
    await watcher.flush()  # the server has the subscription before the first message
    chunk = b"x" * 32 * 1024
    total = 0
    for _ in range(1000 // BURST):  # 32 MiB: far beyond socket buffers and max_pending
        for _ in range(BURST):
            await publisher.publish("firehose", chunk)
            total += len(chunk)
        await publisher.flush(timeout=20)
        # Everyone else is still served: the watcher takes each burst before the next, so only
        # the reader that stopped can fall max_pending behind (a busy machine must not make
        # the watcher a slow consumer too).
        for _ in range(BURST):
            await seen.next_msg(timeout=10)
    # ...while the slow reader was disconnected after what the kernel buffered.
    assert await slow.wait_closed(timeout=30)
    assert len(slow.received) < total
    await publisher.close()
    await watcher.close()
    await slow.close()


@pytest.mark.slow
@pytest.mark.manual_clock
async def test_write_deadline_cuts_off_a_reader_that_stalls(make_target) -> None:
    """Pending bytes stay under max_pending, but writes block past the deadline."""
    target = await make_target(Settings(write_deadline=1.0))
    stuck = await RawClient.connect(target.host, target.port)
    await stuck.read_until(b"\r\n")
    await stuck.send(QUIET + b"SUB firehose 1\r\nPING\r\n")
    await stuck.read_until(b"PONG\r\n")
    publisher = await nats.connect(target.url)
    for _ in range(600):  # ~19 MiB: more than socket buffers hold, far less than max_pending
        await publisher.publish("firehose", b"y" * 32 * 1024)
    await publisher.flush(timeout=20)
    await target.elapse(3)  # the deadline passes while the client reads nothing
    await stuck.settle(quiet=1.0, timeout=30)
    assert stuck.closed
    await publisher.flush(timeout=5)
    await publisher.close()
    await stuck.close()


async def test_max_payload_above_max_pending_is_refused(make_target) -> None:
    with pytest.raises(Exception, match=r"max_payload \(1048576\) cannot be higher than max_pending \(262144\)"):
        await make_target(Settings(max_pending=256 * 1024))


async def test_client_gone_mid_stream_does_not_disturb_server(target) -> None:
    client = await RawClient.connect(target.host, target.port)
    await client.read_until(b"\r\n")
    await client.send(QUIET + b"SUB a 1\r\nPUB a 100\r\nonly part of the pay")
    client.writer.transport.abort()
    transcript = await record(target.host, target.port, [QUIET, b"SUB b 1\r\nPUB b 2\r\nok\r\n"])
    assert transcript.without_greeting() == b"MSG b 1 2\r\nok\r\n"


async def test_a_burst_of_a_thousand_connects_all_get_info(target) -> None:
    """A thousand clients connecting at the same instant: every one gets INFO (none lost in the accept queue)."""
    release = asyncio.Event()
    writers: list[asyncio.StreamWriter] = []

    async def client() -> bytes:
        await release.wait()
        reader, writer = await asyncio.open_connection(target.host, target.port)
        writers.append(writer)
        return await asyncio.wait_for(reader.readline(), 20)

    tasks = [asyncio.create_task(client()) for _ in range(1000)]
    await asyncio.sleep(0)
    release.set()
    try:
        lines = await asyncio.gather(*tasks)
    finally:
        for writer in writers:
            writer.close()
    assert sum(line.startswith(b"INFO {") for line in lines) == 1000
