"""TLS on leaf links: the hub's ``leafnodes { tls }`` and a remote's ``tls {}`` (or ``tls://`` URL).

The hub sends its INFO in plain text (``tls_required``, ``tls_verify`` when
it asks for the leaf's certificate), then the leaf starts the handshake and
everything after it (CONNECT, interest, messages) is encrypted; with
``handshake_first`` on both ends the leaf starts the handshake at once and the
INFO comes over it.  A hub and a leaf of the same kind, and of mixed kinds:
the handshake is the contract.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import ssl
from dataclasses import replace
from pathlib import Path

import nats
import pytest

from fakejs.targets.cluster import free_port
from fakejs.testkit.certs import TestCertificates
from tests.harness.cluster import Inbox, interest_routed, requests_answered
from tests.harness.configured import configured_servers
from tests.harness.leafs import LeafSetup, hub_and_leaf
from tests.harness.monitoring import monitor
from tests.harness.wait import WAIT, eventually

pytestmark = pytest.mark.cluster

PAIRS = [("real", "fake"), ("fake", "real")]


def _hub_tls(certs: TestCertificates, verify: bool) -> str:
    verifying = ", verify: true" if verify else ""
    files = f'cert_file: "{certs.server_cert_file}", key_file: "{certs.server_key_file}", ca_file: "{certs.ca_file}"'
    return f"tls {{ {files} {verifying} }}"


def _remote_tls(certs: TestCertificates, client_certificate: bool) -> str:
    own = f'cert_file: "{certs.client_cert_file}", key_file: "{certs.client_key_file}",' if client_certificate else ""
    return f'tls {{ {own} ca_file: "{certs.ca_file}" }}'


def _setup(certs: TestCertificates, verify: bool, scheme: str = "nats") -> LeafSetup:
    return LeafSetup(
        hub_extra=_hub_tls(certs, verify),
        remote_extra=_remote_tls(certs, client_certificate=verify),
        scheme=scheme,
        jetstream=False,
    )


async def _traffic_both_ways(hub_url: str, leaf_url: str) -> None:
    hub_client, leaf_client = await nats.connect(hub_url), await nats.connect(leaf_url)
    try:
        for publisher, subscriber in ((hub_client, leaf_client), (leaf_client, hub_client)):
            subject, inbox = f"sealed.{secrets.token_hex(4)}", Inbox()
            await subscriber.subscribe(subject, cb=inbox.add)
            await interest_routed(publisher, subscriber)
            await publisher.publish(subject, b"x" * 70_000)  # several TLS records
            await publisher.flush()
            await eventually(lambda inbox=inbox: asyncio.sleep(0, inbox.payloads), what=subject)
            assert inbox.payloads == [b"x" * 70_000]
            await requests_answered(publisher, subscriber, f"svc.{secrets.token_hex(4)}")
    finally:
        await hub_client.close()
        await leaf_client.close()


@pytest.mark.parametrize("verify", [False, True], ids=["server-cert", "mutual"])
async def test_traffic_over_tls(target_kind: str, verify: bool, tmp_path: Path) -> None:
    certs = TestCertificates(tmp_path / "certs")
    async with hub_and_leaf(target_kind, target_kind, tmp_path, setup=_setup(certs, verify)) as (hub, leaf):
        await _traffic_both_ways(hub.url, leaf.url)


@pytest.mark.parametrize(("hub_kind", "leaf_kind"), PAIRS)
@pytest.mark.parametrize("verify", [False, True], ids=["server-cert", "mutual"])
async def test_traffic_over_tls_mixed(hub_kind: str, leaf_kind: str, verify: bool, tmp_path: Path) -> None:
    certs = TestCertificates(tmp_path / "certs")
    async with hub_and_leaf(hub_kind, leaf_kind, tmp_path, setup=_setup(certs, verify)) as (hub, leaf):
        await _traffic_both_ways(hub.url, leaf.url)


@pytest.mark.parametrize(("hub_kind", "leaf_kind"), [("fake", "fake"), *PAIRS])
async def test_a_tls_url_without_a_block(hub_kind: str, leaf_kind: str, tmp_path: Path) -> None:
    """``tls://`` and the hub's CA in the remote's block: the leaf starts TLS (the hub asks for it anyway)."""
    certs = TestCertificates(tmp_path / "certs")
    setup = _setup(certs, verify=False, scheme="tls")
    async with hub_and_leaf(hub_kind, leaf_kind, tmp_path, setup=setup) as (hub, leaf):
        await _traffic_both_ways(hub.url, leaf.url)


