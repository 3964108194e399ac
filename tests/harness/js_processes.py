"""JetStream across server processes started from flags: asking a cluster that may be electing.

The parity tests of ``tests/parity/js_processes/`` start nodes ``n1``..``nN``
of one kind (:func:`process_cluster`) and run the same nats-py client code
against nats-server and fakejs processes.  While a cluster elects, a request may get
no answer or an error: :func:`quietly` makes that a value to wait past, and
the helpers here ask again until the meta group has placed a stream
(:func:`create_r3`, :func:`create`), a group has a leader (:func:`leader`,
:func:`stream_leader`) or has settled on its servers (:func:`settled`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import nats
from nats.aio.client import Client
from nats.errors import Error as NatsError
from nats.js.api import StreamConfig
from nats.js.errors import Error as JetStreamError
from nats.js.errors import ServiceUnavailableError

from fakejs.targets.cluster import ProcessCluster
from tests.harness.wait import eventually

NODES = {"n1", "n2", "n3"}
FAILOVER = 60.0  # seconds for a new stream leader: election timeouts of 4 s to 9 s, maybe a few rounds
SETTLE = 60.0  # seconds for a group to run on its new servers: elections of 4 s to 9 s, maybe a few rounds
STREAM_STEPDOWN = "$JS.API.STREAM.LEADER.STEPDOWN."
CONSUMER_STEPDOWN = "$JS.API.CONSUMER.LEADER.STEPDOWN."
STREAM_STEPDOWN_TYPE = "io.nats.jetstream.api.v1.stream_leader_stepdown_response"
CONSUMER_STEPDOWN_TYPE = "io.nats.jetstream.api.v1.consumer_leader_stepdown_response"


def process_cluster(kind: str, size: int = 3, **options: Any) -> ProcessCluster:
    """``size`` JetStream nodes ``n1``..``n<size>`` of ``kind``, started from flags (by its ``start``)."""
    return ProcessCluster([kind] * size, jetstream=True, node_prefix="n", **options)


async def quietly(coroutine: object) -> object:
    """The awaited value, or the error a request got while the cluster is electing (asked again)."""
    try:
        return await coroutine  # type: ignore[misc]
    except (NatsError, JetStreamError, TimeoutError) as error:
        return error


async def ask(
    client: Client, subject: str, body: object = None, headers: dict[str, str] | None = None
) -> dict[str, Any]:
    """A request's answer as a document (``body`` sent as it is if bytes, else as JSON)."""
    payload = b"" if body is None else body if isinstance(body, bytes) else json.dumps(body).encode()
    reply = await client.request(subject, payload, timeout=10.0, headers=headers)
    answer: dict[str, Any] = json.loads(reply.data)
    return answer


async def unanswered_as_value(coroutine: Any) -> object:
    """The awaited value, or the "no responders" error a request got while its responder was not reachable."""
    try:
        return await coroutine
    except ServiceUnavailableError as error:
        return error


async def asked(client: Client, subject: str) -> dict[str, Any] | Exception:
    """A request's answer, or the error it got while the cluster is electing (asked again)."""
    try:
        return await ask(client, subject)
    except (nats.errors.Error, TimeoutError) as error:
        return error


def refusal(kind: str, code: int, err_code: int, description: str) -> dict[str, Any]:
    """An API error answer of type ``kind``, as nats-server writes it."""
    return {"type": kind, "error": {"code": code, "err_code": err_code, "description": description}}


# -- R3 streams through nats-py ------------------------------------------------------------------


def replicated_cluster(cluster: dict) -> bool:
    """A ``cluster`` section of three nodes: a leader, the two others as replicas, all current."""
    replicas = cluster.get("replicas") or []
    names = {cluster.get("leader")} | {replica["name"] for replica in replicas}
    return names == NODES and all(replica["current"] for replica in replicas)


async def create_r3(client: Client, name: str) -> None:
    """Create an R3 stream (asked again while the meta group cannot place it yet), then wait for its leader."""
    js = client.jetstream(timeout=10.0)
    config = StreamConfig(name=name, subjects=[f"{name}.>"], num_replicas=3)
    await eventually(lambda: quietly(js.add_stream(config)), lambda reply: not isinstance(reply, Exception), timeout=30)
    await eventually(
        lambda: quietly(js.stream_info(name)),
        lambda reply: not isinstance(reply, Exception) and replicated_cluster(reply.as_dict()["cluster"]),
        what="a led R3 stream",
        timeout=30,
    )


async def leader(client: Client, stream: str) -> str:
    """The stream's leader, as its info names it once one answers."""

    async def answer() -> object:
        return await quietly(client.jetstream(timeout=3.0).stream_info(stream))

    info = await eventually(answer, lambda reply: not isinstance(reply, Exception), what="a stream leader", timeout=30)
    return str(info.as_dict()["cluster"]["leader"])  # type: ignore[union-attr]


