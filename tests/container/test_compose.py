"""The documented compose file (``examples/compose/compose.yaml``): three fakejs containers, one JetStream cluster.

podman-compose starts the file itself, changed only where this machine needs
it: the services run the image built from the repository (where the file's
``build`` points), the client ports published on the host (4222, 4223, 4224 in
the file) become free ones (other servers run here), and the project gets a
name of its own.  The containers' commands, names, routes and store volumes
are the file's.

Under publish load (every message with its own ``Nats-Msg-Id``, published
again until acknowledged) the container of the R3 stream's leader is killed
with SIGKILL; publishing goes on until acknowledgements resume, the container
is started again on its volume, and once its replica is current the stream
holds every acknowledged message exactly once, at the sequence its
acknowledgement gave.
"""

from __future__ import annotations

import asyncio
import importlib.util
import itertools
import json
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nats
import pytest
import yaml
from nats.aio.client import Client
from nats.errors import Error as NatsError
from nats.js.api import PubAck, StorageType, StreamConfig
from nats.js.client import JetStreamContext
from nats.js.errors import Error as JetStreamError

from tests.container.engine import REPO, Podman, free_ports, tail
from tests.harness.wait import eventually

pytestmark = [pytest.mark.slow, pytest.mark.container, pytest.mark.cluster]

COMPOSE_FILE = REPO / "examples" / "compose" / "compose.yaml"
SERVICES = ("n1", "n2", "n3")
STREAM = "ORDERS"
SUBJECT = "orders.new"
PUBLISHERS = 4  # concurrent publishers, each with one message in flight
BEFORE_KILL = 150  # messages acknowledged before the leader's container is killed
AFTER_KILL = 150  # messages acknowledged after it, once a new leader serves
READY = 60.0  # seconds for three containers to start and elect a meta leader
FAILOVER = 60.0  # seconds for a new stream leader: election timeouts of 4 s to 9 s, maybe a few rounds
PUBLISH_TIMEOUT = 2.0


@dataclass
class Project:
    """The compose file started by podman-compose under a project name of its own."""

    podman: Podman
    name: str
    file: Path
    ports: dict[str, int]  # service → its client port on the host

    def compose(self, *args: str, check: bool = True) -> str:
        argv = [sys.executable, "-m", "podman_compose", "-p", self.name, "-f", str(self.file), *args]
        return self.podman.command(argv, timeout=180.0, check=check).stdout

    def url(self, service: str) -> str:
        return f"nats://127.0.0.1:{self.ports[service]}"

    def container(self, service: str) -> str:
        """The name podman-compose gave the service's container (found by compose's labels)."""
        names = self.podman.run(
            "ps", "-a", "--format", "{{.Names}}",
            "--filter", f"label=com.docker.compose.project={self.name}",
            "--filter", f"label=com.docker.compose.service={service}",
        ).stdout.split()  # fmt: skip
        assert len(names) == 1, f"containers of service {service}: {names}"
        return names[0]

    def logs(self) -> str:
        return "\n".join(f"--- {service}\n{tail(self.podman.logs(self.container(service)))}" for service in SERVICES)


def for_this_machine(document: dict[str, Any], image: str, ports: dict[str, int]) -> dict[str, Any]:
    """The compose document with the built image and free host ports; everything else as written."""
    services = document["services"]
    assert tuple(sorted(services)) == SERVICES, sorted(services)
    rewritten = {key: value for key, value in document.items() if not key.startswith("x-")}
    rewritten["services"] = {}
    for name, service in services.items():
        assert f"--server_name {name}" in service["command"], service["command"]
        (published,) = service["ports"]
        container_port = str(published).rsplit(":", 1)[1]
        moved = {key: value for key, value in service.items() if key != "build"}
        rewritten["services"][name] = moved | {"image": image, "ports": [f"{ports[name]}:{container_port}"]}
    return rewritten


@pytest.fixture
def project(podman: Podman, image: str, tmp_path: Path) -> Iterator[Project]:
    if importlib.util.find_spec("podman_compose") is None:
        pytest.skip("podman-compose is not installed (pip install podman-compose, or the test extra)")
    ports = dict(zip(SERVICES, free_ports(len(SERVICES)), strict=True))
    document = for_this_machine(yaml.safe_load(COMPOSE_FILE.read_text()), image, ports)
    file = tmp_path / "compose.yaml"
    file.write_text(yaml.safe_dump(document, sort_keys=False))
    started = Project(podman, f"fakejs-test-{uuid.uuid4().hex[:12]}", file, ports)
    try:
        started.compose("up", "-d")
        yield started
    finally:
        started.compose("down", "-v", "-t", "1", check=False)


async def quietly(coroutine: Any) -> Any:
    """The awaited value, or the error a request got while the cluster is electing (asked again)."""
    try:
        return await coroutine
    except (NatsError, JetStreamError, OSError, TimeoutError) as error:
        return error


def answered(reply: object) -> bool:
    return not isinstance(reply, Exception)


async def jetstream_info(url: str) -> object:
    """``$JS.API.INFO`` asked through one node: the account info, or what went wrong."""
    client = await quietly(nats.connect(url, allow_reconnect=False, connect_timeout=2))
    if isinstance(client, Exception):
        return client
    try:
        reply = await quietly(client.request("$JS.API.INFO", b"", timeout=2))
        return reply if isinstance(reply, Exception) else json.loads(reply.data)
    finally:
        await client.close()


