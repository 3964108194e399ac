"""The ``exports`` and ``imports`` keys of an account, and the checks across accounts.

The expected texts are nats-server 2.15.1's (``nats-server -t``) for each line.
"""

from __future__ import annotations

import pytest

from fakejs.conf import parse
from fakejs.core.account_config import CHUNKED, SINGLETON, STREAM, AccountConfig, Export, Import
from fakejs.core.configfile.context import ConfigContext
from fakejs.core.configfile.exports import apply_exports, apply_imports, check_imports


def problems(text: str) -> list[str]:
    """Every account's keys mapped, then (if clean) the checks across accounts against ``accounts``."""
    tree = parse(text)
    context = ConfigContext()
    configs = []
    for name, token in tree["accounts"].value.items():
        keys = token.value
        exports = apply_exports(keys["exports"], context) if "exports" in keys else ()
        imports = apply_imports(keys["imports"], context) if "imports" in keys else ()
        configs.append(AccountConfig(name, exports=exports, imports=imports))
    if not context.errors:
        context.errors += [f"{tree['accounts'].where()}: {e}" for e in check_imports(configs)]
    return context.errors + context.refusals


CASES = [
    (
        'accounts { A { exports: [{stream: "a.>", service: "b"}] } }',
        [':1:41: Detected service "b" but already saw a stream'],
    ),
    ("accounts { A { exports: [{accounts: [B]}] } }", []),
    ('accounts { A { exports: [{service: "b", response_type: "foo"}] } }', [':1:40: Unknown response type: "foo"']),
    (
        'accounts { A { exports: [{service: "b", response_threshold: "x"}] } }',
        [':1:40: Expected response threshold to be a parseable time duration, got "x"'],
    ),
    (
        'accounts { A { exports: [{stream: "b", response_type: "stream"}] } }',
        [":1:39: Detected response directive on non-service"],
    ),
    ('accounts { A { exports: "x" } }', [":1:15: Exports should be an array, got string"]),
    ('accounts { A { exports: ["x"] } }', [":1:26: Export Items should be a map with type entry, got string"]),
    ("accounts { A { exports: [{stream: 1}] } }", [":1:26: Expected stream name to be string, got int64"]),
    ('accounts { A { imports: [{stream: {subject: "x"}}] } }', [":1:26: Expect an account name and a subject"]),
    (
        'accounts { A { exports: [{stream: "x"}] }, B { imports: [{stream: {account: A, subject: "x"}, prefix: "p", to: "q"}] } }',
        [":1:107: Stream import can not have a 'prefix' and a 'to' property"],
    ),
    ('accounts { A { exports: [{stream: "x"}] }, B { imports: [{stream: {account: A, subject: "x"}, to: "q"}] } }', []),
    (
        'accounts { A { imports: [{stream: {account: C, subject: "x"}}] } }',
        [':1:0: "C" account not defined for stream import'],
    ),
    (
        'accounts { A { exports: [{stream: "x"}] }, B { imports: [{stream: {account: A, subject: "y"}}] } }',
        [':1:0: Error adding stream import "y": stream import not authorized'],
    ),
    (
        'accounts { A { exports: [{service: "x", accounts: [C]}] }, B { imports: [{service: {account: A, subject: "x"}}] } }',
        [':1:0: "C" account not defined for service export'],
    ),
    (
        'accounts { A { exports: [{service: "x", accounts: [A]}] }, B { imports: [{service: {account: A, subject: "x"}}] } }',
        [':1:0: Error adding service import "x": service import not authorized'],
    ),
    (
        'accounts { A { exports: [{service: "x"}] }, B { imports: [{service: {account: A, subject: "x"}}, {service: {account: A, subject: "x"}}] } }',
        [':1:134: Duplicate service import subject "x", previously used in import for account "A", subject "x"'],
    ),
    (
        'accounts { A { imports: [{service: {account: A, subject: "x", foo: 1}}, {bar: 1}] } }',
        [':1:62: unknown field "foo"', ':1:73: unknown field "bar"'],
    ),
    (
        'accounts { A { exports: [{stream: "x"}] }, B { imports: [{stream: {account: A, subject: "x"}, prefix: "p.*"}] } }',
        [':1:0: Error adding stream import "x": stream import prefix can not contain wildcard tokens'],
    ),
    (
        'accounts { A { exports: [{stream: "x"}] }, B { imports: [{stream: {account: A, subject: "x"}}, {stream: {account: A, subject: "x"}}] } }',
        [':1:0: Error adding stream import "x": stream import already exists'],
    ),
    (
        'accounts { A { exports: [{stream: "x"}], imports: [{stream: {account: B, subject: "x"}}] }, B { exports: [{stream: "x"}], imports: [{stream: {account: A, subject: "x"}}] } }',
        [':1:0: Error adding stream import "x": import forms a cycle'],
    ),
    (
        'accounts { A { exports: [{service: "x"}], imports: [{service: {account: B, subject: "x"}}] }, B { exports: [{service: "x"}], imports: [{service: {account: A, subject: "x"}}] } }',
        [':1:0: Error adding service import "x": import forms a cycle'],
    ),
    (
        'accounts { A { exports: [{stream: "x"}] }, B { imports: [{stream: "x"}] } }',
        [":1:58: Stream entry should be an account map, got string"],
    ),
]


@pytest.mark.parametrize("text,expected", CASES)
def test_texts_of_nats_server(text: str, expected: list[str]) -> None:
    assert problems(text) == expected


def test_the_mapping() -> None:
    tree = parse(
        """accounts { A { exports: [
          {stream: "ev.>", accounts: [B]}
          {service: "svc", response_type: chunked, response_threshold: "5s"}
          {service: "one", response: single}
          {service: "many", response_type: Stream}
        ] }
        B { imports: [
          {stream: {account: A, subject: "ev.>"}, prefix: "from.a"}
          {stream: {account: A, subject: "t.*"}, to: "tt.$1.x"}
          {stream: {account: A, subject: "plain"}}
          {service: {account: A, subject: "svc"}, to: "local.svc"}
          {service: {account: A, subject: "one"}}
        ] } }"""
    )
    context = ConfigContext()
    accounts = tree["accounts"].value
    assert apply_exports(accounts["A"].value["exports"], context) == (
        Export("ev.>", False, ("B",)),
        Export("svc", True, (), CHUNKED, 5.0),
        Export("one", True, (), SINGLETON, 0.0),
        Export("many", True, (), STREAM, 0.0),
    )
    assert apply_imports(accounts["B"].value["imports"], context) == (
        Import("A", "ev.>", False, "from.a.ev.>", "from.a"),
        Import("A", "t.*", False, "tt.$1.x"),
        Import("A", "plain", False, "plain"),
        Import("A", "svc", True, "local.svc"),
        Import("A", "one", True, "one"),
    )
    assert not context.errors


def test_features_not_served_are_refused() -> None:
    assert problems('accounts { A { exports: [{service: "x", latency: "lat"}] } }') == [
        ":1:40: export latency: not supported by fakejs yet"
    ]
