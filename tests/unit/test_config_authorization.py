"""The ``authorization`` block onto ServerOptions, with nats-server's error texts."""

from __future__ import annotations

import nkeys

from fakejs.conf import parse
from fakejs.core.configfile import authorization
from fakejs.core.configfile.context import ConfigContext
from fakejs.core.options import ServerOptions
from fakejs.core.users import Permissions, ResponsePermission, SubjectPermission, User

SEED = nkeys.encode_seed(bytes([3]) * 32, nkeys.PREFIX_BYTE_USER)
PUBLIC = nkeys.from_seed(bytearray(SEED)).public_key.decode()


def load(text: str) -> tuple[ServerOptions, ConfigContext]:
    tree = parse(text)
    options = ServerOptions()
    context = ConfigContext()
    if "authorization" in tree:
        authorization.apply(tree["authorization"], options, context)
    if "no_auth_user" in tree:
        authorization.apply_no_auth_user(tree["no_auth_user"], options, context)
    return options, context


def errors(text: str) -> list[str]:
    return load(text)[1].errors


def test_single_user_token_and_timeout() -> None:
    options, context = load('authorization { user: a, password: "p w", timeout: 1.5 }')
    assert (options.user, options.password, options.auth_timeout, context.errors) == ("a", "p w", 1.5, [])
    options, _ = load('authorization { token: "t0k", timeout: "3s" }')
    assert (options.token, options.auth_timeout) == ("t0k", 3.0)
    options, _ = load("authorization { token: t }")
    assert options.auth_timeout == 2.0


def test_users_with_permissions_and_defaults() -> None:
    options, context = load(
        f"""
        authorization {{
          default_permissions {{ publish: "pub.>" }}
          users [
            {{ user: a, password: pa, permissions: {{ publish: {{ allow: ["x", "y.*"], deny: "y.z" }},
                                                     subscribe: ["in.>", "q.* workers"], allow_responses: true }} }}
            {{ user: b, password: pb }}
            {{ nkey: {PUBLIC} }}
          ]
        }}
        no_auth_user: b
        """
    )
    assert context.errors == []
    default = Permissions(publish=SubjectPermission(allow=("pub.>",)))
    assert options.users == [
        User(
            "a",
            "pa",
            permissions=Permissions(
                publish=SubjectPermission(allow=("x", "y.*"), deny=("y.z",)),
                subscribe=SubjectPermission(allow=("in.>", "q.* workers")),
                response=ResponsePermission(1, 120.0),
            ),
        ),
        User("b", "pb", permissions=default),
        User(nkey=PUBLIC, permissions=default),
    ]
    assert options.no_auth_user == "b"
    assert options.auth_required


def test_allow_responses_map() -> None:
    options, context = load(
        'authorization { users [ { user: a, permissions: { allow_responses: { max: 3, expires: "1m" } } } ] }'
    )
    assert context.errors == []
    assert options.users[0].permissions == Permissions(response=ResponsePermission(3, 60.0))
    assert errors("authorization { users [ { user: a, permissions: { allow_responses: { expires: 5 } } } ] }") == [
        ":1:69: error parsing expires, not a duration string"
    ]
    assert errors('authorization { users [ { user: a, permissions: { allow_responses: "x" } } ] }') == [
        ":1:50: error parsing response permissions, expected a boolean or a map"
    ]


def test_conflicts() -> None:
    assert errors("authorization { user: a, password: b, token: c }") == [":1:0: Cannot have a user/pass and token"]
    assert errors("authorization { user: a, password: b, users: [] }") == [
        ":1:0: Can not have a single user/pass and a users array"
    ]
    assert errors("authorization { token: c, users: [] }") == [":1:0: Can not have a token and a users array"]
    assert errors("authorization { users: [ {user: a}, {user: a} ] }") == [':1:0: Duplicate user "a" detected']
    assert errors(f"authorization {{ users: [ {{nkey: {PUBLIC}}}, {{nkey: {PUBLIC}}} ] }}") == [
        f':1:0: Duplicate nkey "{PUBLIC}" detected'
    ]