async def stream_leader(client: Client, stream: str, other_than: str = "") -> str:
    """The stream's leader once there is one, other than ``other_than`` (after a step-down)."""
    info = await eventually(
        lambda: quietly(client.jetstream(timeout=3.0).stream_info(stream)),
        lambda reply: (
            not isinstance(reply, Exception) and reply.as_dict()["cluster"].get("leader") not in ("", None, other_than)
        ),
        what="a stream leader",
        timeout=30,
    )
    return str(info.as_dict()["cluster"]["leader"])


# -- groups settling on their servers, through the API -------------------------------------------


async def connect(cluster: ProcessCluster) -> AsyncIterator[Client]:
    """A client, once the meta group knows every server (a stream on all of them could be created)."""
    connected = await nats.connect(cluster.urls[0], allow_reconnect=False)
    everywhere = {"name": "READY", "subjects": ["ready"], "num_replicas": len(cluster.nodes)}
    await eventually(
        lambda: quietly(ask(connected, "$JS.API.STREAM.CREATE.READY", everywhere)),
        lambda reply: isinstance(reply, dict) and "error" not in reply,
        what="a meta group knowing every server",
        timeout=SETTLE,
    )
    deleted = await ask(connected, "$JS.API.STREAM.DELETE.READY")
    assert deleted.get("success") is True, deleted
    yield connected
    await connected.close()


def servers(section: dict[str, Any]) -> set[str]:
    """The servers a ``cluster`` section names: its leader and replicas."""
    return {section["leader"]} | {replica["name"] for replica in section.get("replicas") or []}


def servers_or_none(reply: dict[str, Any]) -> set[str]:
    """The servers of a reply's ``cluster`` section, none while it has no leader."""
    section = reply.get("cluster") or {}
    return servers(section) if section.get("leader") else set()


def current_on(section: dict[str, Any], wanted: set[str]) -> bool:
    """A led group on exactly ``wanted``, every replica current."""
    replicas = section.get("replicas") or []
    return bool(section.get("leader")) and servers(section) == wanted and all(r["current"] for r in replicas)


async def settled(client: Client, subject: str, done: Any, what: str) -> dict[str, Any]:
    """The answer to ``subject`` once it is no error and ``done`` holds of it (asked again while it does not)."""
    answer = await eventually(
        lambda: asked(client, subject),
        lambda reply: isinstance(reply, dict) and "error" not in reply and done(reply),
        what=what,
        timeout=SETTLE,
    )
    assert isinstance(answer, dict), answer
    return answer


async def settled_on(client: Client, subject: str, wanted: set[str], what: str) -> dict[str, Any]:
    """The info ``subject`` answers once its group is led on exactly ``wanted``, every replica current."""
    return await settled(client, subject, lambda reply: current_on(reply.get("cluster") or {}, wanted), what)


async def create(client: Client, name: str, replicas: int) -> dict[str, Any]:
    """Create a stream (asked again while the meta group cannot place it yet) and wait until it is led with
    every replica current."""
    config = {"name": name, "subjects": [f"{name}.>"], "num_replicas": replicas}
    await eventually(
        lambda: quietly(ask(client, f"$JS.API.STREAM.CREATE.{name}", config)),
        lambda reply: isinstance(reply, dict) and "error" not in reply,
        timeout=30,
    )
    info = await settled(
        client,
        f"$JS.API.STREAM.INFO.{name}",
        lambda reply: len(servers_or_none(reply)) == replicas and current_on(reply["cluster"], servers_or_none(reply)),
        "a led stream",
    )
    return config | {"servers": servers(info["cluster"])}


async def durable(client: Client, stream: str, name: str, replicas: int = 0) -> None:
    """A durable pull consumer with explicit acks (``replicas`` 0: its stream's), once it has a leader."""
    config = {"durable_name": name, "ack_policy": "explicit", "num_replicas": replicas}
    created = await ask(client, f"$JS.API.CONSUMER.CREATE.{stream}.{name}", {"stream_name": stream, "config": config})
    assert "error" not in created, created
    await settled(
        client,
        f"$JS.API.CONSUMER.INFO.{stream}.{name}",
        lambda reply: bool((reply.get("cluster") or {}).get("leader")),
        "a led consumer",
    )


async def fetch_and_ack(client: Client, stream: str, name: str, count: int) -> list[bytes]:
    """The payloads of ``count`` messages fetched from a durable, each acknowledged.

    A fetch answered "no responders" reached no consumer leader (its interest may not have reached the
    connected server yet) and took nothing, so it is asked again."""
    subscription = await client.jetstream(timeout=10.0).pull_subscribe_bind(name, stream=stream)
    fetched = await eventually(
        lambda: unanswered_as_value(subscription.fetch(count, timeout=10)),
        lambda reply: not isinstance(reply, ServiceUnavailableError),
        what="a consumer leader answering a fetch",
        timeout=SETTLE,
    )
    assert isinstance(fetched, list), fetched
    for message in fetched:
        await message.ack_sync()
    return [message.data for message in fetched]
