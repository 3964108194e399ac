"""Operator (JWT) mode's configuration: ``fakejs -c FILE`` against ``nats-server -c FILE``, and a login's end.

The files are made with :mod:`fakejs.testkit.jwt` (an operator, its
accounts); nats-server's errors for bad ``operator``, ``resolver`` and
``resolver_preload`` values must be fakejs's, with ``-t`` and at start;
the directory resolvers' errors too; the URL resolver, which fakejs does
not serve, is refused by fakejs alone, by name.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from fakejs.testkit.jwt import Operator
from tests.harness.config_file import FAKE, option_errors_alike, real, run, start_errors_alike, write
from tests.harness.targets import REAL_BINARY, REAL_MISSING_REASON

pytestmark = pytest.mark.skipif(REAL_BINARY is None, reason=REAL_MISSING_REASON)

OPERATOR = Operator("O")
SYSTEM, APP = OPERATOR.account("SYS"), OPERATOR.account("APP")
LATENCY = OPERATOR.account(
    "LATENCY", exports=[{"type": "service", "subject": "q", "service_latency": {"sampling": 100, "results": "lat"}}]
)
TIERED = OPERATOR.account("TIERED", limits={"tiered_limits": {"R1": {"mem_storage": -1}}})
TRACED = OPERATOR.account(
    "TRACED", imports=[{"type": "stream", "account": APP.public_key, "subject": "s", "allow_trace": True}]
)
MEMORY = "resolver: MEMORY\n"
NAMING = Operator("N")  # an operator whose JWT names its system account
NAMED_SYSTEM, NAMED_APP = NAMING.account("SYS"), NAMING.account("APP")
NAMING.system_account = NAMED_SYSTEM.public_key

# Each case: the file's text, given the directory it is written to.
OPTION_ERRORS: dict[str, Callable[[Path], str]] = {
    "operator_neither_jwt_nor_file": lambda d: 'operator: "garbage"\n' + MEMORY,
    "operator_missing_file": lambda d: f'operator: "{d / "missing.jwt"}"\n' + MEMORY,
    "operator_not_a_string": lambda d: "operator: 5\n" + MEMORY,
    "operator_is_an_account": lambda d: f'operator: "{APP.jwt}"\n' + MEMORY,
    "resolver_unknown": lambda d: f'operator: "{OPERATOR.jwt}"\nresolver: FOO\n',
    "resolver_not_a_string": lambda d: f'operator: "{OPERATOR.jwt}"\nresolver: 5\n',
    "preload_not_a_map": lambda d: f'operator: "{OPERATOR.jwt}"\n{MEMORY}resolver_preload: 5\n',
    "preload_value_not_a_string": lambda d: (
        f'operator: "{OPERATOR.jwt}"\n{MEMORY}resolver_preload: {{ "{APP.public_key}": 5 }}\n'
    ),
    **{
        f"directory_resolver_{name}": (lambda d, body=body: f'operator: "{OPERATOR.jwt}"\nresolver: {{ {body(d)} }}\n')
        for name, body in {
            "without_dir": lambda d: "type: full",
            "full_with_ttl": lambda d: f'type: full, dir: "{d / "jwt"}", ttl: "1s"',
            "cache_with_interval_and_delete": lambda d: (
                f'type: cache, dir: "{d / "jwt"}", interval: "1s", allow_delete: true'
            ),
            "cache_with_hard_delete": lambda d: f'type: cache, dir: "{d / "jwt"}", hard_delete: true',
            "bad_interval": lambda d: f'type: full, dir: "{d / "jwt"}", interval: "bad"',
            "unknown_type": lambda d: f'type: bogus, dir: "{d / "jwt"}"',
            "without_type": lambda d: f'dir: "{d / "jwt"}"',
            "dir_is_a_file": lambda d: f'type: full, dir: "{d / "server.conf"}"',
            "zero_timeout": lambda d: f'type: full, dir: "{d / "jwt"}", timeout: "0s"',
            "hard_delete_without_delete": lambda d: f'type: full, dir: "{d / "jwt"}", hard_delete: true',
        }.items()
    },
    "pinned_accounts_not_a_list": lambda d: f'operator: "{OPERATOR.jwt}"\n{MEMORY}resolver_pinned_accounts: 5\n',
    "pinned_account_not_a_string": lambda d: (
        f'operator: "{OPERATOR.jwt}"\n{MEMORY}resolver_pinned_accounts: ["{APP.public_key}", 5]\n'
    ),
    "default_sentinel_not_a_string": lambda d: f'operator: "{OPERATOR.jwt}"\n{MEMORY}default_sentinel: 5\n',
    "preload_value_not_a_jwt": lambda d: (
        f'operator: "{OPERATOR.jwt}"\n{MEMORY}resolver_preload: {{ "{APP.public_key}": "junk" }}\n'
    ),
}

START_ERRORS: dict[str, Callable[[Path], str]] = {
    "system_account_not_preloaded": lambda d: (
        f'port: -1\noperator: "{OPERATOR.jwt}"\n{MEMORY}system_account: "{SYSTEM.public_key}"\n'
    ),
    "system_account_differs_from_operator_jwt": lambda d: (
        NAMING.server_config(system_account=NAMED_APP, accounts=[NAMED_SYSTEM, NAMED_APP]) + "port: -1\n"
    ),
    "operator_jwt_system_account_not_preloaded": lambda d: NAMING.server_config(accounts=[NAMED_APP]) + "port: -1\n",
    "pinned_account_not_an_account_key": lambda d: (
        OPERATOR.server_config(system_account=SYSTEM, accounts=[SYSTEM])
        + f'port: -1\nresolver_pinned_accounts: ["{SYSTEM.public_key}", "{OPERATOR.public_key}"]\n'
    ),
    "default_sentinel_without_operator": lambda d: f'port: -1\ndefault_sentinel: "{APP.user("s", bearer=True).jwt}"\n',
    "default_sentinel_not_a_jwt": lambda d: (
        OPERATOR.server_config(system_account=SYSTEM, accounts=[SYSTEM, APP]) + 'port: -1\ndefault_sentinel: "junk"\n'
    ),
    "default_sentinel_not_a_bearer": lambda d: (
        OPERATOR.server_config(system_account=SYSTEM, accounts=[SYSTEM, APP])
        + f'port: -1\ndefault_sentinel: "{APP.user("s").jwt}"\n'
    ),
    "accounts_beside_operator": lambda d: f'port: -1\noperator: "{OPERATOR.jwt}"\n{MEMORY}accounts: {{ A: {{}} }}\n',
    "directory_resolver_without_system_account": lambda d: (
        f'port: -1\noperator: "{OPERATOR.jwt}"\nresolver: {{ type: full, dir: "{d / "jwt"}" }}\n'
    ),
}

# nats-server serves these; fakejs refuses to start, naming what it does not serve.
FAKEJS_REFUSES: dict[str, tuple[Callable[[Path], str], str]] = {
    "url_resolver": (
        lambda d: f'port: -1\noperator: "{OPERATOR.jwt}"\nresolver: URL("http://127.0.0.1:9/jwt/v1/accounts/")\n',
        "the URL account resolver",
    ),
    "websocket_jwt_cookie": (
        lambda d: (
            OPERATOR.server_config(system_account=SYSTEM, accounts=[SYSTEM])
            + 'port: -1\nwebsocket { port: -1, no_tls: true, jwt_cookie: "jwt" }\n'
        ),
        "user JWTs from a websocket cookie",
    ),
    "export_latency": (
        lambda d: OPERATOR.server_config(system_account=SYSTEM, accounts=[SYSTEM, LATENCY]) + "port: -1\n",
        "service latency tracking of account JWT exports (service_latency)",
    ),
    "tiers_in_a_cluster": (
        lambda d: (
            OPERATOR.server_config(system_account=SYSTEM, accounts=[SYSTEM, TIERED])
            + "port: -1\ncluster { name: c, listen: 127.0.0.1:-1 }\n"
        ),
        "tiered JetStream limits of account JWTs (tiered_limits) in a cluster",
    ),
    "import_allow_trace": (
        lambda d: OPERATOR.server_config(system_account=SYSTEM, accounts=[SYSTEM, APP, TRACED]) + "port: -1\n",
        "message tracing through account JWT exports and imports (allow_trace)",
    ),
}


@pytest.mark.parametrize("name", sorted(OPTION_ERRORS))
def test_option_errors(name: str, tmp_path: Path) -> None:
    option_errors_alike(write(tmp_path, OPTION_ERRORS[name](tmp_path)))


@pytest.mark.parametrize("name", sorted(START_ERRORS))
def test_start_errors(name: str, tmp_path: Path) -> None:
    start_errors_alike(write(tmp_path, START_ERRORS[name](tmp_path)))


@pytest.mark.parametrize("name", sorted(FAKEJS_REFUSES))
def test_fakejs_refuses_what_it_does_not_serve(name: str, tmp_path: Path) -> None:
    text, feature = FAKEJS_REFUSES[name]
    path = write(tmp_path, text(tmp_path))
    assert run(real(), "-t", "-c", path)[0] == 0
    status, stderr = run(FAKE, "-c", path)
    assert status == 1
    assert feature in stderr and "not supported by fakejs yet" in stderr


def test_valid_files_give_the_same_digest(tmp_path: Path) -> None:
    (tmp_path / "op.jwt").write_text(OPERATOR.jwt)
    texts = [
        OPERATOR.server_config(system_account=SYSTEM, accounts=[SYSTEM, APP]),
        f'operator: ["{OPERATOR.jwt}", "{tmp_path / "op.jwt"}"]\nresolver: MEM\n',
        f'operator: "{OPERATOR.jwt}"\nresolver: {{ type: full, dir: "{tmp_path / "jwt"}", allow_delete: true }}\n',
        f'operator: "{OPERATOR.jwt}"\nresolver: {{ type: cache, dir: "{tmp_path / "jwt"}", ttl: "1m", limit: 10 }}\n',
    ]
    for text in texts:
        path = write(tmp_path, text)
        real_status, real_err = run(real(), "-t", "-c", path)
        assert real_status == 0, real_err
        assert run(FAKE, "-t", "-c", path) == (real_status, real_err)
