"""Exports and imports across a cluster: each message reaches an importer's subscriber once.

Two nodes of one kind sharing a configuration with accounts ``A``
(exporting a stream and a service) and ``B`` (importing both), on both
targets.  Facts pinned (nats-server 2.15.1):

- a message published in ``A`` on one node reaches a ``B`` subscriber of
  the imported stream on the other node once: the route carries it in
  ``A`` and the subscriber's node imports it (nats-server's shadow
  subscriptions), the importing account's copy is not routed;
- a request published in ``B`` on one node reaches the service's
  subscriber in ``A`` on the other node once: the route carries it in
  ``A`` after the import (service import subscriptions are not announced
  to the other servers).
"""

from __future__ import annotations

from typing import Any

import nats
import pytest

from tests.harness.cluster import interest_routed
from tests.harness.cluster_imports import ACCOUNTS
from tests.harness.wait import WAIT

pytestmark = pytest.mark.cluster


async def test_imports_deliver_once_across_routes(make_cluster: Any, tmp_path: Any) -> None:
    path = tmp_path / "accounts.conf"
    path.write_text(ACCOUNTS)
    cluster = make_cluster(size=2, extra=["-c", str(path)])
    a1 = await nats.connect(cluster.url(0), user="a", password="a")
    b1 = await nats.connect(cluster.url(0), user="b", password="b")
    a2 = await nats.connect(cluster.url(1), user="a", password="a")
    b2 = await nats.connect(cluster.url(1), user="b", password="b")
    events, service = await b2.subscribe("from.a.ev.>"), await a2.subscribe("svc.>")
    await interest_routed(a1, a2)
    await interest_routed(b1, b2)
    for n in range(3):
        await a1.publish(f"ev.{n}", b"e")
        await b1.publish(f"remote.{n}", b"r")
    # A last message of each kind on the same connection: once it arrives, a duplicate of the first would have.
    await a1.publish("ev.last", b"e")
    await b1.publish("remote.last", b"r")
    got_events = [(await events.next_msg(WAIT)).subject for _ in range(4)]
    got_requests = [(await service.next_msg(WAIT)).subject for _ in range(4)]
    assert got_events == ["from.a.ev.0", "from.a.ev.1", "from.a.ev.2", "from.a.ev.last"]
    assert got_requests == ["svc.0", "svc.1", "svc.2", "svc.last"]
    assert events.pending_msgs == 0 and service.pending_msgs == 0
    for nc in (a1, b1, a2, b2):
        await nc.close()
