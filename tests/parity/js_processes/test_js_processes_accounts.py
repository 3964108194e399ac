"""JetStream of two named accounts across three server processes, on both targets.

Three nodes ``n1``..``n3`` started from the same configuration file (two
accounts ``A`` and ``B`` with JetStream, a system account ``SYS``), the same
nats-py client code against nats-server and fakejs processes.  Facts pinned
(nats-server 2.15.1):

- each account creates R3 streams and consumers of its own, a stream of the
  same name in both accounts included: two streams, each with its own Raft
  group, led and replicated on the three nodes;
- an account sees its own streams only: ``STREAM.NAMES``, ``$JS.API.INFO``
  counts, and 10059 for the other account's stream;
- ``STREAM.INFO``'s ``cluster`` section: the cluster's name, the stream's
  ``raft_group``, its leader and the two other nodes as replicas, and the
  system account the groups' traffic goes through (``traffic_account``);
- kill -9 of the node leading a stream of ``A``: another node leads it, every
  acknowledged message is kept, and both accounts go on publishing (a retry
  deduplicated by its ``Nats-Msg-Id``) and consuming through the surviving
  nodes.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import nats
import pytest
from nats.aio.client import Client
from nats.js.api import ConsumerConfig

from fakejs.targets.cluster import ProcessCluster
from tests.harness.js_processes import FAILOVER, NODES, create_r3, leader, process_cluster, quietly, replicated_cluster
from tests.harness.wait import eventually

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

CONFIG = """
accounts {
  SYS { users: [ {user: sys, password: sys} ] }
  A { jetstream: enabled, users: [ {user: a, password: a} ] }
  B { jetstream: enabled, users: [ {user: b, password: b} ] }
}
system_account: SYS
no_auth_user: a
"""


@pytest.fixture
def cluster(target_kind: str, tmp_path: Path) -> Iterator[ProcessCluster]:
    config = tmp_path / "accounts.conf"
    config.write_text(CONFIG)
    with process_cluster(target_kind, extra=["-c", str(config)]).start() as started:
        yield started


async def stream_info(client: Client, stream: str) -> dict:
    """``STREAM.INFO`` as the server sends it (nats-py's ``ClusterInfo`` drops ``traffic_account``)."""
    reply = await client.request(f"$JS.API.STREAM.INFO.{stream}", b"", timeout=10.0)
    return json.loads(reply.data)  # type: ignore[no-any-return]


@pytest.fixture
async def clients(cluster: ProcessCluster) -> AsyncIterator[tuple[Client, Client]]:
    """A client of account ``A`` and one of ``B``, each reconnecting to any node.

    The credentials are options rather than in the URLs: a node's address learnt from a server's INFO
    carries none, and a client reconnecting there without them would be ``no_auth_user`` ``a``'s."""
    options = {"max_reconnect_attempts": -1, "reconnect_time_wait": 0.2}
    first = await nats.connect(cluster.urls, user="a", password="a", **options)
    second = await nats.connect(cluster.urls, user="b", password="b", **options)
    yield first, second
    await first.close()
    await second.close()


async def test_streams_and_consumers_of_two_accounts_are_apart(
    cluster: ProcessCluster, clients: tuple[Client, Client]
) -> None:
    client_a, client_b = clients
    await create_r3(client_a, "S")
    await create_r3(client_b, "S")  # the same name in the other account: a stream of its own
    await create_r3(client_b, "T")
    js_a, js_b = client_a.jetstream(timeout=10.0), client_b.jetstream(timeout=10.0)
    assert (await js_a.publish("S.x", b"a1")).seq == 1
    assert (await js_b.publish("S.x", b"b1")).seq == 1
    assert (await js_b.publish("S.x", b"b2")).seq == 2
    assert await js_a.streams_info() and [info.config.name for info in await js_a.streams_info()] == ["S"]
    assert sorted(info.config.name for info in await js_b.streams_info()) == ["S", "T"]
    with pytest.raises(nats.js.errors.NotFoundError):
        await js_a.stream_info("T")
    info_a, info_b = await stream_info(client_a, "S"), await stream_info(client_b, "S")
    assert (info_a["state"]["messages"], info_b["state"]["messages"]) == (1, 2)
    section_a, section_b = info_a["cluster"], info_b["cluster"]
    assert section_a["raft_group"] != section_b["raft_group"]
    assert section_a["name"] == section_b["name"] == cluster.name
    for section in (section_a, section_b):
        assert replicated_cluster(section)
        assert (section["system_account"], section["traffic_account"]) == (True, "SYS")
    account_a, account_b = await js_a.account_info(), await js_b.account_info()
    assert (account_a.streams, account_b.streams) == (1, 2)
    for js in (js_a, js_b):
        await js.add_consumer("S", ConsumerConfig(durable_name="D", num_replicas=3))
    consumer = await js_b.consumer_info("S", "D")
    assert consumer.num_pending == 2 and consumer.as_dict()["cluster"]["raft_group"]
    assert (await js_a.consumer_info("S", "D")).num_pending == 1
    with pytest.raises(nats.js.errors.NotFoundError):
        await js_a.consumer_info("T", "D")


async def test_kill_the_leader_of_a_stream_of_one_account(
    cluster: ProcessCluster, clients: tuple[Client, Client]
) -> None:
    client_a, client_b = clients
    await create_r3(client_a, "K")
    await create_r3(client_b, "K")
    js_a, js_b = client_a.jetstream(timeout=3.0), client_b.jetstream(timeout=3.0)
    for number in range(5):
        await js_a.publish("K.a", f"a{number}".encode())
        await js_b.publish("K.b", f"b{number}".encode())
    # an R3 consumer of B's stream; a fetch given up while the cluster elects may have taken messages
    # with it, so they come again after a short ack wait
    pulled = await js_b.pull_subscribe("K.b", durable="P", config=ConsumerConfig(ack_wait=1.0))
    killed = sorted(NODES).index(await leader(client_a, "K"))
    cluster.kill(killed)
    for js, subject, expected in ((js_a, "K.a", 6), (js_b, "K.b", 6)):
        after = await eventually(
            lambda js=js, subject=subject: quietly(js.publish(subject, b"after", headers={"Nats-Msg-Id": "after"})),
            lambda reply: not isinstance(reply, Exception),
            what="a publish acknowledged after the kill",
            timeout=FAILOVER,
        )
        assert after.seq == expected  # type: ignore[union-attr]
    await eventually(
        lambda: leader(client_a, "K"), lambda name: name != f"n{killed + 1}", what="another leader", timeout=FAILOVER
    )
    received: dict[int, bytes] = {}

    async def gather() -> dict[int, bytes]:
        reply = await quietly(pulled.fetch(6, timeout=2.0))
        for message in reply if isinstance(reply, list) else []:
            received[message.metadata.sequence.stream] = message.data
            await message.ack()
        return received

    await eventually(gather, lambda got: len(got) == 6, what="every message of B's stream delivered", timeout=FAILOVER)
    assert [received[sequence] for sequence in sorted(received)] == [f"b{n}".encode() for n in range(5)] + [b"after"]
    assert (await js_a.stream_info("K")).state.messages == 6
