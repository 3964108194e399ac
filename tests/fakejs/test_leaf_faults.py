"""Leaf links dropped and restored on cue: the ``drop_leafs``/``restore_leafs`` actions and the ``leaf.connect`` hook point.

What a client sees is what it sees when a leaf link breaks between
nats-servers: the interest across the link is withdrawn (a request gets
no responders), the other domain's JetStream API is unreachable, a
mirror of the other domain lags, and all of it comes back once the leaf
has dialled its hub again.
"""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path
from typing import Any

import nats
import nats.js.api as jsapi
import nats.js.errors as jserrors
import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js.client import JetStreamContext

from fakejs.targets import FakeJS, FakeOnly
from fakejs.testkit.scenarios import load_scenario_text
from fakejs.testkit.schema import SchemaError
from tests.harness.leafs import hub_and_leaf
from tests.harness.targets import Target
from tests.harness.wait import WAIT, eventually

DOMAINS = ("HUB", "LEAF")


def _control(target: Target) -> Any:
    server = getattr(target, "server", None)
    assert server is not None
    return server.control


def _leafs_up(target: Target) -> int:
    server = getattr(target, "server", None)
    assert server is not None and server.broker.leafs is not None
    return int(server.broker.leafs.num_leafs)


ANSWERED, NO_RESPONDERS, NO_ANSWER = "answered", "no responders", "no answer"


async def _outcome(requester: Client, subject: str) -> str:
    """What one request gets (one sent as the link goes down is lost with it: no answer)."""
    try:
        await requester.request(subject, b"ping", timeout=1.0)
    except nats.errors.NoRespondersError:
        return NO_RESPONDERS
    except nats.errors.TimeoutError:
        return NO_ANSWER
    return ANSWERED


async def _answered(requester: Client, subject: str) -> bool:
    return await _outcome(requester, subject) == ANSWERED


async def _reachable(js: JetStreamContext) -> bool:
    """Whether the domain's API answers (nats-py reports no responders to its API as unavailable)."""
    try:
        await js.account_info()
    except (nats.errors.NoRespondersError, jserrors.ServiceUnavailableError):
        return False
    return True


async def _service(nc: Client, subject: str) -> None:
    async def answer(msg: Msg) -> None:
        await msg.respond(b"pong")

    await nc.subscribe(subject, cb=answer)
    await nc.flush()


@pytest.mark.parametrize("side", ["hub", "leaf"])
async def test_a_dropped_link_withdraws_interest_until_restored(tmp_path: Path, side: str) -> None:
    async with hub_and_leaf("fake", "fake", tmp_path) as (hub, leaf):
        hub_client, leaf_client = await nats.connect(hub.url), await nats.connect(leaf.url)
        subject = f"svc.{secrets.token_hex(4)}"
        await _service(leaf_client, subject)
        await eventually(lambda: _answered(hub_client, subject), what="the service across the link")
        dropping = hub if side == "hub" else leaf
        result = _control(dropping).run("drop_leafs", {"until_restored": True})
        assert len(result["dropped"]) == 1 and result["until_restored"] is True
        await eventually(lambda: _outcome(hub_client, subject), lambda got: got == NO_RESPONDERS, what="no responders")
        restored = _control(dropping).run("restore_leafs")
        assert len(restored["restored"]) == 1
        await eventually(lambda: _answered(hub_client, subject), what="the service again")
        assert _leafs_up(hub) == _leafs_up(leaf) == 1
        await hub_client.close()
        await leaf_client.close()


async def test_a_drop_without_until_restored_redials_at_once(tmp_path: Path) -> None:
    async with hub_and_leaf("fake", "fake", tmp_path) as (hub, leaf):
        hub_client, leaf_client = await nats.connect(hub.url), await nats.connect(leaf.url)
        subject = f"svc.{secrets.token_hex(4)}"
        await _service(leaf_client, subject)
        await eventually(lambda: _answered(hub_client, subject), what="the service across the link")
        first = _control(hub).run("drop_leafs")["dropped"]
        await eventually(lambda: _answered(hub_client, subject), what="the service after the redial")
        server = getattr(hub, "server", None)
        assert server is not None and server.broker.leafs is not None
        assert [link.lid for link in server.broker.leafs.links if link.up] != first
        await hub_client.close()
        await leaf_client.close()


async def test_drop_leafs_matches_the_remote_name(tmp_path: Path) -> None:
    async with hub_and_leaf("fake", "fake", tmp_path) as (hub, leaf):
        await eventually(lambda: asyncio.sleep(0, _leafs_up(hub)), what="the link up")
        assert _control(hub).run("drop_leafs", {"remote": "no-such-server"})["dropped"] == []
        with pytest.raises(SchemaError, match='field "remote" of action/drop_leafs'):
            _control(hub).run("drop_leafs", {"remote": 7})
        assert _leafs_up(hub) == 1
        leaf_server = getattr(leaf, "server", None)
        assert leaf_server is not None
        assert len(_control(hub).run("drop_leafs", {"remote": leaf_server.broker.name})["dropped"]) == 1


