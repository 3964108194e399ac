"""Another account's JetStream used through imports in a three-node cluster, on both targets.

Account JS (the one with JetStream) exports ``$JS.API.>`` and ``$JS.ACK.>``;
APP imports the API under ``JS.acc.API``.  A pull through the import waits
on the requester's own inbox only where the consumer leads: nats-server
tracks the ``_R_`` reply through the imports of the consumer leader's server
(``trackDownAccountAndInterest``).  Facts pinned (nats-server 2.15.1):

- requester on the consumer leader's server: the inbox unsubscribed ends the
  pull, and a message stored afterwards stays pending (as on one server);
- requester on another server: the leader sees only the route's interest in
  the ``_R_`` reply, so the pull keeps waiting and takes the next message
  (delivered to nobody, pending its ack);
- APP's own ``$JS.API`` requests are answered ``JetStream not enabled for
  account`` (10039), once, by the server they came to.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nats
import pytest
from nats.aio.client import Client

from fakejs import ServerOptions
from fakejs.core.configfile.load import load_text
from fakejs.targets.cluster import RealCluster
from fakejs.targets.fake_cluster import FakeCluster
from tests.harness.js import api
from tests.harness.js_cluster import create, unique
from tests.harness.wait import eventually

pytestmark = pytest.mark.cluster

PREFIX = "JS.acc.API"
ACCOUNTS = f"""
no_auth_user: js
accounts {{
  JS {{
    jetstream: enabled
    users: [{{user: js, password: js}}]
    exports: [{{service: "$JS.API.>"}}, {{service: "$JS.ACK.>"}}]
  }}
  APP {{
    users: [{{user: app, password: app}}]
    imports: [
      {{service: {{account: JS, subject: "$JS.API.>"}}, to: "{PREFIX}.>"}}
      {{service: {{account: JS, subject: "$JS.ACK.>"}}}}
    ]
  }}
}}
"""


@pytest.fixture(scope="module")
def cluster(js_cluster_kind: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Three JetStream nodes ``n1``..``n3`` whose JetStream is account JS's."""
    if js_cluster_kind == "real":
        config: Path = tmp_path_factory.mktemp("accounts") / "accounts.conf"
        config.write_text(ACCOUNTS)
        started: Any = RealCluster(3, jetstream=True, extra=["-c", str(config)]).start()
    else:
        options = load_text(ACCOUNTS, base=ServerOptions()).options
        started = FakeCluster(3, jetstream=True, accounts=options.accounts, no_auth_user=options.no_auth_user).start()
    try:
        yield started
    finally:
        started.stop()


async def _connect(cluster: Any, node: int, user: str) -> Client:
    return await nats.connect(cluster.url(node).replace("nats://", f"nats://{user}:{user}@"), allow_reconnect=False)


async def _consumer(owner: Client, stream: str) -> dict:
    return await api(owner, f"$JS.API.CONSUMER.INFO.{stream}.C", {})


@pytest.mark.parametrize("where", ["on the leader's server", "on another server"])
async def test_a_pull_through_the_import_waits_on_the_leaders_view_of_the_reply(cluster: Any, where: str) -> None:
    owner = await _connect(cluster, 0, "js")
    stream = unique("S")
    await create(owner, stream)
    created = await api(
        owner,
        f"$JS.API.CONSUMER.CREATE.{stream}.C",
        {"stream_name": stream, "config": {"durable_name": "C", "ack_policy": "explicit"}},
    )
    leader = int(created["cluster"]["leader"].removeprefix("n")) - 1
    node = leader if where == "on the leader's server" else (leader + 1) % 3
    app = await _connect(cluster, node, "app")
    try:
        inbox = app.new_inbox()
        sub = await app.subscribe(inbox)
        request = json.dumps({"batch": 1, "expires": 30_000_000_000}).encode()
        await app.publish(f"{PREFIX}.CONSUMER.MSG.NEXT.{stream}.C", request, reply=inbox)
        await eventually(lambda: _consumer(owner, stream), lambda c: c["num_waiting"] == 1, what="the waiting pull")
        await sub.unsubscribe()
        await app.flush()
        await owner.publish(f"{stream}.x", b"one")
        if where == "on the leader's server":
            state = await eventually(
                lambda: _consumer(owner, stream),
                lambda c: c["num_pending"] == 1 and c["num_waiting"] == 0,
                what="the message left pending",
            )
            assert (state["delivered"]["stream_seq"], state["num_ack_pending"]) == (0, 0)
        else:
            state = await eventually(
                lambda: _consumer(owner, stream),
                lambda c: c["num_ack_pending"] == 1 and c["num_waiting"] == 0,
                what="the message taken by the pull",
            )
            assert (state["delivered"]["stream_seq"], state["num_pending"]) == (1, 0)
    finally:
        await app.close()
        await owner.close()


async def test_the_importing_accounts_own_api_is_answered_once_as_not_enabled(cluster: Any) -> None:
    app = await _connect(cluster, 1, "app")
    try:
        inbox = app.new_inbox()
        sub = await app.subscribe(inbox)
        answers = []
        for _ in range(2):  # the second answer comes after any duplicate of the first
            await app.publish("$JS.API.INFO", b"", reply=inbox)
            answers.append(json.loads((await sub.next_msg(timeout=5)).data))
        await app.flush()
        assert sub.pending_msgs == 0
        assert (
            answers[0]
            == answers[1]
            == {
                "type": "io.nats.jetstream.api.v1.account_info_response",
                "error": {"code": 503, "err_code": 10039, "description": "JetStream not enabled for account"},
            }
        )
    finally:
        await app.close()
