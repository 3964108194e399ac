"""Operator (JWT) mode's ``resolver_pinned_accounts``: only users of the accounts it names log in.

The system account's users always do (nats-server adds it to the list);
a user of another account gets ``-ERR 'Authorization Violation'`` and is
counted in /varz ``pinned_account_fails`` (left out while 0).  The
configuration errors are ``test_operator_config``'s.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fakejs.testkit.jwt import Account, Operator
from tests.harness.configured import configured_fixture
from tests.harness.monitoring import monitor
from tests.harness.operator import login_reply
from tests.harness.targets import Target

Start = Callable[[str], Awaitable[Target]]


start = configured_fixture()


def served(operator: Operator, system: Account, accounts: list[Account], pinned: list[Account]) -> str:
    keys = ", ".join(f'"{account.public_key}"' for account in pinned)
    config = operator.server_config(system_account=system, accounts=[system, *accounts])
    return config + f"resolver_pinned_accounts: [{keys}]\nhttp_port: -1\n"


async def test_only_the_pinned_accounts_and_the_system_account_log_in(start: Start) -> None:
    operator = Operator("O")
    system, pinned, other = operator.account("SYS"), operator.account("PINNED"), operator.account("OTHER")
    target = await start(served(operator, system, [pinned, other], [pinned]))
    assert "pinned_account_fails" not in await monitor(target, "/varz")
    assert await login_reply(target, pinned.user("p")) == b"PONG\r\n"
    assert await login_reply(target, system.user("s")) == b"PONG\r\n"
    assert await login_reply(target, other.user("o")) == b"-ERR 'Authorization Violation'\r\n"
    assert await login_reply(target, other.user("o2")) == b"-ERR 'Authorization Violation'\r\n"
    assert (await monitor(target, "/varz"))["pinned_account_fails"] == 2
