"""Client certificate subjects on both targets: how /connz prints them and which user ``verify_and_map`` picks.

The subjects carry what trustme cannot write -- domain components, an
attribute Go prints as a dotted OID, several RDNs of one kind -- so that
the Go string forms (``Subject.String()`` for /connz,
``ToRDNSequence().String()`` plus the domain components for the mapping)
and nats-server's DN matching are checked against the real server.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from fakejs.testkit.certs import CertificateFiles, TestCertificates
from tests.harness.configured import Start, configured_servers
from tests.harness.targets import Settings
from tests.harness.tls import closed, connect, connz, mapped_config, refused

DC = "0.9.2342.19200300.100.1.25"
UID = "0.9.2342.19200300.100.1.1"
CN, ORG, OU = "2.5.4.3", "2.5.4.10", "2.5.4.11"
# Encoded order: DC=com, DC=example, O=Acme, CN=dc user
WITH_DC = [[(DC, "com")], [(DC, "example")], [(ORG, "Acme")], [(CN, "dc user")]]
# A UID attribute: nats-server's DN reader does not know it, so only the string forms can map it.
WITH_UID = [[(DC, "com")], [(DC, "example")], [(CN, "uid user")], [(UID, "u-1")]]


@pytest.fixture
def certs(tmp_path: Path) -> TestCertificates:
    return TestCertificates(tmp_path / "certs")


@pytest.fixture
async def server(target_kind: str, tmp_path: Path) -> AsyncIterator[Start]:
    async with configured_servers(target_kind, tmp_path, Settings(jetstream=False, monitor=True)) as start:
        yield start


async def shown_subject(server: Start, certs: TestCertificates, files: CertificateFiles) -> str:
    target = await server(certs.config_block(verify=True))
    nc = await connect(target, certs.client_ssl_context(client=files))
    await nc.flush(timeout=3)
    try:
        return str((await connz(target, "?auth=true"))["connections"][0]["tls_peer_certs"][0]["subject"])
    finally:
        await nc.close()


@pytest.mark.parametrize(
    ("subject", "shown"),
    [
        (
            WITH_DC,
            "CN=dc user,O=Acme,0.9.2342.19200300.100.1.25=example,0.9.2342.19200300.100.1.25=com",
        ),
        ([[(ORG, "Acme")], [(OU, "Eng")], [(OU, "Ops")], [(CN, "a+b, c")]], "CN=a\\+b\\, c,OU=Eng+OU=Ops,O=Acme"),
        ([[(CN, "x")], [(UID, "user+1@host")]], "CN=x,0.9.2342.19200300.100.1.1=user\\+1@host"),
    ],
    ids=["domain-components", "escapes-and-merged-ou", "dotted-oid"],
)
async def test_connz_prints_the_subject_as_go(
    server: Start, certs: TestCertificates, subject: list[list[tuple[str, str]]], shown: str
) -> None:
    files = certs.issue_client_with_subject("subject", subject)
    assert await shown_subject(server, certs, files) == shown


@pytest.mark.parametrize(
    ("subject", "user"),
    [
        (WITH_DC, "CN=dc user,O=Acme,DC=example,DC=com"),  # the DN as encoded, last RDN first
        (WITH_DC, "DC=com,O=Acme,DC=example,CN=dc user"),  # the same RDNs reordered
        (WITH_UID, "CN=uid user,DC=com,DC=example"),  # Go's string and the domain components
        (WITH_UID, "CN=uid user"),  # Go's string alone
    ],
    ids=["dn", "dn-reordered", "string-with-dcs", "string"],
)
async def test_verify_and_map_by_subject_forms(
    server: Start, certs: TestCertificates, subject: list[list[tuple[str, str]]], user: str
) -> None:
    files = certs.issue_client_with_subject("mapped", subject)
    target = await server(mapped_config(certs, f'    {{ user: "{user}" }}'))
    assert not await refused(target, certs.client_ssl_context(client=files))
    assert (await closed(target))[0]["authorized_user"] == user


async def test_verify_and_map_needs_all_dn_attributes(server: Start, certs: TestCertificates) -> None:
    """A subject with an attribute the DN reader does not know is not matched as a DN (UID here)."""
    files = certs.issue_client_with_subject("mapped", WITH_UID)
    target = await server(mapped_config(certs, '    { user: "UID=u-1,CN=uid user,DC=example,DC=com" }'))
    assert await refused(target, certs.client_ssl_context(client=files))