def test_bad_users() -> None:
    assert errors("authorization { users: [ {password: a} ] }") == [":1:26: User entry requires a user"]
    assert errors("authorization { users: [ {nkey: UBAD} ] }") == [":1:26: Not a valid public nkey for a user"]
    assert errors(f"authorization {{ users: [ {{nkey: {PUBLIC}, password: x}} ] }}") == [
        ":1:90: Nkey users do not take usernames or passwords"
    ]
    assert errors("authorization { users: 1 }") == [":1:16: Expected users field to be an array, got 1"]
    assert errors("authorization { users: [ 1 ] }") == [":1:25: Expected user entry to be a map/struct, got 1"]
    assert errors("authorization { users: [ {user: a, color: red} ] }") == [':1:35: unknown field "color"']


def test_bad_permissions() -> None:
    assert errors('authorization { users [ { user: a, permissions: { publish: "a..b" } } ] }') == [
        'subject "a..b" is not a valid subject'
    ]
    assert errors('authorization { users [ { user: a, permissions: { subscribe: { allow: "a b c" } } } ] }') == [
        ':1:63: subject "a b c" is not a valid subject'
    ]
    assert errors('authorization { users [ { user: a, permissions: { subscribe: { deny: "a b..c" } } } ] }') == [
        ':1:63: queue "b..c" is not a valid queue'
    ]
    assert errors("authorization { users [ { user: a, permissions: { publish: { allow: [ 1 ] } } } ] }") == [
        ":1:70: Subject in permissions array cannot be cast to string"
    ]
    assert errors("authorization { users [ { user: a, permissions: { publish: { other: x } } } ] }") == [
        ":1:61: Unknown field name \"other\" parsing subject permissions, only 'allow' or 'deny' are permitted"
    ]
    assert errors("authorization { users [ { user: a, permissions: { color: x } } ] }") == [
        ':1:50: Unknown field "color" parsing permissions'
    ]
    assert errors("authorization { users [ { user: a, permissions: 1 } ] }") == [
        ":1:35: Expected permissions to be a map/struct, got 1"
    ]


def test_bad_timeout_and_types() -> None:
    assert errors('authorization { token: t, timeout: "abc" }') == [
        ":1:26: error parsing authorization config, 'timeout' time: invalid duration \"abc\""
    ]
    assert errors("authorization { token: t, timeout: [ 1 ] }") == [
        ":1:26: error parsing authorization config, 'timeout' wrong type"
    ]
    _, context = load("authorization { token: t, timeout: 90 }")
    assert context.errors == [] and "timeout of 90 (90.000000 seconds) is high" in context.warnings[0]
    assert errors("authorization { user: 1 }") == [
        ":1:16: interface conversion: interface {} is int64, not string",
        ":1:0: runtime error: invalid memory address or nil pointer dereference",
    ]
    assert errors("authorization { timeout: 1, color: red }") == [':1:28: unknown field "color"']
    assert errors('authorization { users [ { user: a, permissions: { allow_responses: { max: "x" } } } ] }') == [
        ":1:69: interface conversion: interface {} is string, not int64"
    ]
    assert errors("authorization: 1") == [
        ":1:0: interface conversion: interface {} is int64, not map[string]interface {}",
        ":1:0: runtime error: invalid memory address or nil pointer dereference",
    ]


def test_connection_types() -> None:
    assert errors('authorization { users [ { user: a, allowed_connection_types: ["FOO", "websocket", "bar"] } ] }') == [
        ':1:35: invalid connection types ["FOO" "BAR"]'
    ]
    options, context = load('authorization { users [ { user: a, allowed_connection_types: "websocket" } ] }')
    assert context.errors == [] and options.users[0].connection_types == ("WEBSOCKET",)
