"""JetStream domains across a leaf connection: a hub (domain ``HUB``) and a leaf (domain ``LEAF``), each with JetStream.

A client on either side reaches the other side's JetStream through the
other domain's API prefix (``nc.jetstream(domain=...)``): ``$JS.API.INFO``
names that domain, a stream created there takes messages published on
this side and its PubAcks name the domain.  Without a domain a client
reaches its own server's JetStream only (the link carries no ``$JS.API``).
A stream mirrors, and a KV bucket is mirrored from, the other domain
through ``external { api: "$JS.<domain>.API" }``; when the other side goes
away the mirror keeps what it has and shows no error, only a growing
``active``.  Run with hub and leaf of
the same kind, then of mixed kinds (a real hub with a fakejs leaf and a
fakejs hub with a real leaf).
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

import nats
import nats.js.api as jsapi
import nats.js.errors as jserrors
import pytest
from nats.aio.client import Client
from nats.js.client import JetStreamContext

from tests.harness.leafs import hub_and_leaf
from tests.harness.targets import stop_target
from tests.harness.wait import WAIT, eventually

pytestmark = pytest.mark.cluster

DOMAINS = ("HUB", "LEAF")
KINDS = [("fake", "fake"), ("real", "real"), ("real", "fake"), ("fake", "real")]


async def _reachable(js: JetStreamContext) -> jsapi.AccountInfo:
    """The account info once the other side's domain API is known across the link."""

    async def attempt() -> jsapi.AccountInfo | None:
        try:
            return await js.account_info()
        except (nats.errors.NoRespondersError, jserrors.ServiceUnavailableError, nats.errors.TimeoutError):
            return None

    info = await eventually(attempt, lambda found: found is not None, what="the domain's $JS.API.INFO")
    assert info is not None
    return info


async def _messages(js: JetStreamContext, stream: str) -> int:
    return (await js.stream_info(stream)).state.messages


async def _reaches_the_other_domain(near: Client, far: Client, far_domain: str) -> None:
    """A client on ``near`` makes a stream in ``far_domain`` and publishes to it; the far side stores it."""
    remote = near.jetstream(domain=far_domain, timeout=WAIT)
    info = await _reachable(remote)
    assert info.domain == far_domain
    stream = f"S{secrets.token_hex(3)}"
    subject = f"{stream.lower()}.>"
    created = await remote.add_stream(name=stream, subjects=[subject], storage=jsapi.StorageType.MEMORY)
    assert created.config.name == stream
    own = far.jetstream(timeout=WAIT)
    await eventually(lambda: own.stream_info(stream), lambda found: found.config.name == stream, what="the stream")
    ack = await remote.publish(f"{stream.lower()}.one", b"1")
    assert (ack.stream, ack.seq, ack.domain) == (stream, 1, far_domain)
    assert await _messages(own, stream) == 1
    with pytest.raises(jserrors.NotFoundError):
        await near.jetstream(timeout=WAIT).stream_info(stream)


@pytest.mark.parametrize(("hub_kind", "leaf_kind"), KINDS)
async def test_hub_client_uses_the_leaf_domain(hub_kind: str, leaf_kind: str, tmp_path: Path) -> None:
    async with hub_and_leaf(hub_kind, leaf_kind, tmp_path, domains=DOMAINS) as (hub, leaf):
        hub_client, leaf_client = await nats.connect(hub.url), await nats.connect(leaf.url)
        assert (await hub_client.jetstream(timeout=WAIT).account_info()).domain == "HUB"
        await _reaches_the_other_domain(hub_client, leaf_client, "LEAF")
        await hub_client.close()
        await leaf_client.close()


@pytest.mark.parametrize(("hub_kind", "leaf_kind"), KINDS)
async def test_leaf_client_uses_the_hub_domain(hub_kind: str, leaf_kind: str, tmp_path: Path) -> None:
    async with hub_and_leaf(hub_kind, leaf_kind, tmp_path, domains=DOMAINS) as (hub, leaf):
        hub_client, leaf_client = await nats.connect(hub.url), await nats.connect(leaf.url)
        assert (await leaf_client.jetstream(timeout=WAIT).account_info()).domain == "LEAF"
        await _reaches_the_other_domain(leaf_client, hub_client, "HUB")
        await hub_client.close()
        await leaf_client.close()


