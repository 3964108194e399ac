"""Operator (JWT) mode: what an account JWT's exports and imports let through, as nats-server applies them.

Each test mints an exporting and an importing account (public exports,
``token_req`` exports with activation tokens, ``account_token_position``),
starts a server of its kind with them preloaded, and checks what reaches
the importer's clients.  A message that must not arrive is checked with a
marker: the importer's own message on the same subject, published after
the exporter's was flushed, must be the first one its subscriber gets.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import nats
import pytest
from nats.errors import NoRespondersError

from fakejs.testkit.jwt import Account, Operator
from tests.harness.operator import StartOperator, operator_start_fixture
from tests.harness.targets import Target
from tests.harness.wait import WAIT, eventually

start = operator_start_fixture()


@pytest.fixture
def operator() -> Operator:
    return Operator("O")


@asynccontextmanager
async def client(target: Target, account: Account, tmp_path: Path, name: str) -> AsyncIterator[Any]:
    """A nats-py client logged in as a new user of ``account``."""
    creds = account.user(name).write_creds(tmp_path / f"{name}.creds")
    nc = await nats.connect(target.url, user_credentials=creds, allow_reconnect=False)
    try:
        yield nc
    finally:
        await nc.close()


async def streamed(target: Target, exporter: Account, importer: Account, tmp_path: Path, sent: str, seen: str) -> bytes:
    """The first message the importer's subscriber on ``seen`` gets after the exporter publishes on ``sent``.

    ``b"marker"`` when the exporter's message did not come through.
    """
    async with (
        client(target, importer, tmp_path, "reader") as reader,
        client(target, exporter, tmp_path, "writer") as writer,
    ):
        sub = await reader.subscribe(seen)
        await reader.flush()
        await writer.publish(sent, b"exported")
        await writer.flush()
        await reader.publish(seen, b"marker")
        return bytes((await sub.next_msg(timeout=WAIT)).data)


def stream_import(exporter: Account, subject: str, **fields: Any) -> dict[str, Any]:
    return {"type": "stream", "account": exporter.public_key, "subject": subject, **fields}


def service_import(exporter: Account, subject: str, **fields: Any) -> dict[str, Any]:
    return {"type": "service", "account": exporter.public_key, "subject": subject, **fields}


@pytest.mark.parametrize(
    ("exported", "imported", "sent", "seen", "first"),
    [
        pytest.param("orders.>", {"subject": "orders.>"}, "orders.new", "orders.new", b"exported", id="reaches"),
        pytest.param(
            "orders.>", {"subject": "orders.>", "to": "from"}, "orders.new", "from.orders.new", b"exported", id="to"
        ),
        pytest.param(
            "orders.*",
            {"subject": "orders.*", "local_subject": "mine.$1"},
            "orders.new",
            "mine.new",
            b"exported",
            id="local_subject",
        ),
        pytest.param(
            "orders.>", {"subject": "invoices.>"}, "invoices.new", "invoices.new", b"marker", id="not_exported"
        ),
    ],
)
async def test_a_public_stream_export_and_its_import(
    start: StartOperator,
    operator: Operator,
    tmp_path: Path,
    exported: str,
    imported: dict[str, str],
    sent: str,
    seen: str,
    first: bytes,
) -> None:
    """The import's ``to`` is a prefix, its ``local_subject`` maps the exported one; a subject not exported stays out."""
    system = operator.account("SYS")
    exporter = operator.account("EXP", exports=[{"type": "stream", "subject": exported}])
    importer = operator.account("IMP", imports=[stream_import(exporter, **imported)])
    target = await start(operator, system, exporter, importer)
    assert await streamed(target, exporter, importer, tmp_path, sent, seen) == first


async def test_an_import_from_an_unknown_account_is_left_out(
    start: StartOperator, operator: Operator, tmp_path: Path
) -> None:
    system, stranger = operator.account("SYS"), operator.account("STRANGER")
    exporter = operator.account("EXP", exports=[{"type": "stream", "subject": "orders.>"}])
    imports = [stream_import(stranger, "news.>"), stream_import(exporter, "orders.>")]
    importer = operator.account("IMP", imports=imports)
    target = await start(operator, system, exporter, importer)
    assert await streamed(target, exporter, importer, tmp_path, "orders.new", "orders.new") == b"exported"


# -- private exports: activation tokens -----------------------------------------------


PRIVATE_STREAM = {"type": "stream", "subject": "orders.>", "token_req": True}


