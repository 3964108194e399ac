"""An authorization callout across a cluster, on both targets: the service on one node, the client on the other.

Facts pinned (nats-server 2.15.1): with the same ``auth_callout`` on two
routed nodes, a client logging in to the second node has its request
published in the callout's account there; the route carries it to the
service subscribed on the first node and carries the answer back to the
second node's own reply subject, which logs the client in (the request
names the second node in ``server_id``).
"""

from __future__ import annotations

import json
from typing import Any

import nats
import nkeys
import pytest

from fakejs.testkit.jwt import AUTH_CALLOUT_SUBJECT, Allow, AuthorizationRequest, CalloutService, Deny, Key
from tests.harness.cluster import interest_routed
from tests.harness.wait import WAIT

pytestmark = pytest.mark.cluster
ISSUER = Key(nkeys.PREFIX_BYTE_ACCOUNT)
CONFIG = """
no_auth_user: auth  # the cluster's start-up probes log in without credentials (one of auth_users)
accounts {
  AUTH { users: [ {user: auth, password: pwd} ] }
  APP {}
}
authorization {
  auth_callout { issuer: ISSUER, auth_users: [auth], account: AUTH }
}
""".replace("ISSUER", ISSUER.public_key)


def decide(request: AuthorizationRequest) -> Allow | Deny:
    if request.connect_opts.get("pass") == "secret":
        return Allow("APP", name="robert", pub_allow=["$SYS.REQ.USER.INFO"], sub_allow=["_INBOX.>"])
    return Deny("go away")


async def test_a_login_on_one_node_decided_by_a_service_on_the_other(make_cluster: Any, tmp_path: Any) -> None:
    path = tmp_path / "callout.conf"
    path.write_text(CONFIG)
    cluster = make_cluster(size=2, extra=["-c", str(path)])
    service = CalloutService(ISSUER, decide)
    service_nc = await nats.connect(cluster.url(0), user="auth", password="pwd")
    watcher = await nats.connect(cluster.url(1), user="auth", password="pwd")

    async def on_request(msg: Any) -> None:
        await msg.respond(service.answer(msg.data, msg.headers))

    await service_nc.subscribe(AUTH_CALLOUT_SUBJECT, cb=on_request)
    try:
        await interest_routed(watcher, service_nc)
        nc = await nats.connect(cluster.url(1), user="bob", password="secret", allow_reconnect=False)
        reply = await nc.request("$SYS.REQ.USER.INFO", b"", timeout=WAIT)
        await nc.close()
        with pytest.raises(nats.errors.Error, match="Authorization Violation"):
            await nats.connect(cluster.url(1), user="bob", password="nope", allow_reconnect=False)
        node_ids = [watcher._server_info["server_id"], service_nc._server_info["server_id"]]
    finally:
        await watcher.close()
        await service_nc.close()
    info = json.loads(reply.data)["data"]
    assert (info["user"], info["account"]) == ("robert", "APP")
    assert [request.server_id["id"] for request in service.requests] == [node_ids[0], node_ids[0]]
    assert node_ids[0] != node_ids[1]