@pytest.mark.slow
@pytest.mark.parametrize("target_kind_pair", KINDS)
async def test_stream_mirrored_across_domains(target_kind_pair: tuple[str, str], tmp_path: Path) -> None:
    """A leaf stream mirrors a hub stream through ``$JS.HUB.API``; messages published later follow."""
    async with hub_and_leaf(*target_kind_pair, tmp_path, domains=DOMAINS) as (hub, leaf):
        hub_client, leaf_client = await nats.connect(hub.url), await nats.connect(leaf.url)
        hub_js, leaf_js = hub_client.jetstream(timeout=WAIT), leaf_client.jetstream(timeout=WAIT)
        await _reachable(leaf_client.jetstream(domain="HUB", timeout=WAIT))
        await hub_js.add_stream(name="ORDERS", subjects=["orders.>"], storage=jsapi.StorageType.MEMORY)
        for index in range(3):
            await hub_js.publish(f"orders.{index}", str(index).encode())
        origin = jsapi.StreamSource(name="ORDERS", external=jsapi.ExternalStream(api="$JS.HUB.API"))
        await leaf_js.add_stream(name="COPY", mirror=origin, storage=jsapi.StorageType.MEMORY)
        await eventually(lambda: _messages(leaf_js, "COPY"), lambda count: count == 3, what="the mirrored messages")
        await hub_js.publish("orders.3", b"3", headers={"K": "v"})
        await eventually(lambda: _messages(leaf_js, "COPY"), lambda count: count == 4, what="the later message")
        last = await leaf_js.get_msg("COPY", 4)
        assert (last.subject, last.data, last.headers) == ("orders.3", b"3", {"K": "v"})
        info = json.loads((await leaf_client.request("$JS.API.STREAM.INFO.COPY", b"", timeout=WAIT)).data)
        assert info["mirror"]["external"] == {"api": "$JS.HUB.API", "deliver": ""}
        assert (info["mirror"]["name"], info["mirror"]["lag"]) == ("ORDERS", 0)
        await hub_client.close()
        await leaf_client.close()


@pytest.mark.slow
@pytest.mark.parametrize("target_kind_pair", KINDS)
async def test_kv_bucket_mirrored_into_the_leaf_domain(target_kind_pair: tuple[str, str], tmp_path: Path) -> None:
    """A hub bucket's stream mirrored into the leaf in the KV shape: nats-py reads the hub's keys and revisions there."""
    async with hub_and_leaf(*target_kind_pair, tmp_path, domains=DOMAINS) as (hub, leaf):
        hub_client, leaf_client = await nats.connect(hub.url), await nats.connect(leaf.url)
        hub_js, leaf_js = hub_client.jetstream(timeout=WAIT), leaf_client.jetstream(timeout=WAIT)
        await _reachable(leaf_client.jetstream(domain="HUB", timeout=WAIT))
        settings = await hub_js.create_key_value(bucket="CFG", history=5, storage=jsapi.StorageType.MEMORY)
        await settings.put("colour", b"red")
        await settings.put("colour", b"blue")
        await settings.put("size", b"9")
        origin = jsapi.StreamSource(name="KV_CFG", external=jsapi.ExternalStream(api="$JS.HUB.API"))
        await leaf_js.add_stream(
            name="KV_CFG_COPY",
            mirror=origin,
            storage=jsapi.StorageType.MEMORY,
            max_msgs_per_subject=5,
            allow_rollup_hdrs=True,
            deny_delete=True,
            allow_direct=True,
            mirror_direct=True,
        )
        await eventually(lambda: _messages(leaf_js, "KV_CFG_COPY"), lambda count: count == 3, what="the mirrored keys")
        last = await leaf_js.get_last_msg("KV_CFG_COPY", "$KV.CFG.colour")
        assert (last.data, last.seq) == (b"blue", 2)
        await hub_client.close()
        await leaf_client.close()


