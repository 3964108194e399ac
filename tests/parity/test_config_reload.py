"""Configuration reload: ``-c FILE``, the file rewritten, then SIGHUP or ``--signal reload=PID``, on both servers.

What connected clients see (a removed user closed, changed credentials
refused with ``-ERR 'Authorization Violation'``, a revoked subscription
removed with its ``-ERR``), the log lines (``Reloaded: ...``,
``Reloaded server configuration``), and the refusal of an option that
cannot be reloaded (the running configuration kept).
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import nats
import pytest

from fakejs.targets import ServerProcess
from tests.harness.raw import RawClient
from tests.harness.reload import DONE, FAILED, hangup, logged, rewrite, start
from tests.harness.targets import REAL_BINARY, REAL_MISSING_REASON, server_command
from tests.harness.wait import WAIT, eventually

pytestmark = pytest.mark.skipif(REAL_BINARY is None, reason=REAL_MISSING_REASON)

TARGETS = ["real", "fake"]

USERS = """
authorization {
  users = [
    {user: alice, password: pa, permissions: {subscribe: ["a.>", "b.>"]}}
    {user: bob, password: pb}
  ]
}
"""

# alice may no longer subscribe to b.>, bob is gone; debug and max_payload change too.
FEWER_USERS = """
debug: true
max_payload: 2000
authorization {
  users = [
    {user: alice, password: pa, permissions: {subscribe: ["a.>"]}}
  ]
}
"""

NEW_PASSWORD = USERS.replace("password: pb", "password: pc")


async def _login(server: ServerProcess, user: str, password: str) -> RawClient:
    client = await RawClient.connect("127.0.0.1", server.port)
    await client.send(f'CONNECT {{"user":"{user}","pass":"{password}","verbose":false}}\r\nPING\r\n'.encode())
    assert (await client.read_until(b"PONG\r\n")).endswith(b"PONG\r\n")
    client.received.clear()
    return client


@pytest.fixture(params=TARGETS)
async def users_server(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[ServerProcess]:
    server = start(request.param, USERS, tmp_path)
    try:
        yield server
    finally:
        server.stop()


async def test_removed_user_is_closed_and_a_revoked_subscription_removed(users_server: ServerProcess) -> None:
    alice = await _login(users_server, "alice", "pa")
    bob = await _login(users_server, "bob", "pb")
    await alice.send(b"SUB a.x 1\r\nSUB b.x 2\r\nPING\r\n")
    await alice.read_until(b"PONG\r\n")
    alice.received.clear()
    rewrite(users_server, FEWER_USERS)
    hangup(users_server)
    log = await logged(users_server, DONE)
    assert await bob.wait_closed() and bytes(bob.received) == b""
    error = b'-ERR \'Permissions Violation for Subscription to "b.x" (sid "2")\'\r\n'
    assert (await alice.read_until(error)).endswith(error)
    alice.received.clear()
    await alice.send(b"PUB b.x 1\r\nx\r\nPUB a.x 1\r\ny\r\nPING\r\n")
    assert await alice.read_until(b"PONG\r\n") == b"MSG a.x 1 1\r\ny\r\nPONG\r\n"
    reloaded = re.findall(r"\[INF\] (Reloaded: .*|Removed sub .*)", log)
    assert reloaded == [
        "Reloaded: debug = true",
        "Reloaded: authorization users",
        "Reloaded: accounts",
        "Reloaded: max_payload = 2000",
        'Removed sub "b.x" (sid "2") for User "alice" - not authorized',
    ]
    assert 'Trapped "hangup" signal' in log
    assert '"$G/user:bob" - Client connection closed: Client Closed' in log
    assert re.search(r"\[INF\] Reloaded server configuration \(sha256:[0-9a-f]{64}\)\n", log)
    await alice.close()
    await bob.close()


async def test_changed_password_is_an_authorization_violation(users_server: ServerProcess) -> None:
    bob = await _login(users_server, "bob", "pb")
    rewrite(users_server, NEW_PASSWORD)
    hangup(users_server)
    log = await logged(users_server, DONE)
    assert await bob.wait_closed()
    assert bytes(bob.received) == b"-ERR 'Authorization Violation'\r\n"
    assert '"$G/user:bob" - authentication error - User "bob"' in log
    await bob.close()


async def test_nats_py_client_of_a_removed_user_is_disconnected(users_server: ServerProcess) -> None:
    closed = asyncio.Event()

    async def on_closed() -> None:
        closed.set()

    nc = await nats.connect(users_server.url, user="bob", password="pb", allow_reconnect=False, closed_cb=on_closed)
    rewrite(users_server, FEWER_USERS)
    hangup(users_server)
    await logged(users_server, DONE)
    await asyncio.wait_for(closed.wait(), WAIT)
    assert nc.is_closed


@pytest.mark.parametrize("kind", TARGETS)
async def test_port_change_is_refused_and_the_old_configuration_kept(kind: str, tmp_path: Path) -> None:
    server = start(kind, USERS, tmp_path)
    try:
        bob = await _login(server, "bob", "pb")
        port = server.port
        other = port + 1 if port < 65535 else port - 1
        rewrite(server, FEWER_USERS, port=other)
        assert server.process is not None
        sent = subprocess.run(
            [*server_command(kind), "--signal", f"reload={server.process.pid}"], check=False, capture_output=True
        )
        assert (sent.returncode, sent.stdout, sent.stderr) == (0, b"", b"")
        refusal = f"[ERR] Failed to reload server configuration: config reload not supported for Port: old={port}, new={other}"
        log = await logged(server, refusal)
        assert "Reloaded" not in log
        await bob.send(b"PING\r\n")  # bob is still a user: nothing was applied
        assert await bob.read_until(b"PONG\r\n") == b"PONG\r\n"
        await bob.close()
    finally:
        server.stop()


@pytest.mark.parametrize("kind", TARGETS)
def test_signal_to_a_missing_process(kind: str) -> None:
    sent = subprocess.run(
        [*server_command(kind), "-sl", "reload=999999999"], check=False, capture_output=True, text=True
    )
    assert (sent.returncode, sent.stderr) == (1, 'nats-server: \nsignal "reload" 999999999: no such process\n')


@pytest.mark.parametrize("kind", TARGETS)
def test_signal_with_a_bad_pid(kind: str) -> None:
    sent = subprocess.run([*server_command(kind), "-sl", "reload=abc"], check=False, capture_output=True, text=True)
    assert (sent.returncode, sent.stderr) == (1, "nats-server: invalid pid: abc\n")


SYSTEM = """
accounts { SYS: { users: [{user: admin, password: s}] }, A: { users: [{user: a, password: a}] } }
system_account: SYS
"""


@pytest.mark.parametrize("kind", TARGETS)
async def test_system_account_reload_request(kind: str, tmp_path: Path) -> None:
    """$SYS.REQ.SERVER.<id>.RELOAD: the envelope without data; a refused reload answers its error (code 500)."""
    server = start(kind, SYSTEM, tmp_path)
    try:
        nc = await nats.connect(f"nats://admin:s@127.0.0.1:{server.port}")
        ping = await nc.request("$SYS.REQ.SERVER.PING.IDZ", b"", timeout=WAIT)
        subject = f"$SYS.REQ.SERVER.{json.loads(ping.data)['id']}.RELOAD"
        answer = json.loads((await nc.request(subject, b"", timeout=WAIT)).data)
        assert sorted(answer) == ["server"]
        await logged(server, DONE)
        port = server.port
        rewrite(server, SYSTEM, port=port + 1 if port < 65535 else port - 1)
        answer = json.loads((await nc.request(subject, b"", timeout=WAIT)).data)
        assert sorted(answer) == ["error", "server"]
        assert answer["error"] == {
            "code": 500,
            "description": f"config reload not supported for Port: old={port}, new={port + 1 if port < 65535 else port - 1}",
        }
        assert "Failed to reload" not in server.log_text(since_start=True)
        await nc.close()
    finally:
        server.stop()


@pytest.mark.parametrize("kind", TARGETS)
async def test_lower_max_connections_closes_the_clients_beyond_it(kind: str, tmp_path: Path) -> None:
    server = start(kind, USERS, tmp_path)
    try:
        clients = [await _login(server, "alice", "pa"), await _login(server, "bob", "pb")]
        rewrite(server, "max_connections: 1\n" + USERS)
        hangup(server)
        log = await logged(server, DONE)
        assert "[INF] Closed 1 connections to fall within max_connections\n" in log
        assert log.index("Closed 1 connections") < log.index("Reloaded: max_connections = 1")
        for client in clients:
            await client.send(b"PING\r\n")
            await client.read_until(b"PONG\r\n")
        refused = [bytes(client.received) for client in clients if client.closed]
        assert refused == [b"-ERR 'maximum connections exceeded'\r\n"]
        for client in clients:
            await client.close()
    finally:
        server.stop()


@pytest.mark.parametrize("kind", TARGETS)
async def test_trace_turned_on_traces_a_connected_client(kind: str, tmp_path: Path) -> None:
    server = start(kind, USERS, tmp_path)
    try:
        alice = await _login(server, "alice", "pa")
        rewrite(server, "trace: true\n" + USERS)
        hangup(server)
        log = await logged(server, DONE)
        assert "[INF] Reloaded: trace = true\n" in log
        await alice.send(b"PING\r\n")
        await alice.read_until(b"PONG\r\n")
        log = await logged(server, '"$G/user:alice" - ->> [PONG]')
        assert re.search(r'\[TRC\] 127\.0\.0\.1:\d+ - cid:\d+ - "\$G/user:alice" - <<- \[PING\]\n', log)
        await alice.close()
    finally:
        server.stop()


@pytest.mark.parametrize("kind", TARGETS)
async def test_an_unchanged_file_reloads_the_users_and_accounts(kind: str, tmp_path: Path) -> None:
    server = start(kind, "", tmp_path)
    try:
        hangup(server)
        log = await logged(server, DONE)
        assert re.findall(r"\[INF\] (Reloaded.*)\n", log)[:2] == ["Reloaded: authorization users", "Reloaded: accounts"]
        assert len(re.findall(r"\[INF\] Reloaded", log)) == 3
    finally:
        server.stop()


REFUSED_FILES = {
    "parse_error": ("foo = [\n", "Parse error on line 3: "),
    "unknown_field": ("foo: 1\n", 'nats-server.conf:2:1: unknown field "foo"'),
    "max_subscriptions": ("max_subscriptions: 3\n", "config reload not supported for MaxSubs: old=0, new=3"),
}


@pytest.mark.parametrize("name", sorted(REFUSED_FILES))
@pytest.mark.parametrize("kind", TARGETS)
async def test_a_file_that_cannot_be_reloaded_keeps_the_running_configuration(
    kind: str, name: str, tmp_path: Path
) -> None:
    server = start(kind, USERS, tmp_path)
    try:
        bob = await _login(server, "bob", "pb")
        added, error = REFUSED_FILES[name]
        rewrite(server, added)
        hangup(server)
        log = await logged(server, FAILED)
        line = log.split(FAILED, 1)[1].splitlines()[0]
        assert line.startswith(error) if name == "parse_error" else line.endswith(error), line
        await bob.send(b"PING\r\n")
        assert await bob.read_until(b"PONG\r\n") == b"PONG\r\n"
        await bob.close()
    finally:
        server.stop()


@pytest.mark.parametrize("kind", TARGETS)
async def test_a_new_jetstream_store_directory_is_refused(kind: str, tmp_path: Path) -> None:
    first, second = tmp_path / f"{kind}-js1", tmp_path / f"{kind}-js2"
    server = start(kind, f'jetstream {{ store_dir: "{first}" }}\n', tmp_path)
    try:
        rewrite(server, f'jetstream {{ store_dir: "{second}" }}\n')
        hangup(server)
        await logged(server, FAILED)
        log = server.log_text(since_start=True)
        assert (
            "[ERR] Failed to reload server configuration: config reload not supported for jetstream storage directory\n"
            in log
        )
    finally:
        server.stop()


@pytest.mark.parametrize("kind", TARGETS)
async def test_signal_names_the_server_by_its_pid_file(kind: str, tmp_path: Path) -> None:
    pid_file = tmp_path / f"{kind}.pid"
    server = start(kind, f'pid_file: "{pid_file}"\n', tmp_path)
    try:

        async def written() -> bool:
            return pid_file.is_file() and pid_file.read_text().strip().isdigit()

        await eventually(written, what="the pid file")
        sent = subprocess.run([*server_command(kind), "-sl", f"reload={pid_file}"], check=False, capture_output=True)
        assert (sent.returncode, sent.stderr) == (0, b"")
        await logged(server, DONE)
    finally:
        server.stop()