async def test_the_other_domain_and_a_mirror_of_it_wait_for_the_link(tmp_path: Path) -> None:
    async with hub_and_leaf("fake", "fake", tmp_path, domains=DOMAINS) as (hub, leaf):
        hub_client, leaf_client = await nats.connect(hub.url), await nats.connect(leaf.url)
        hub_js, leaf_js = hub_client.jetstream(timeout=WAIT), leaf_client.jetstream(timeout=WAIT)
        hub_api = leaf_client.jetstream(domain="HUB", timeout=WAIT)
        await eventually(lambda: _reachable(hub_api), what="the hub's domain")
        await hub_js.add_stream(name="ORDERS", subjects=["orders.>"], storage=jsapi.StorageType.MEMORY)
        await hub_js.publish("orders.1", b"1")
        origin = jsapi.StreamSource(name="ORDERS", external=jsapi.ExternalStream(api="$JS.HUB.API"))
        await leaf_js.add_stream(name="COPY", mirror=origin, storage=jsapi.StorageType.MEMORY)

        async def copied() -> int:
            return (await leaf_js.stream_info("COPY")).state.messages

        await eventually(copied, lambda count: count == 1, what="the first message mirrored")
        _control(leaf).run("drop_leafs", {"until_restored": True})
        assert not await _reachable(hub_api)
        await hub_js.publish("orders.2", b"2")
        await hub_js.publish("orders.3", b"3")
        assert await copied() == 1
        _control(leaf).run("restore_leafs")
        await eventually(copied, lambda count: count == 3, what="the mirror caught up")
        await hub_client.close()
        await leaf_client.close()


async def test_a_scenario_step_drops_the_link(tmp_path: Path) -> None:
    """A scenario's step at ``leaf.connect`` drops the first connection: the leaf dials again and comes up."""
    text = 'name = "leaf-flap"\n[[steps]]\non = "leaf.connect"\nmatch = { side = "hub" }\ndo = "drop"\n'
    scenario = load_scenario_text(text)
    assert scenario.steps[0].on == "leaf.connect"
    async with hub_and_leaf("fake", "fake", tmp_path) as (hub, leaf):
        control = _control(hub)
        control.run("drop_leafs")
        control.start_scenario(text=text)
        await eventually(lambda: _fired(control), what="the step fired")
        leaf_client, hub_client = await nats.connect(leaf.url), await nats.connect(hub.url)
        subject = f"svc.{secrets.token_hex(4)}"
        await _service(leaf_client, subject)
        await eventually(lambda: _answered(hub_client, subject), what="the link up after the step")
        await hub_client.close()
        await leaf_client.close()


async def _fired(control: Any) -> bool:
    return any(entry.get("point") == "leaf.connect" for entry in control.faults.fired_log)


async def test_the_leaf_dials_again_after_the_hub_restarts(tmp_path: Path) -> None:
    """The hub goes down for a while (its ``restart`` action): the leaf redials until it is back, interest returns."""
    async with hub_and_leaf("fake", "fake", tmp_path) as (hub, leaf):
        leaf_client = await nats.connect(leaf.url)
        subject = f"svc.{secrets.token_hex(4)}"
        await _service(leaf_client, subject)
        await eventually(lambda: asyncio.sleep(0, _leafs_up(leaf)), what="the link up")
        _control(hub).run("restart", {"down_for": 0.3})
        await eventually(lambda: asyncio.sleep(0, _leafs_up(leaf)), lambda up: up == 0, what="the link down")
        hub_client = await _connect_when_back(hub.url)
        await eventually(lambda: _answered(hub_client, subject), what="the service after the hub's restart")
        assert _leafs_up(leaf) == 1
        await hub_client.close()
        await leaf_client.close()


async def _connect_when_back(url: str) -> Client:
    async def attempt() -> Client | None:
        try:
            return await nats.connect(url, allow_reconnect=False, connect_timeout=1)
        except (OSError, nats.errors.NoServersError):
            return None

    client = await eventually(attempt, lambda found: found is not None, what="the hub back")
    assert client is not None
    return client


def test_leaf_url_needs_a_leaf_port() -> None:
    """The handle's ``leaf_url`` names the leaf port, and refuses a server without one."""
    with_port = FakeJS(config="port: -1\nleafnodes { port: -1 }").start()
    without = FakeJS().start()
    try:
        assert with_port.leaf_url.startswith("nats://127.0.0.1:")
        assert with_port.state()["leafs"] == []
        with pytest.raises(FakeOnly, match="no leaf port"):
            _ = without.leaf_url
    finally:
        with_port.stop()
        without.stop()