async def test_a_private_stream_needs_an_activation_token(
    start: StartOperator, operator: Operator, tmp_path: Path
) -> None:
    system = operator.account("SYS")
    exporter = operator.account("EXP", exports=[PRIVATE_STREAM])
    importer = operator.account("IMP", imports=[stream_import(exporter, "orders.>")])
    target = await start(operator, system, exporter, importer)
    assert await streamed(target, exporter, importer, tmp_path, "orders.new", "orders.new") == b"marker"


async def test_an_activation_token_opens_a_private_stream(
    start: StartOperator, operator: Operator, tmp_path: Path
) -> None:
    system = operator.account("SYS")
    exporter = operator.account("EXP", exports=[PRIVATE_STREAM])
    importer = operator.account("IMP")
    importer.imports.append(stream_import(exporter, "orders.new", token=exporter.activation(importer, "orders.>")))
    target = await start(operator, system, exporter, importer)
    assert await streamed(target, exporter, importer, tmp_path, "orders.new", "orders.new") == b"exported"


async def test_an_activation_token_from_a_signing_key(start: StartOperator, operator: Operator, tmp_path: Path) -> None:
    system = operator.account("SYS")
    exporter = operator.account("EXP", exports=[PRIVATE_STREAM])
    importer = operator.account("IMP")
    token = exporter.activation(importer, "orders.>", signer=exporter.signing_key())
    importer.imports.append(stream_import(exporter, "orders.>", token=token))
    target = await start(operator, system, exporter, importer)
    assert await streamed(target, exporter, importer, tmp_path, "orders.new", "orders.new") == b"exported"


@pytest.mark.parametrize("flaw", ["expired", "revoked"])
async def test_an_expired_or_revoked_activation_keeps_the_stream_private(
    start: StartOperator, operator: Operator, tmp_path: Path, flaw: str
) -> None:
    system = operator.account("SYS")
    importer = operator.account("IMP")
    exporter = operator.account("EXP", exports=[PRIVATE_STREAM])
    options: dict[str, Any] = {"expires": -10} if flaw == "expired" else {}
    token = exporter.activation(importer, "orders.>", **options)
    if flaw == "revoked":
        exporter.exports[0]["revocations"] = {importer.public_key: int(exporter.now()) + 5}
    importer.imports.append(stream_import(exporter, "orders.>", token=token))
    target = await start(operator, system, exporter, importer)
    assert await streamed(target, exporter, importer, tmp_path, "orders.new", "orders.new") == b"marker"


async def test_an_account_token_position_lets_in_the_account_named(
    start: StartOperator, operator: Operator, tmp_path: Path
) -> None:
    system = operator.account("SYS")
    exporter = operator.account("EXP", exports=[{"type": "stream", "subject": "to.*.>", "account_token_position": 2}])
    importer, other = operator.account("IMP"), operator.account("OTHER")
    importer.imports.append(stream_import(exporter, f"to.{importer.public_key}.>"))
    other.imports.append(stream_import(exporter, f"to.{importer.public_key}.>"))
    target = await start(operator, system, exporter, importer, other)
    sent = f"to.{importer.public_key}.news"
    assert await streamed(target, exporter, importer, tmp_path, sent, sent) == b"exported"
    assert await streamed(target, exporter, other, tmp_path, sent, sent) == b"marker"


# -- services -----------------------------------------------------------------------


async def requested(
    target: Target, exporter: Account, importer: Account, tmp_path: Path, served: str, asked: str
) -> Any:
    """The importer's request on ``asked`` answered by the exporter's responder on ``served``: its reply, or None
    when nobody answered (no responders)."""
    async with (
        client(target, exporter, tmp_path, "server") as server,
        client(target, importer, tmp_path, "asker") as asker,
    ):

        async def respond(msg: Any) -> None:
            await msg.respond(b"answer to " + msg.subject.encode())

        await server.subscribe(served, cb=respond)
        await server.flush()
        try:
            return (await asker.request(asked, b"q", timeout=WAIT)).data
        except NoRespondersError:
            return None


@pytest.mark.parametrize(
    ("imported", "asked", "answered"),
    [
        pytest.param({"subject": "help.me"}, "help.me", b"answer to help.me", id="answers"),
        pytest.param({"subject": "ask", "to": "help.desk"}, "ask", b"answer to help.desk", id="to"),
        pytest.param(
            {"subject": "help.desk", "local_subject": "ask"}, "ask", b"answer to help.desk", id="local_subject"
        ),
    ],
)
async def test_a_public_service_export_and_its_import(
    start: StartOperator, operator: Operator, tmp_path: Path, imported: dict[str, str], asked: str, answered: bytes
) -> None:
    """The import's ``to`` and its ``local_subject`` each make the importer's subject the exporter's."""
    system = operator.account("SYS")
    exporter = operator.account("EXP", exports=[{"type": "service", "subject": "help.>"}])
    importer = operator.account("IMP", imports=[service_import(exporter, **imported)])
    target = await start(operator, system, exporter, importer)
    assert await requested(target, exporter, importer, tmp_path, "help.>", asked) == answered


