"""Operator (JWT) mode: the system account an operator JWT names, when the configuration names none.

nats-server takes ``system_account`` from the one trusted operator's JWT
unless the configuration names one (the two must then agree: see
``test_operator_config``).  The account's users then reach ``$SYS``, and
the start lines neither warn of a missing system account nor create
``$SYS``; the ``System`` line of the trusted operators shows the JWT's
audience, not its system account.
"""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import nats
import pytest
from nats.errors import NoRespondersError

from fakejs.testkit.jwt import Account, Operator
from tests.harness.configured import configured_servers
from tests.harness.targets import Target, server_command
from tests.harness.wait import WAIT


class Naming:
    """An operator whose JWT names ``SYS`` as its system account, with ``SYS`` and ``APP`` accounts."""

    def __init__(self) -> None:
        self.operator = Operator("O")
        self.system, self.app = self.operator.account("SYS"), self.operator.account("APP")
        self.operator.system_account = self.system.public_key

    def config(self) -> str:
        return self.operator.server_config(accounts=[self.system, self.app])


@pytest.fixture
async def served(target_kind: str, tmp_path: Path) -> AsyncIterator[tuple[Naming, Target]]:
    naming = Naming()
    async with configured_servers(target_kind, tmp_path) as start:
        yield naming, await start(naming.config())


async def ping(target: Target, account: Account, tmp_path: Path) -> bytes:
    creds = account.user("u").write_creds(tmp_path / f"{account.name}.creds")
    nc = await nats.connect(target.url, user_credentials=creds, allow_reconnect=False)
    try:
        return bytes((await nc.request("$SYS.REQ.SERVER.PING", b"", timeout=WAIT)).data)
    finally:
        await nc.close()


async def test_the_operator_jwt_system_account_reaches_sys(served: tuple[Naming, Target], tmp_path: Path) -> None:
    naming, target = served
    assert b'"server"' in await ping(target, naming.system, tmp_path)
    with pytest.raises(NoRespondersError):
        await ping(target, naming.app, tmp_path)


@pytest.mark.parametrize("kind", ["real", "fake"])
def test_start_lines_take_the_system_account_from_the_operator_jwt(kind: str, tmp_path: Path) -> None:
    naming = Naming()
    path = tmp_path / "server.conf"
    path.write_text(naming.config() + "port: -1\n")
    command = [*server_command(kind), "-c", str(path), "-D"]
    with subprocess.Popen(command, stderr=subprocess.PIPE, text=True) as process:
        assert process.stderr is not None
        seen: list[str] = []
        for line in process.stderr:
            seen.append(line.split("] ", 2)[-1].rstrip("\n"))
            if "Server is ready" in line:
                break
        process.terminate()
        process.communicate(timeout=30)
    assert '  System  : ""' in seen
    assert '  Operator: "O"' in seen
    assert not [line for line in seen if "should utilize a System Account" in line or "Created system account" in line]
