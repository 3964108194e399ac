"""Clusters for this repository's tests: the launcher is :mod:`fakejs.targets.cluster`, plus client helpers.

:class:`Cluster` (``fakejs.targets.cluster.ProcessCluster``) starts N nodes
of nats-server or ``python -m fakejs`` joined by routes; :func:`start_cluster`
starts one and waits until every node reaches every other.  The helpers below
are for clients of a cluster: waiting until interest has crossed the routes,
and checking a queue group's deliveries.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Sequence

from nats.aio.client import Client
from nats.aio.msg import Msg

from fakejs.targets.cluster import ClusterNode, node_command, start_cluster
from fakejs.targets.cluster import ProcessCluster as Cluster
from fakejs.targets.cluster_probe import PROBE_INTERVAL, READY_TIMEOUT, wait_connected
from tests.harness.wait import WAIT, eventually

__all__ = [
    "READY_TIMEOUT",
    "Cluster",
    "ClusterNode",
    "Inbox",
    "group_gets_each_once",
    "interest_routed",
    "node_command",
    "requests_answered",
    "start_cluster",
    "wait_connected",
]


# -- clients of a cluster -----------------------------------------------------------------------


async def interest_routed(publisher: Client, *subscribers: Client, timeout: float = WAIT) -> None:
    """Return once the subscriptions each subscriber connection made so far are known where ``publisher`` is.

    Interest crosses a route asynchronously but in order: a canary
    subscription made after the others on the same connection arrives after
    them, so once the publisher's messages reach every canary, they reach
    the subscriptions before it too.
    """
    subject = f"_CANARY.{secrets.token_hex(6)}"
    canaries = [await nc.subscribe(subject) for nc in subscribers]
    for nc in subscribers:
        await nc.flush()
        await nc.flush()  # nats-py's flush can overtake a SUB still queued; the second one cannot
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    waiting = list(canaries)
    while waiting:
        assert loop.time() < deadline, "interest did not cross the routes in time"
        await publisher.publish(subject, b"")
        await publisher.flush()
        await asyncio.sleep(PROBE_INTERVAL)
        waiting = [canary for canary in waiting if not canary.pending_msgs]
    for canary in canaries:
        await canary.unsubscribe()


async def requests_answered(requester: Client, responder: Client, subject: str, count: int = 5) -> None:
    """``responder`` answers requests on ``subject``; each of ``count`` requests from ``requester`` gets its answer."""

    async def respond(msg: Msg) -> None:
        await msg.respond(b"re: " + msg.data)

    await responder.subscribe(subject, cb=respond)
    await interest_routed(requester, responder)
    for n in range(count):
        reply = await requester.request(subject, f"q{n}".encode(), timeout=WAIT)
        assert reply.data == f"re: q{n}".encode()


class Inbox:
    """The payloads a subscription received, in order."""

    def __init__(self) -> None:
        self.payloads: list[bytes] = []

    async def add(self, msg: Msg) -> None:
        self.payloads.append(msg.data)


async def group_gets_each_once(publisher: Client, subject: str, members: Sequence[Inbox], count: int = 300) -> None:
    """Publish ``count`` numbered messages; the queue group's members must get each exactly once between them."""
    for n in range(count):
        await publisher.publish(subject, str(n).encode())
    await publisher.flush()
    await eventually(
        lambda: asyncio.sleep(0, sum(len(inbox.payloads) for inbox in members)),
        lambda total: total >= count,
        what="every message delivered to the group",
    )
    await asyncio.sleep(0.05)  # a duplicate would arrive right behind
    assert sorted(int(payload) for inbox in members for payload in inbox.payloads) == list(range(count))
