"""The cluster settings: ``cluster {}`` errors under ``-t`` and the route flags' errors, fakejs against nats-server.

Facts pinned: a ``cluster {}`` value of the wrong type is reported at the
key as Go's interface conversion, a bad route URL as ``error parsing route
url ["..."]``, a repeated route as a warning (failing ``-t``), ``routes``
outside the block as an unknown field; ``--cluster`` URL errors are Go's
``url.Parse`` / ``net.SplitHostPort`` texts after ``nats-server: `` with
status 1; JetStream with a cluster port and no ``server_name`` is refused
with nats-server's text; pinned accounts (``accounts``) listed twice, or
with ``pool_size`` -1, end the start with nats-server's texts; an ``advertise`` that is no ``host:port`` passes
``-t`` and ends the start once the route port listens (a fatal line).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness.config_file import FAKE, option_errors_alike, real, run, start_errors_alike, write
from tests.harness.targets import REAL_BINARY, REAL_MISSING_REASON

pytestmark = pytest.mark.skipif(REAL_BINARY is None, reason=REAL_MISSING_REASON)


FILE_ERRORS = {
    "name_spaces": 'cluster { name: "a b" }\n',
    "name_integer": "cluster { name: 1 }\n",
    "listen_bad": 'cluster { listen: "x" }\n',
    "listen_bool": "cluster { listen: true }\n",
    "port_string": 'cluster { port: "x" }\n',
    "routes_string": 'cluster { routes: "nats://h:1" }\n',
    "routes_bad_and_duplicate": 'cluster { routes: ["nats://%zz:1", "nats://h:1", "nats://h:1"] }\n',
    "no_advertise_string": 'cluster { no_advertise: "x" }\n',
    "pool_size_string": 'cluster { pool_size: "x" }\n',
    "compression_integer": "cluster { compression: 1 }\n",
    "compression_unknown_key": "cluster { compression: {foo: 1} }\n",
    "ping_interval_bad": 'cluster { ping_interval: "x" }\n',
    "ping_interval_over_max": 'cluster { ping_interval: "1m" }\n',
    "unknown_key": "cluster { foo: 1 }\n",
    "not_a_map": "cluster: 1\n",
    "routes_outside": 'routes: ["nats://h:1"]\n',
    "auth_users": "cluster { authorization { users: [{user: a, password: b}] } }\n",
    "auth_token": "cluster { authorization { token: t } }\n",
    "auth_timeout_bad": 'cluster { authorization { user: a, password: b, timeout: "x" } }\n',
    "auth_user_integer": "cluster { authorization { user: 1 } }\n",
    "write_timeout_bad": 'cluster { write_timeout: "x" }\n',
    "accounts_integer": "cluster { accounts: 1 }\n",
    "accounts_integer_in_array": "cluster {\n  accounts: [\n    A\n    1\n  ]\n}\n",
}

VALID_FILES = {
    "full": (
        'cluster { name: C, listen: "127.0.0.1:-1", routes: ["nats-route://u:p@127.0.0.1:1", " nats://h:2 "],'
        " advertise: x, no_advertise: true, connect_retries: 3, connect_backoff: true, pool_size: -1,"
        ' ping_interval: "10s", ping_max: 2, compression: off, authorization { user: a, password: b, timeout: 1 } }\n'
    ),
    "compression_map": 'cluster { compression: {mode: "accept"} }\n',
    "accounts": "cluster { accounts: [A] }\naccounts { A {} }\n",
    "accounts_one_string": "cluster { accounts: A }\naccounts { A {} }\n",
}

# Files that pass ``-t`` but whose pinned accounts nats-server refuses at start.
PINNED_START_ERRORS = {
    "duplicate": "port: -1\ncluster { port: -1, accounts: [A, A] }\naccounts { A {} }\n",
    "system_named": "port: -1\ncluster { port: -1, accounts: [A, SYS, A] }\naccounts { A {}, SYS {} }\nsystem_account: SYS\n",
    "negative_pool": "port: -1\ncluster { port: -1, pool_size: -1, accounts: [A] }\naccounts { A {} }\n",
}

FLAG_ERRORS = [
    ["--cluster", "127.0.0.1:45001"],
    ["--cluster", "nats://127.0.0.1"],
    ["--cluster", "nats://127.0.0.1:abc"],
    ["--cluster", "nats://u@127.0.0.1:-1"],
    ["--cluster", "nats://a%zz:45001"],
    ["--cluster", ":45001"],
    ["--cluster", "nats://[::1:45001"],
    ["--cluster", "nats://a b:1"],
    ["--cluster", "nats://127.0.0.1:"],
    ["--cluster", "nats://127.0.0.1:45009:1"],
    ["--cluster", "nats:127.0.0.1:1"],
    ["--routes", "nats://127.0.0.1:1"],
    ["--cluster=", "--routes", "nats://127.0.0.1:1"],
    ["-js", "--cluster", "nats://127.0.0.1:-1"],
    ["-js", "--server_name", "a", "--cluster", "nats://127.0.0.1:-1"],
    # --cluster_listen is --cluster under another name: the same checks, the same texts
    ["--cluster_listen", "nats://127.0.0.1:abc"],
    ["--cluster_listen", "nats://u@127.0.0.1:-1"],
    ["--cluster_listen=", "--routes", "nats://127.0.0.1:1"],
    ["-js", "--cluster_listen", "nats://127.0.0.1:-1"],
]


@pytest.mark.parametrize("name", sorted(FILE_ERRORS))
def test_cluster_block_errors(name: str, tmp_path: Path) -> None:
    option_errors_alike(write(tmp_path, FILE_ERRORS[name]))


@pytest.mark.parametrize("name", sorted(VALID_FILES))
def test_cluster_block_valid(name: str, tmp_path: Path) -> None:
    path = tmp_path / "server.conf"
    path.write_text(VALID_FILES[name])
    real_result = run(real(), "-t", "-c", str(path))
    assert real_result[0] == 0, real_result
    assert run(FAKE, "-t", "-c", str(path)) == real_result


@pytest.mark.parametrize("name", sorted(PINNED_START_ERRORS))
def test_pinned_account_errors_end_the_start(name: str, tmp_path: Path) -> None:
    start_errors_alike(write(tmp_path, PINNED_START_ERRORS[name]))


@pytest.mark.parametrize("argv", FLAG_ERRORS, ids=lambda argv: " ".join(argv))
def test_route_flag_errors(argv: list[str]) -> None:
    real_result = run(real(), "-p", "-1", *argv)
    assert real_result[0] == 1, real_result
    assert run(FAKE, "-p", "-1", *argv) == real_result


def test_a_cluster_advertise_that_is_no_host_port_is_fatal_once_the_route_port_listens(tmp_path: Path) -> None:
    path = write(tmp_path, 'port: -1\ncluster { name: C, listen: "127.0.0.1:-1", advertise: "10.0.0.1:x" }\n')
    assert run(real(), "-t", "-c", path)[0] == 0  # a start error, not a configuration error
    fatal = '[FTL] Error setting route INFO with Cluster.Advertise value of 10.0.0.1:x, err=strconv.Atoi: parsing "x": invalid syntax'
    for command in (real(), FAKE):
        status, stderr = run(command, "-c", path)
        last = stderr.rstrip("\n").splitlines()
        assert status == 1
        assert "Listening for route connections on 127.0.0.1:" in last[-2] and last[-1].endswith(fatal)