def replicated(cluster: dict[str, Any]) -> bool:
    """A ``cluster`` section of the three nodes: a leader and the two others as current replicas."""
    replicas = cluster.get("replicas") or []
    names = {cluster.get("leader")} | {replica["name"] for replica in replicas}
    return names == set(SERVICES) and all(replica["current"] for replica in replicas)


async def replicated_info(js: JetStreamContext) -> Any:
    return await eventually(
        lambda: quietly(js.stream_info(STREAM)),
        lambda reply: answered(reply) and replicated(reply.as_dict()["cluster"]),
        what="the R3 stream led, its two replicas current",
        timeout=FAILOVER,
    )


async def stream_leader(js: JetStreamContext) -> str:
    info = await eventually(lambda: quietly(js.stream_info(STREAM)), answered, what="a stream leader", timeout=FAILOVER)
    return str(info.as_dict()["cluster"]["leader"])


@dataclass
class Ledger:
    """What the publishers were told: each message's acknowledgement, by its ``Nats-Msg-Id``."""

    acks: dict[str, PubAck] = field(default_factory=dict)
    numbers: Iterator[int] = field(default_factory=itertools.count)
    stopping: bool = False


async def publish(js: JetStreamContext, ledger: Ledger) -> None:
    """Publish new messages until told to stop, each one again (same id) until it is acknowledged."""
    while not ledger.stopping:
        msg_id = f"m{next(ledger.numbers)}"
        ack = await eventually(
            lambda msg_id=msg_id: quietly(js.publish(SUBJECT, msg_id.encode(), headers={"Nats-Msg-Id": msg_id})),
            answered,
            what=f"an acknowledgement of {msg_id}",
            timeout=FAILOVER,
        )
        ledger.acks[msg_id] = ack


@pytest.fixture
async def client(project: Project) -> AsyncIterator[Client]:
    """A client of the three host ports, once JetStream answers on every node; it notices a dead node within seconds."""
    for service in SERVICES:
        await eventually(
            lambda service=service: jetstream_info(project.url(service)),
            lambda reply: isinstance(reply, dict) and "error" not in reply,
            what=f"$JS.API.INFO answered through {service}",
            timeout=READY,
        )
    urls = [project.url(service) for service in SERVICES]
    connected = await nats.connect(
        urls, max_reconnect_attempts=-1, reconnect_time_wait=0.2, ping_interval=1, max_outstanding_pings=2
    )
    yield connected
    await connected.close()


async def test_kill_the_stream_leaders_container_while_publishing(project: Project, client: Client) -> None:
    js = client.jetstream(timeout=PUBLISH_TIMEOUT)
    config = StreamConfig(name=STREAM, subjects=[SUBJECT], num_replicas=3, storage=StorageType.FILE)
    await eventually(lambda: quietly(js.add_stream(config)), answered, what="the stream created", timeout=FAILOVER)
    await replicated_info(js)

    ledger = Ledger()
    publishers = [asyncio.create_task(publish(js, ledger)) for _ in range(PUBLISHERS)]
    try:
        await eventually(
            lambda: asyncio.sleep(0, len(ledger.acks)), lambda count: count >= BEFORE_KILL, timeout=FAILOVER
        )
        leader = await stream_leader(js)
        killed = project.container(leader)
        project.podman.run("kill", "--signal", "KILL", killed)
        at_kill = len(ledger.acks)
        await eventually(
            lambda: asyncio.sleep(0, len(ledger.acks) - at_kill),
            lambda count: count >= AFTER_KILL,
            what=f"acknowledgements resumed after {leader} was killed",
            timeout=FAILOVER,
        )
    finally:
        ledger.stopping = True
        await asyncio.gather(*publishers)  # each ends once its last message is acknowledged
    assert await stream_leader(js) != leader

    project.podman.run("start", killed)
    info = await replicated_info(js)
    assert (info.state.first_seq, info.state.last_seq) == (1, info.state.messages), info.state
    reader = await nats.connect(project.url(leader), allow_reconnect=False)
    try:
        stored = [
            await reader.jetstream(timeout=10.0).get_msg(STREAM, seq) for seq in range(1, info.state.last_seq + 1)
        ]
    finally:
        await reader.close()

    ids = [message.headers["Nats-Msg-Id"] for message in stored if message.headers]
    assert len(ids) == len(stored) and all(
        message.data == message.headers["Nats-Msg-Id"].encode() for message in stored
    )
    assert len(set(ids)) == len(ids), f"stored more than once: {[i for i in ids if ids.count(i) > 1][:10]}"
    lost = set(ledger.acks) - set(ids)
    assert not lost, f"acknowledged but not stored: {sorted(lost)[:10]} of {len(lost)}\n{project.logs()}"
    assert set(ids) == set(ledger.acks)  # every message published was published until acknowledged
    misplaced = {msg_id: ack.seq for msg_id, ack in ledger.acks.items() if ids[ack.seq - 1] != msg_id}
    assert not misplaced, f"acknowledged at a sequence holding another message: {misplaced}"
    assert at_kill >= BEFORE_KILL and len(ledger.acks) >= at_kill + AFTER_KILL
