"""Operator (JWT) mode: account JWTs that do not validate, as nats-io/jwt validates them and nats-server applies it.

An account with a blocking issue (an import's token that does not fit it,
more imports or exports than its limits allow, wildcard exports without
``wildcards``, a blank tier name) is refused: its users
cannot log in.  At start nats-server warns of each preloaded account's
issues; the test reads the warning lines from both servers' logs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nats
import pytest

from fakejs.targets import ServerProcess
from fakejs.testkit.jwt import Account, Operator
from tests.harness.reload import TARGETS, logged, start
from tests.harness.wait import eventually

READY = "Server is ready"


def issue_lines(log: str) -> list[str]:
    """The warning lines of the accounts' validation issues, without their time stamps."""
    lines = [line.split("[WRN] ", 1)[1] for line in log.splitlines() if "[WRN] " in line]
    return [line for line in lines if "validation issues" in line or line.startswith("  - ")]


def warnings_and_errors(log: str) -> list[str]:
    """The log's warning and error lines, from their level on."""
    lines = []
    for line in log.splitlines():
        for level in ("[WRN] ", "[ERR] "):
            if level in line:
                lines.append(level + line.split(level, 1)[1])
    return lines


async def started(kind: str, tmp_path: Path, operator: Operator, *accounts: Account) -> ServerProcess:
    system = operator.account("SYS")
    server = start(kind, operator.server_config(system_account=system, accounts=[system, *accounts]), tmp_path)
    await logged(server, READY)
    return server


async def refused(server: ServerProcess, account: Account, tmp_path: Path) -> bool:
    """Whether a user of ``account`` is refused its login."""
    creds = account.user("u").write_creds(tmp_path / "u.creds")
    try:
        nc = await nats.connect(f"nats://127.0.0.1:{server.port}", user_credentials=creds, allow_reconnect=False)
    except nats.errors.Error as exc:
        return "Authorization Violation" in str(exc)
    await nc.close()
    return False


INVALID_ACCOUNTS: dict[str, tuple[dict[str, Any], list[str]]] = {
    "too many imports": (
        {"limits": {"imports": 1}, "imports": 2},
        ["the account contains more imports than allowed by the operator"] * 2,
    ),
    "too many exports": (
        {"limits": {"exports": 1}, "exports": ["a", "b"]},
        ["the account contains more exports than allowed by the operator"],
    ),
    "wildcard exports": (
        {"limits": {"exports": 5, "wildcards": False}, "exports": ["a.*", "b.>", "c"]},
        ["the account contains wildcard exports that are not allowed by the operator"] * 2,
    ),
    "a blank tier": (
        {"limits": {"tiered_limits": {"": {"mem_storage": -1}}}},
        ['Tiered JetStream Limits can not contain a blank "" tier name'],
    ),
}


@pytest.mark.parametrize("kind", TARGETS)
@pytest.mark.parametrize("case", list(INVALID_ACCOUNTS))
async def test_an_invalid_account_is_warned_of_and_refused(kind: str, case: str, tmp_path: Path) -> None:
    operator = Operator("O")
    shape, issues = INVALID_ACCOUNTS[case]
    exporter = operator.account("EXP", exports=[{"type": "stream", "subject": ">"}])
    limits = shape.get("limits", {})
    exports = [{"type": "stream", "subject": s} for s in shape.get("exports", [])]
    imports = [
        {"type": "stream", "account": exporter.public_key, "subject": f"i{n}"} for n in range(shape.get("imports", 0))
    ]
    account = operator.account("BAD", limits=limits, exports=exports, imports=imports)
    server = await started(kind, tmp_path, operator, exporter, account)
    try:
        header = f"Account [{account.public_key}] has validation issues:"
        assert issue_lines(server.log_text(since_start=True)) == [header, *(f"  - {issue}" for issue in issues)]
        assert await refused(server, account, tmp_path)
        assert not await refused(server, exporter, tmp_path)
    finally:
        server.stop()


