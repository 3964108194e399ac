"""The ``accounts`` block onto ServerOptions.accounts, with nats-server's error texts and positions."""

from __future__ import annotations

import pytest

from fakejs.core.account_config import AccountConfig
from fakejs.core.configfile.load import load_text, start_problem
from fakejs.core.jetstream_limits import JetStreamLimits
from fakejs.core.users import Permissions, SubjectPermission, User


def loaded(text: str) -> tuple[list[AccountConfig], list[str], list[str]]:
    result = load_text(text, "f.conf")
    return result.options.accounts, result.context.errors, result.context.refusals


def test_accounts_users_and_jetstream() -> None:
    accounts, errors, refusals = loaded(
        "accounts {\n"
        "  A { users: [ {user: a, password: pa} ], jetstream: { max_mem: 1M, max_file: 2G, max_streams: 3,\n"
        "      max_consumers: 4, max_ack_pending: 5, max_bytes_required: true, mem_max_stream_bytes: 6,\n"
        "      disk_max_stream_bytes: 7 } }\n"
        "  B { users: [ {user: b, password: pb} ], jetstream: enabled }\n"
        "  C { users: [ {user: c, password: pc} ], jetstream: false }\n"
        "  D { jetstream: true }\n"
        "}\n"
    )
    assert (errors, refusals) == ([], [])
    assert [a.name for a in accounts] == ["A", "B", "C", "D"]
    assert accounts[0].users == (User("a", "pa", account="A"),)
    assert accounts[0].jetstream == JetStreamLimits(1_000_000, 2_000_000_000, 3, 4, 5, 6, 7, True)
    assert accounts[1].jetstream == JetStreamLimits()
    assert accounts[2].jetstream is None
    assert accounts[3].jetstream == JetStreamLimits() and accounts[3].users == ()


def test_aliases_and_default_permissions() -> None:
    accounts, errors, _ = loaded(
        "accounts { A { jetstream: { memory: 1, store: 2, streams: 3, consumers: 4, max_bytes: true,\n"
        "  memory_max_stream_bytes: 5, store_max_stream_bytes: 6 },\n"
        '  default_permissions: { publish: "x.>" },\n'
        '  users: [ {user: a, password: a}, {user: b, password: b, permissions: { publish: "y" }} ] } }\n'
    )
    assert errors == []
    assert accounts[0].jetstream == JetStreamLimits(1, 2, 3, 4, -1, 5, 6, True)
    a, b = accounts[0].users
    assert a.permissions == Permissions(publish=SubjectPermission(allow=("x.>",)))
    assert b.permissions == Permissions(publish=SubjectPermission(allow=("y",)))
    assert (a.account, b.account) == ("A", "A")


def test_all_users_and_no_auth_user_in_an_account() -> None:
    result = load_text(
        "authorization { users: [ {user: g, password: g} ] }\n"
        "accounts { A { users: [ {user: a, password: a} ] } }\n"
        "no_auth_user: a\n"
    )
    options = result.options
    assert [(u.name, u.account) for u in options.all_users()] == [("g", ""), ("a", "A")]
    assert options.auth_required
    assert start_problem(options) == ""


def test_list_of_names() -> None:
    accounts, errors, _ = loaded("accounts [A, B]\n")
    assert ([a.name for a in accounts], errors) == (["A", "B"], [])
    _, errors, _ = loaded('accounts [A, "$G", A]\n')
    assert errors == ['f.conf:1:14: "$G" is a Reserved Account', "f.conf:1:19: Duplicate Account Entry: A"]


