"""A JetStream domain (``jetstream { domain: HUB }``): the API under ``$JS.HUB.API.>`` and the domain in replies.

nats-server maps the domain's API prefix onto the account's ``$JS.API.>``
and names the domain in INFO, ``$JS.API.INFO``, PubAcks, stream info (not
in a create reply), stream lists and the API audit advisory; clients such
as ``nc.jetstream(domain=...)`` reach JetStream only through the prefix.
"""

from __future__ import annotations

import json
from typing import Any

import nats
import pytest

from tests.harness.monitoring import fetch
from tests.harness.raw import RawClient
from tests.harness.targets import Settings, Target
from tests.harness.wait import WAIT
from tests.harness.wire import Frame, Wire

DOMAIN = "HUB"
SETTINGS = Settings(jetstream_domain=DOMAIN)
STREAM = json.dumps({"name": "S", "subjects": ["s.>"], "storage": "memory"}).encode()


class Requester(Wire):
    """A raw connection with one reply subscription: send a request, get the one frame answering it."""

    async def start(self) -> None:
        await self.send(b"SUB _R.> 1\r\n")
        await self.ping()

    async def request(self, subject: str, body: bytes = b"") -> Frame:
        before = len(self.frames)
        await self.send(b"PUB %s _R.x %d\r\n%s\r\n" % (subject.encode(), len(body), body))
        await self.until(lambda: len(self.frames) > before, f"a reply to {subject}")
        return self.frames[before]


async def _requester(target: Target) -> Requester:
    wire: Requester = await Requester.open(target)
    await wire.start()
    return wire


def _keys(frame: Frame) -> list[str]:
    return list(json.loads(frame.payload))


async def test_info_names_the_domain_where_nats_server_puts_it(make_target: Any) -> None:
    target = await make_target(SETTINGS)
    wire = await _requester(target)
    info = await _info(target)
    keys = list(info)
    assert info["domain"] == DOMAIN
    assert keys.index("client_ip") < keys.index("domain") < keys.index("api_lvl")
    await wire.close()


async def _info(target: Target) -> dict[str, Any]:
    client = await RawClient.connect(target.host, target.port)
    line = await client.read_until(b"\r\n")
    await client.close()
    return json.loads(line.split(b" ", 1)[1])


async def test_api_answers_under_the_domain_prefix_and_the_plain_one(make_target: Any) -> None:
    target = await make_target(SETTINGS)
    wire = await _requester(target)
    for subject in ("$JS.API.INFO", f"$JS.{DOMAIN}.API.INFO"):
        reply = json.loads((await wire.request(subject)).payload)
        assert reply["type"] == "io.nats.jetstream.api.v1.account_info_response"
        assert reply["domain"] == DOMAIN
        assert list(reply)[-2:] == ["domain", "api"]
    await wire.close()


async def test_pub_ack_stream_info_and_list_name_the_domain_create_does_not(make_target: Any) -> None:
    target = await make_target(SETTINGS)
    wire = await _requester(target)
    created = await wire.request(f"$JS.{DOMAIN}.API.STREAM.CREATE.S", STREAM)
    assert "domain" not in json.loads(created.payload)
    ack = await wire.request("s.x", b"hi")
    assert ack.payload == b'{"stream":"S","domain":"HUB","seq":1}'
    info = await wire.request(f"$JS.{DOMAIN}.API.STREAM.INFO.S")
    keys = _keys(info)
    assert keys.index("state") < keys.index("domain") < keys.index("cluster") < keys.index("ts")
    listed = json.loads((await wire.request("$JS.API.STREAM.LIST")).payload)
    assert listed["streams"][0]["domain"] == DOMAIN
    updated = json.loads((await wire.request("$JS.API.STREAM.UPDATE.S", STREAM)).payload)
    assert updated["domain"] == DOMAIN
    await wire.close()


async def test_no_responders_names_the_mapped_subject(make_target: Any) -> None:
    target = await make_target(SETTINGS)
    wire = await _requester(target)
    await wire.request(f"$JS.{DOMAIN}.API.STREAM.CREATE.S", STREAM)
    mapped = await wire.request(f"$JS.{DOMAIN}.API.DIRECT.GET.S", b'{"seq":1}')
    assert mapped.status == "503"
    assert mapped.headers()["Nats-Subject"] == "$JS.API.DIRECT.GET.S"
    other = await wire.request("$JS.ELSEWHERE.API.INFO")
    assert other.status == "503"
    assert other.headers()["Nats-Subject"] == "$JS.ELSEWHERE.API.INFO"
    await wire.close()


async def test_without_a_domain_the_prefix_reaches_nobody(make_target: Any) -> None:
    target = await make_target()
    wire = await _requester(target)
    reply = await wire.request(f"$JS.{DOMAIN}.API.INFO")
    assert reply.status == "503"
    assert "domain" not in json.loads((await wire.request("$JS.API.INFO")).payload)
    assert "domain" not in await _info(target)
    await wire.close()


async def test_a_client_bound_to_the_domain_uses_streams_consumers_and_kv(make_target: Any) -> None:
    target = await make_target(SETTINGS)
    nc = await nats.connect(target.url)
    try:
        js = nc.jetstream(domain=DOMAIN)
        await js.add_stream(name="S", subjects=["s.>"])
        ack = await js.publish("s.a", b"one")
        assert (ack.stream, ack.seq, ack.domain) == ("S", 1, DOMAIN)
        account = await js.account_info()
        assert account.domain == DOMAIN
        sub = await js.pull_subscribe("s.a", durable="d", stream="S")
        (msg,) = await sub.fetch(1, timeout=WAIT)
        assert msg.data == b"one"
        await msg.ack_sync()
        kv = await js.create_key_value(bucket="B")
        await kv.put("k", b"v")
        assert (await kv.get("k")).value == b"v"
        with pytest.raises(nats.js.errors.ServiceUnavailableError):  # no responders, as nats-py words it
            await nc.jetstream(domain="ELSEWHERE").account_info()
    finally:
        await nc.close()


async def test_monitoring_shows_the_domain(make_target: Any) -> None:
    target = await make_target(SETTINGS.with_(monitor=True))
    _, _, body = await fetch(target.http_port, "/jsz")
    assert json.loads(body)["config"]["domain"] == DOMAIN
    _, _, body = await fetch(target.http_port, "/varz")
    assert json.loads(body)["jetstream"]["config"]["domain"] == DOMAIN