@pytest.mark.parametrize("kind", TARGETS)
async def test_a_token_for_another_account_is_warned_of_with_the_deprecated_to(kind: str, tmp_path: Path) -> None:
    operator = Operator("O")
    exporter = operator.account("EXP", exports=[{"type": "stream", "subject": "orders.>", "token_req": True}])
    account, other = operator.account("IMP"), operator.account("OTHER")
    token = exporter.activation(other, "orders.>")
    account.imports.append(
        {"type": "stream", "account": exporter.public_key, "subject": "orders.>", "to": "x", "token": token}
    )
    server = await started(kind, tmp_path, operator, exporter, account)
    try:
        assert issue_lines(server.log_text(since_start=True)) == [
            f"Account [{account.public_key}] has validation issues:",
            "  - the field to has been deprecated (use LocalSubject instead)",
            '  - activation token doesn\'t match account it is being included in, "orders.>"',
        ]
    finally:
        server.stop()


@pytest.mark.parametrize("kind", TARGETS)
async def test_valid_accounts_are_not_warned_of(kind: str, tmp_path: Path) -> None:
    operator = Operator("O")
    exporter = operator.account("EXP", exports=[{"type": "stream", "subject": "orders.>"}])
    account = operator.account(
        "IMP", imports=[{"type": "stream", "account": exporter.public_key, "subject": "orders.>"}]
    )
    server = await started(kind, tmp_path, operator, exporter, account)
    try:
        assert issue_lines(server.log_text(since_start=True)) == []
        await eventually(lambda: refused(server, account, tmp_path), lambda value: value is False, what="a login")
    finally:
        server.stop()


INVALID_EXPORTS: dict[str, tuple[list[dict[str, Any]], list[str]]] = {
    "a subject inside another": (
        [
            {"type": "stream", "subject": "a.>"},
            {"type": "stream", "subject": "a.b"},
            {"type": "service", "subject": "a.b"},
        ],
        ['stream export subject "a.>" already exports "a.b"'],
    ),
    "a token position on a literal": (
        [{"type": "stream", "subject": "a.b", "account_token_position": 1}],
        ["Account Token Position can only be used with wildcard subjects: a.b"],
    ),
    "a token position not on a star": (
        [{"type": "service", "subject": "a.*.>", "account_token_position": 1}],
        ["Account Token Position 1 matches 'a' but must match a * in: a.*.>"],
    ),
    "a token position past the end": (
        [{"type": "service", "subject": "a.*", "account_token_position": 3}],
        ["Account Token Position 3 exceeds length of subject 'a.*'"],
    ),
    "response fields on a stream": (
        [{"type": "stream", "subject": "s", "response_type": "Stream", "response_threshold": 1_000_000_000}],
        ['invalid response type for stream: "Stream"', "response threshold only valid for services"],
    ),
    "an unknown response type": (
        [{"type": "service", "subject": "q", "response_type": "Many"}],
        ['invalid response type for service: "Many"'],
    ),
}


@pytest.mark.parametrize("kind", TARGETS)
@pytest.mark.parametrize("case", list(INVALID_EXPORTS))
async def test_invalid_exports_make_the_account_invalid(kind: str, case: str, tmp_path: Path) -> None:
    operator = Operator("O")
    exports, issues = INVALID_EXPORTS[case]
    account = operator.account("BAD", exports=exports)
    server = await started(kind, tmp_path, operator, account)
    try:
        header = f"Account [{account.public_key}] has validation issues:"
        assert issue_lines(server.log_text(since_start=True)) == [header, *(f"  - {issue}" for issue in issues)]
        assert await refused(server, account, tmp_path)
    finally:
        server.stop()


@pytest.mark.parametrize("kind", TARGETS)
async def test_imports_of_unknown_accounts_are_logged_at_the_accounts_first_use(kind: str, tmp_path: Path) -> None:
    operator = Operator("O")
    stranger = operator.account("STRANGER")
    imports = [
        {"type": "stream", "account": stranger.public_key, "subject": "news.>"},
        {"type": "service", "account": stranger.public_key, "subject": "ask", "to": "help"},
    ]
    account = operator.account("IMP", imports=imports)
    server = await started(kind, tmp_path, operator, account)
    try:
        assert not await refused(server, account, tmp_path)
        assert not await refused(server, account, tmp_path)
        wanted = f"Can't locate account [{stranger.public_key}] for import of [ask] service (err=account missing)"
        log = await logged(server, "for import of [news.>]")
        streamed = f"Can't locate account [{stranger.public_key}] for import of [news.>] stream (err=account missing)"
        assert warnings_and_errors(log) == [
            "[WRN] Account fetch failed: account missing",
            f"[ERR] {wanted}",  # the JWT's imports come sorted by subject
            "[WRN] Account fetch failed: account missing",
            f"[ERR] {streamed}",
        ]
    finally:
        server.stop()