@pytest.mark.parametrize(
    "text,expected",
    [
        ("accounts { $G { } }", ['f.conf:1:11: "$G" is a Reserved Account']),
        ("accounts { A: 1 }", ["f.conf:1:11: Expected map entries for accounts"]),
        (
            "accounts { A { users: [{user: a, password: a}] }, B { users: [{user: a, password: b}] } }",
            ['f.conf:1:54: Duplicate user "a" detected'],
        ),
        (
            "authorization { users: [{user: a, password: a}] }\naccounts { A { users: [{user: a, password: b}] } }",
            ['f.conf:2:16: Duplicate user "a" detected'],
        ),
        (
            "accounts { A { users: [{user: a, password: a}] } }\nauthorization { user: x, password: y }",
            ["f.conf:2:1: Can not have a single user/pass and a users array"],
        ),
        (
            "authorization { token: x }\naccounts { A { users: [{user: a, password: a}] } }",
            ["f.conf:2:16: Can not have a token and accounts"],
        ),
        ("accounts { A { jetstream: maybe } }", ["Expected 'enabled' or 'disabled' for string value, got 'maybe'"]),
        ("accounts { A { jetstream: 5 } }", ["Expected map, bool or string to define JetStream, got int64"]),
        ("accounts { A { foo: 1 } }", ['f.conf:1:15: unknown field "foo"']),
        ("accounts { A { jetstream: { tiers: {} } } }", ['f.conf:1:28: unknown field "tiers"']),
        (
            'accounts { A { jetstream: { max_mem: "x" } } }',
            ['f.conf:1:28: Expected a parseable size for "max_mem", got x'],
        ),
        (
            "accounts { A { jetstream: { max_bytes_required: 1 } } }",
            ['f.conf:1:28: Expected a parseable bool for "max_bytes_required", got 1'],
        ),
        ("accounts { A { users: 1 } }", ["Expected users field to be an array, got 1"]),
        ("accounts { A { nkey: x } }", ['f.conf:1:15: Not a valid public nkey for an account: "x"']),
    ],
)
def test_errors(text: str, expected: list[str]) -> None:
    assert loaded(text)[1] == expected


@pytest.mark.parametrize(
    "text,feature",
    [
        ("accounts { A { limits: { max_connections: 1 } } }", "account connection limits (max_connections)"),
    ],
)
def test_refused_by_name(text: str, feature: str) -> None:
    _, errors, refusals = loaded(text)
    assert errors == [] and len(refusals) == 1 and feature in refusals[0]


@pytest.mark.parametrize(
    "text,expected",
    [
        ("accounts { A { msg_trace: { dest: x, sampling: 25 } } }", ("x", 25)),
        ('accounts { A { msg_trace: { dest: x, sampling: "50%" } } }', ("x", 50)),
        ("accounts { A { msg_trace: { dest: x } } }", ("x", 100)),
        ("accounts { A { trace_dest: x } }", ("x", 100)),
    ],
)
def test_message_trace(text: str, expected: tuple[str, int]) -> None:
    accounts, errors, refusals = loaded(text)
    assert (errors, refusals) == ([], [])
    assert accounts[0].message_trace == expected


@pytest.mark.parametrize(
    "text,expected",
    [
        ('accounts { A { msg_trace: { dest: "a.*" } } }', 'f.conf:1:28: Trace destination "a.*" is not valid'),
        (
            "accounts { A { msg_trace: { dest: x, sampling: 0 } } }",
            "f.conf:1:37: Ttrace destination sampling value 0 is invalid, needs to be [1..100]",
        ),
        (
            'accounts { A { msg_trace: { dest: x, sampling: "5x" } } }',
            'f.conf:1:37: Invalid trace destination sampling value "5x"',
        ),
        (
            "accounts { A { msg_trace: 1 } }",
            'f.conf:1:15: Expected account message trace "msg_trace" to be a string or a map/struct, got int64',
        ),
        ("accounts { A { msg_trace: { dest: 1 } } }", 'f.conf:1:28: Field "dest" should be a string, got int64'),
        (
            "accounts { A { msg_trace: { foo: 1 } } }",
            'f.conf:1:28: Unknown field "foo" parsing account message trace map/struct "msg_trace"',
        ),
        (
            "accounts { A { msg_trace: { dest: x, sampling: true } } }",
            'f.conf:1:37: Trace destination sampling field "sampling" should be an integer or a percentage, got bool',
        ),
    ],
)
def test_message_trace_errors(text: str, expected: str) -> None:
    assert loaded(text)[1] == [expected]


def test_message_trace_sampling_without_destination() -> None:
    result = load_text("accounts { A { msg_trace: { sampling: 5 } } }", "f.conf")
    assert result.context.errors == []
    assert result.context.warnings == ["f.conf:1:15: Trace destination sampling ignored since no destination was set"]
    assert result.options.accounts[0].message_trace == ("", 0)


def test_system_account() -> None:
    for text, problem in [
        ('system_account: "$SYS"', ""),
        ("system_account: A\naccounts { A {} }", ""),
        ("system_account: X\naccounts { A {} }", "error resolving system account: account missing"),
        ("system_account: X", "error resolving system account: account missing"),
    ]:
        result = load_text(text)
        assert result.problem_text() == ""
        assert start_problem(result.options) == problem