async def test_a_private_service_with_and_without_a_token(
    start: StartOperator, operator: Operator, tmp_path: Path
) -> None:
    system = operator.account("SYS")
    exporter = operator.account("EXP", exports=[{"type": "service", "subject": "help.>", "token_req": True}])
    importer, other = operator.account("IMP"), operator.account("OTHER")
    token = exporter.activation(importer, "help.>", service=True)
    importer.imports.append(service_import(exporter, "help.me", token=token))
    other.imports.append(service_import(exporter, "help.me"))
    target = await start(operator, system, exporter, importer, other)
    assert await requested(target, exporter, importer, tmp_path, "help.>", "help.me") == b"answer to help.me"
    assert await requested(target, exporter, other, tmp_path, "help.>", "help.me") is None


@pytest.mark.parametrize(
    "flaw", ["for another account", "for another subject", "of the other kind", "signed by a stranger"]
)
async def test_a_token_that_does_not_fit_its_import_makes_the_account_invalid(
    start: StartOperator, operator: Operator, tmp_path: Path, flaw: str
) -> None:
    """nats-io/jwt's validation of the account's imports fails: its users cannot log in, the other accounts can."""
    system, stranger = operator.account("SYS"), operator.account("STRANGER")
    importer = operator.account("IMP")
    exporter = operator.account("EXP", exports=[PRIVATE_STREAM])
    subject = "invoices.>" if flaw == "for another subject" else "orders.>"
    to = stranger if flaw == "for another account" else importer
    issuer = stranger if flaw == "signed by a stranger" else exporter
    token = issuer.activation(to, subject, service=flaw == "of the other kind")
    importer.imports.append(stream_import(exporter, "orders.>", token=token))
    target = await start(operator, system, exporter, importer)
    with pytest.raises(nats.errors.Error, match="Authorization Violation"):
        async with client(target, importer, tmp_path, "refused"):
            pass
    async with client(target, exporter, tmp_path, "served") as served:
        assert await served.flush() is None


async def test_a_stream_import_ends_when_its_activation_expires(
    start: StartOperator, operator: Operator, tmp_path: Path
) -> None:
    """The server drops the import at the token's ``exp``; nats-server finds the import by the token's subject,
    so an import of a narrower subject than its token grants goes on."""
    system = operator.account("SYS")
    exporter = operator.account("EXP", exports=[PRIVATE_STREAM])
    importer = operator.account("IMP")
    ending = exporter.activation(importer, "orders.a.>", expires=2)
    staying = exporter.activation(importer, "orders.b.>", expires=2)
    importer.imports += [stream_import(exporter, "orders.a.>", token=ending)]
    importer.imports += [stream_import(exporter, "orders.b.new", token=staying)]
    target = await start(operator, system, exporter, importer)
    assert await streamed(target, exporter, importer, tmp_path, "orders.a.x", "orders.a.x") == b"exported"

    async def first_seen() -> bytes:
        return await streamed(target, exporter, importer, tmp_path, "orders.a.x", "orders.a.x")

    await eventually(first_seen, lambda seen: seen == b"marker", what="the expired import to end")
    assert await streamed(target, exporter, importer, tmp_path, "orders.b.new", "orders.b.new") == b"exported"


async def test_a_service_import_ends_when_its_activation_expires(
    start: StartOperator, operator: Operator, tmp_path: Path
) -> None:
    system = operator.account("SYS")
    exporter = operator.account("EXP", exports=[{"type": "service", "subject": "help.>", "token_req": True}])
    importer = operator.account("IMP")
    token = exporter.activation(importer, "help.me", service=True, expires=2)
    importer.imports.append(service_import(exporter, "help.me", token=token))
    target = await start(operator, system, exporter, importer)
    assert await requested(target, exporter, importer, tmp_path, "help.>", "help.me") == b"answer to help.me"

    async def answer() -> Any:
        return await requested(target, exporter, importer, tmp_path, "help.>", "help.me")

    await eventually(answer, lambda reply: reply is None, what="no responders once the token expired")