@pytest.mark.parametrize("verify", [False, True], ids=["server-cert", "mutual"])
async def test_the_hub_info_asks_for_tls(target_kind: str, verify: bool, tmp_path: Path) -> None:
    """The INFO comes in plain text with ``tls_required`` (and ``tls_verify``) after ``auth_required``."""
    certs, port = TestCertificates(tmp_path / "certs"), free_port()
    async with configured_servers(target_kind, tmp_path) as start:
        await start(f"leafnodes {{ port: {port}, {_hub_tls(certs, verify)} }}\n")
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            line = await asyncio.wait_for(reader.readline(), WAIT)
        finally:
            writer.close()
    info = json.loads(line[5:])
    keys = list(info)
    expected = ["auth_required", "tls_required", *(["tls_verify"] if verify else []), "max_payload"]
    assert keys[keys.index("auth_required") : keys.index("max_payload") + 1] == expected
    assert info["tls_required"] is True


async def test_varz_names_the_tls(target_kind: str, tmp_path: Path) -> None:
    """``/varz``'s ``leaf``: the port's TLS (a login time of the handshake's and a second more), each remote's."""
    certs = TestCertificates(tmp_path / "certs")
    setup = replace(_setup(certs, verify=True), monitor=True)
    async with hub_and_leaf(target_kind, target_kind, tmp_path, setup=setup) as (hub, leaf):
        hub_leaf, leaf_leaf = (await monitor(hub, "/varz"))["leaf"], (await monitor(leaf, "/varz"))["leaf"]
    assert isinstance(hub_leaf, dict) and isinstance(leaf_leaf, dict)
    assert list(hub_leaf) == [
        "host",
        "port",
        "auth_timeout",
        "tls_timeout",
        "tls_required",
        "tls_verify",
        "tls_cert_not_after",
    ]
    assert (hub_leaf["auth_timeout"], hub_leaf["tls_timeout"]) == (3, 2)
    assert leaf_leaf["remotes"][0]["tls_timeout"] == 2
    assert list(leaf_leaf["remotes"][0]) == ["local_account", "tls_timeout", "urls"]


def _first_setup(certs: TestCertificates) -> LeafSetup:
    """``handshake_first`` on the leaf port and on the remote: the TLS handshake before the hub's INFO."""
    files = f'cert_file: "{certs.server_cert_file}", key_file: "{certs.server_key_file}"'
    return LeafSetup(
        hub_extra=f"tls {{ {files}, handshake_first: true }}",
        remote_extra=f'tls {{ ca_file: "{certs.ca_file}", handshake_first: true }}',
        jetstream=False,
    )


async def test_traffic_with_the_handshake_first(target_kind: str, tmp_path: Path) -> None:
    certs = TestCertificates(tmp_path / "certs")
    async with hub_and_leaf(target_kind, target_kind, tmp_path, setup=_first_setup(certs)) as (hub, leaf):
        await _traffic_both_ways(hub.url, leaf.url)


@pytest.mark.parametrize(("hub_kind", "leaf_kind"), PAIRS)
async def test_traffic_with_the_handshake_first_mixed(hub_kind: str, leaf_kind: str, tmp_path: Path) -> None:
    certs = TestCertificates(tmp_path / "certs")
    async with hub_and_leaf(hub_kind, leaf_kind, tmp_path, setup=_first_setup(certs)) as (hub, leaf):
        await _traffic_both_ways(hub.url, leaf.url)


async def test_the_hub_greets_after_the_handshake(target_kind: str, tmp_path: Path) -> None:
    """With ``handshake_first`` the leaf port says nothing in plain text: a TLS client gets the INFO over TLS."""
    certs, port = TestCertificates(tmp_path / "certs"), free_port()
    files = f'cert_file: "{certs.server_cert_file}", key_file: "{certs.server_key_file}"'
    async with configured_servers(target_kind, tmp_path) as start:
        await start(f"leafnodes {{ port: {port}, tls {{ {files}, handshake_first: true }} }}\n")
        context = ssl.create_default_context(cafile=certs.ca_file)
        reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=context, server_hostname="localhost")
        try:
            line = await asyncio.wait_for(reader.readline(), WAIT)
        finally:
            writer.close()
    assert line.startswith(b"INFO ")
    assert json.loads(line[5:])["tls_required"] is True