@pytest.mark.slow
@pytest.mark.parametrize("target_kind_pair", KINDS)
async def test_streams_and_a_bucket_sourced_across_domains(target_kind_pair: tuple[str, str], tmp_path: Path) -> None:
    """A leaf stream sources a hub stream and a hub KV bucket (``external { api, deliver }``), with its own messages."""
    async with hub_and_leaf(*target_kind_pair, tmp_path, domains=DOMAINS) as (hub, leaf):
        hub_client, leaf_client = await nats.connect(hub.url), await nats.connect(leaf.url)
        hub_js, leaf_js = hub_client.jetstream(timeout=WAIT), leaf_client.jetstream(timeout=WAIT)
        await _reachable(leaf_client.jetstream(domain="HUB", timeout=WAIT))
        await hub_js.add_stream(name="ORDERS", subjects=["orders.>"], storage=jsapi.StorageType.MEMORY)
        await hub_js.publish("orders.1", b"1")
        bucket = await hub_js.create_key_value(bucket="CFG", storage=jsapi.StorageType.MEMORY)
        await bucket.put("colour", b"red")
        from_hub = jsapi.ExternalStream(api="$JS.HUB.API", deliver="hub.deliver")
        sources = [
            jsapi.StreamSource(name="ORDERS", external=from_hub),
            jsapi.StreamSource(name="KV_CFG", external=jsapi.ExternalStream(api="$JS.HUB.API")),
        ]
        await leaf_js.add_stream(name="ALL", subjects=["local.>"], sources=sources, storage=jsapi.StorageType.MEMORY)
        await leaf_js.publish("local.1", b"here")
        await eventually(lambda: _messages(leaf_js, "ALL"), lambda count: count == 3, what="the sourced messages")
        await hub_js.publish("orders.2", b"2")
        await bucket.put("colour", b"blue")
        await eventually(lambda: _messages(leaf_js, "ALL"), lambda count: count == 5, what="the later messages")
        last = await leaf_js.get_last_msg("ALL", "$KV.CFG.colour")
        assert last.data == b"blue"
        info = json.loads((await leaf_client.request("$JS.API.STREAM.INFO.ALL", b"", timeout=WAIT)).data)
        by_name = {source["name"]: source for source in info["sources"]}
        assert by_name["ORDERS"]["external"] == {"api": "$JS.HUB.API", "deliver": "hub.deliver"}
        assert by_name["KV_CFG"]["external"] == {"api": "$JS.HUB.API", "deliver": ""}
        assert (by_name["ORDERS"]["lag"], by_name["KV_CFG"]["lag"]) == (0, 0)
        await hub_client.close()
        await leaf_client.close()


@pytest.mark.slow
@pytest.mark.parametrize("target_kind_pair", [("fake", "fake"), ("real", "real")])
async def test_a_mirror_of_a_hub_that_went_away_shows_no_error(
    target_kind_pair: tuple[str, str], tmp_path: Path
) -> None:
    """The hub stops: the leaf's mirror keeps what it has, its ``active`` grows, no ``error`` in its info."""
    async with hub_and_leaf(*target_kind_pair, tmp_path, domains=DOMAINS) as (hub, leaf):
        hub_client, leaf_client = await nats.connect(hub.url), await nats.connect(leaf.url)
        hub_js, leaf_js = hub_client.jetstream(timeout=WAIT), leaf_client.jetstream(timeout=WAIT)
        await _reachable(leaf_client.jetstream(domain="HUB", timeout=WAIT))
        await hub_js.add_stream(name="ORDERS", subjects=["orders.>"], storage=jsapi.StorageType.MEMORY)
        await hub_js.publish("orders.1", b"1")
        origin = jsapi.StreamSource(name="ORDERS", external=jsapi.ExternalStream(api="$JS.HUB.API"))
        await leaf_js.add_stream(name="COPY", mirror=origin, storage=jsapi.StorageType.MEMORY)
        await eventually(lambda: _messages(leaf_js, "COPY"), lambda count: count == 1, what="the mirrored message")
        await hub_client.close()
        await stop_target(hub)

        async def mirror() -> dict[str, Any]:
            reply = await leaf_client.request("$JS.API.STREAM.INFO.COPY", b"", timeout=WAIT)
            return dict(json.loads(reply.data)["mirror"])

        seen = await eventually(mirror, lambda found: found["active"] > 2_000_000_000, what="two seconds inactive")
        assert "error" not in seen and seen["lag"] == 0
        assert await _messages(leaf_js, "COPY") == 1
        await leaf_client.close()
