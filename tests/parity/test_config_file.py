"""Configuration files' options: ``fakejs -c FILE`` against ``nats-server -c FILE``, both as subprocesses.

The same file goes to both.  Files nats-server refuses must be refused
with the same status and the same stderr lines (nats-server lists several
errors in the random order of a Go map walk, so lines are compared as a
set, the first one carrying the ``nats-server: `` prefix); files it
accepts must pass ``-t`` with the same digest line; files it accepts and
fakejs does not serve are refused by fakejs alone, naming the setting; and
files both serve must give clients the same INFO and JetStream answers.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import time
from pathlib import Path

import nats
import pytest

from fakejs.targets import ServerProcess
from fakejs.testkit.jwt import Operator
from tests.harness.config_file import FAKE, option_errors_alike, real, run, start_errors_alike, write
from tests.harness.targets import REAL_BINARY, REAL_MISSING_REASON, server_command
from tests.harness.wait import WAIT

pytestmark = pytest.mark.skipif(REAL_BINARY is None, reason=REAL_MISSING_REASON)


# nats-server refuses these with -t already (option errors: FILE:LINE:COL: reason, then an empty line).
OPTION_ERRORS = {
    "batch_timeout_bad": 'jetstream { limits { batch { timeout: "5x" } } }\n',
    "batch_limits_not_a_map": "jetstream { limits { batch: 5 } }\n",
    "batch_limits_unknown": "jetstream { limits { batch { nope: 5 } } }\n",
    "port_string": 'port: "4222"\n',
    "ping_interval_bad": 'ping_interval: "2x"\n',
    "ping_interval_negative_unit": 'ping_interval: "5"\n',
    "lame_duck_short": 'lame_duck_duration: "10s"\n',
    "lame_duck_integer": "lame_duck_duration: 5\n",
    "lame_duck_grace_negative": 'lame_duck_grace_period: "-1s"\n',
    "server_name_spaces": 'server_name: "a b"\n',
    "max_payload_too_big": "max_payload: 3GB\n",
    "max_control_line_too_big": "max_control_line: 3000000000\n",
    "unknown_field": "foo: 1\n",
    "several": 'foo: 1\nbar: 2\nport: "x"\n',
    "listen_no_port": 'listen: "abc"\n',
    "listen_bad_port": 'listen: "127.0.0.1:x"\n',
    "listen_bool": "listen: true\n",
    "http_bad": 'http: "x"\n',
    "debug_string": 'debug: "yes"\n',
    "max_connections_string": 'max_connections: "x"\n',
    "max_subscriptions_float": "max_subscriptions: 1.5\n",
    "max_subs_string": 'max_subs: "x"\n',
    "account_limits_not_a_map": "accounts { A: { limits: 5 } }\n",
    "account_limits_unknown": "accounts { A: { limits: { foo: 1 } } }\n",
    "account_limits_max_subs_string": 'accounts { A: { limits: { max_subs: "x" } } }\n',
    "user_max_subs": "authorization { users: [ { user: a, password: b, max_subs: 3 } ] }\n",
    "jetstream_word": "jetstream: maybe\n",
    "jetstream_extension_hint_not_a_string": "jetstream { extension_hint: 5 }\n",
    "jetstream_integer": "jetstream: 1\n",
    "jetstream_size_suffix": 'jetstream { max_mem_store: "1X" }\n',
    "jetstream_size_type": "jetstream { max_file_store: true }\n",
    "jetstream_domain_type": "jetstream {domain: 1}\n",
    "jetstream_unknown": "jetstream {foo: 1}\n",
    "jetstream_strict": "jetstream { strict: 1 }\n",
    "jetstream_buffered_msgs": 'jetstream { max_buffered_msgs: "x" }\n',
    "authorization_user_and_token": "authorization { user: a, token: b }\n",
    "authorization_timeout": 'authorization { timeout: "x" }\n',
    "authorization_unknown": "authorization { foo: 1 }\n",
    "server_tags_integers": "server_tags: [1, ]\n",
    "server_tags_integer": "server_tags: 1\n",
    "system_account_integer": "system_account: 1\n",
    "leafnodes_integer": "leafnodes: 1\n",
    "leafnodes_listen": 'leafnodes { listen: "x" }\n',
    "leafnodes_unknown": "leafnodes { foo: 1 }\n",
    "leafnodes_port_string": 'leafnodes { port: "x" }\n',
    "leafnodes_authorization_token": "leafnodes { port: -1, authorization { token: t } }\n",
    "websocket_integer": "websocket: 1\n",
    "websocket_unknown": "websocket { port: -1, no_tls: true, foo: 1 }\n",
    "websocket_port_string": 'websocket { port: "x" }\n',
    "websocket_compression_string": 'ws { port: -1, no_tls: true, compression: "yes" }\n',
    "websocket_handshake_timeout_bool": "websocket { port: -1, no_tls: true, handshake_timeout: true }\n",
    "websocket_handshake_timeout_text": 'websocket { port: -1, no_tls: true, handshake_timeout: "soon" }\n',
    "websocket_origins_integer": "websocket { port: -1, no_tls: true, allowed_origins: 1 }\n",
    "websocket_headers_string": 'websocket { port: -1, no_tls: true, headers: "x" }\n',
    "websocket_header_integer": "websocket { port: -1, no_tls: true, headers { X-A: 1 } }\n",
    "unused_variable": "X = 1\nport: 4222\n",
    "warning_fails_check": "ping_interval: 60\n",
    "empty_fails_check": "",
}

_OPERATOR = Operator()
_SYSTEM = _OPERATOR.account("SYS")
# Operator mode (a MEMORY resolver holding the system account) for the leaf node checks below.
OPERATOR_MODE = "port: -1\n" + _OPERATOR.server_config(system_account=_SYSTEM, accounts=[_SYSTEM])

# Accepted by nats-server when testing the file; refused when it starts (validateOptions).
START_ERRORS = {
    "leafnode_operator_remote_without_account": (
        OPERATOR_MODE + 'leafnodes { remotes [ { url: "nats://127.0.0.1:1" } ] }\n'
    ),
    "leafnode_operator_remote_account_name": (
        OPERATOR_MODE + 'leafnodes { remotes [ { url: "nats://127.0.0.1:1", account: A } ] }\n'
    ),
    "leafnode_operator_users": (
        OPERATOR_MODE + "leafnodes { port: -1, authorization { users [ {user: u, password: p} ] } }\n"
    ),
    "leafnode_operator_port_account_name": OPERATOR_MODE + "leafnodes { port: -1, authorization { account: A } }\n",
    # nats-server checks the hint in a cluster only (lowered first).
    "jetstream_extension_hint_invalid_in_cluster": (
        'port: -1\nserver_name: a\ncluster { name: c, listen: "127.0.0.1:-1" }\njetstream { extension_hint: Bogus }\n'
    ),
    "payload_over_pending": "port: -1\nmax_payload: 100MB\n",
    "grace_not_below_duration": 'port: -1\nlame_duck_duration: "60s"\nlame_duck_grace_period: "2m"\n',
    "websocket_without_tls": "port: -1\nwebsocket { port: -1 }\n",
    "websocket_origin_scheme": 'port: -1\nwebsocket { port: -1, no_tls: true, allowed_origins: ["ftp://x"] }\n',
    "websocket_origin_relative": 'port: -1\nwebsocket { port: -1, no_tls: true, allowed_origins: ["x"] }\n',
    "websocket_header_forbidden": 'port: -1\nwebsocket { port: -1, no_tls: true, headers { Upgrade: "x" } }\n',
    "websocket_header_prefix": 'port: -1\nwebsocket { port: -1, no_tls: true, headers { Sec-WebSocket-Foo: "x" } }\n',
    "websocket_no_auth_user_without_users": "port: -1\nwebsocket { port: -1, no_tls: true, no_auth_user: x }\n",
    "websocket_no_auth_user_unknown": (
        "port: -1\nauthorization { users: [{user: a, password: a}] }\n"
        "websocket { port: -1, no_tls: true, no_auth_user: x }\n"
    ),
    "websocket_user_with_users": (
        "port: -1\nauthorization { users: [{user: a, password: a}] }\n"
        "websocket { port: -1, no_tls: true, authorization { user: w, password: w } }\n"
    ),
    "websocket_token_with_users": (
        "port: -1\nauthorization { users: [{user: a, password: a}] }\n"
        "websocket { port: -1, no_tls: true, authorization { token: t } }\n"
    ),
    "websocket_jwt_cookie_without_operator": 'port: -1\nwebsocket { port: -1, no_tls: true, jwt_cookie: "jwt" }\n',
    "mqtt_without_jetstream": "port: -1\nmqtt { port: -1 }\n",
    "no_auth_user_without_users": "port: -1\nno_auth_user: bob\n",
    "jetstream_cluster_without_server_name": 'port: -1\ncluster { listen: "127.0.0.1:-1" }\njetstream: enabled\n',
    "jetstream_cluster_without_cluster_name": (
        'port: -1\nserver_name: a\ncluster { listen: "127.0.0.1:-1" }\njetstream: enabled\n'
    ),
    "jetstream_domain_with_dot": 'port: -1\njetstream { domain: "a.b" }\n',
    "jetstream_domain_with_space": 'port: -1\njetstream { domain: "a b" }\n',
    "system_account_missing": 'port: -1\nsystem_account: "SYS"\n',
}

# nats-server serves these; fakejs refuses to start, naming what it does not serve.
FAKEJS_REFUSES = {
    "leafnode_remote_websocket": (
        'leafnodes { remotes: [ { url: "ws://127.0.0.1:7422" } ] }\n',
        "leaf node connections over WebSocket (url)",
    ),
    "jetstream_extension_hint_will_extend": (
        "jetstream { extension_hint: will_extend }\n",
        "a JetStream extended over a leaf node (jetstream { extension_hint: will_extend })",
    ),
    "leafnode_compression": ("leafnodes { port: -1, compression: s2_fast }\n", "leafnodes { compression }"),
    "cluster_tls": ('cluster { listen: "127.0.0.1:-1", tls: {} }\n', "TLS between routes"),
    "account_limits": (
        "accounts { A: { limits: { max_connections: 1 } } }\n",
        "account connection limits (max_connections)",
    ),
    "jetstream_encryption": ('jetstream { key: "s3cr3t" }\n', "encryption at rest"),
    "jetstream_api_limits": ("jetstream { limits { max_ack_pending: 10 } }\n", "server-wide JetStream API limits"),
}

# A file with every key fakejs maps (the nats.js harness's defaults among them).
EVERY_KEY = """
listen: "127.0.0.1:-1"
host: 127.0.0.1
port: -1
server_name: every_key
http: "127.0.0.1:-1"
http_base_path: "/"
ports_file_dir: "{tmp}"
max_payload: 2MB
max_control_line: 8KB
max_pending: 32MB
max_connections: 100
max_subscriptions: 1000
ping_interval: "30s"
ping_max: 3
write_deadline: "5s"
lame_duck_duration: "45s"
lame_duck_grace_period: "5s"
debug: false
trace: false
trace_verbose: false
logtime: true
logtime_utc: false
log_file: "{tmp}/server.log"
pid_file: "{tmp}/server.pid"
server_tags: ["id:1", "region:x"]
no_auth_user: ""
system_account: "$SYS"
connect_error_reports: 10
no_sublist_cache: false
leafnodes { listen: "127.0.0.1:-1" }
websocket { port: -1, no_tls: true }
jetstream {
  enabled: true
  store_dir: "{tmp}/js"
  max_mem_store: 1MB
  max_file_store: "10M"
  max_buffered_size: 1Gb
  max_buffered_msgs: 20000
  sync_interval: "2m"
  unique_tag: "az"
  max_outstanding_catchup: 64MB
  request_queue_limit: 10000
  strict: true
  limits { batch { max_inflight_per_stream: 10, max_inflight_total: 100, max_msgs: 50, timeout: "5s" } }
}
authorization { user: u, password: p, timeout: 3 }
"""


@pytest.mark.parametrize("name", sorted(OPTION_ERRORS))
def test_option_errors(name: str, tmp_path: Path) -> None:
    fake_err = option_errors_alike(write(tmp_path, OPTION_ERRORS[name]))
    assert fake_err.endswith("\n\n")


@pytest.mark.parametrize("name", sorted(START_ERRORS))
def test_start_errors(name: str, tmp_path: Path) -> None:
    start_errors_alike(write(tmp_path, START_ERRORS[name]))


@pytest.mark.parametrize("name", sorted(FAKEJS_REFUSES))
def test_fakejs_refuses_what_it_does_not_serve(name: str, tmp_path: Path) -> None:
    text, feature = FAKEJS_REFUSES[name]
    path = write(tmp_path, text)
    assert run(real(), "-t", "-c", path)[0] == 0
    status, stderr = run(FAKE, "-c", path)
    assert status == 1
    assert stderr.startswith(f"fakejs: {path}:") and feature in stderr and "not supported by fakejs yet" in stderr


def test_valid_file_digest(tmp_path: Path) -> None:
    """Every supported key at once: -t passes on both with the same digest line."""
    path = write(tmp_path, EVERY_KEY.replace("{tmp}", str(tmp_path)))
    real_status, real_err = run(real(), "-t", "-c", path)
    fake_status, fake_err = run(FAKE, "-t", "-c", path)
    assert real_status == 0, real_err
    assert (fake_status, fake_err) == (real_status, real_err)
    assert fake_err.startswith(f"nats-server: configuration file {path} is valid (sha256:")


def test_missing_include_and_parse_error(tmp_path: Path) -> None:
    for text in ('include "nope.conf"\n', "port: [1\n", "a {\n"):
        path = write(tmp_path, text)
        assert run(FAKE, "-c", path) == run(real(), "-c", path)


# -- flags read before the file ----------------------------------------------------------------

# A file setting what a flag already set: nats-server reads its flags once before the file, so the file's
# check sees the flag's value (the store directory twice, a user with accounts).  The file, the flags, and
# where in the file the error points.
FLAGS_BEFORE_FILE = {
    "jetstream_store_dir_and_sd": ('jetstream { store_dir: "{dir}/x" }\n', ["-sd", "{dir}/y"], "1:12"),
    "jetstream_store_and_store_dir": ('jetstream { store: "{dir}/x" }\n', ["--store_dir", "{dir}/y"], "1:12"),
    "store_dir_and_sd": ('store_dir: "{dir}/x"\njetstream: enabled\n', ["-sd", "{dir}/y"], "1:0"),
    "store_dir_and_sd_check_only": ('storedir: "{dir}/x"\n', ["-t", "-sd", "{dir}/y"], "1:0"),
}


@pytest.mark.parametrize("name", sorted(FLAGS_BEFORE_FILE))
def test_store_dir_in_the_file_and_on_the_command_line(target_kind: str, name: str, tmp_path: Path) -> None:
    """nats-server refuses ``-sd`` with a file that sets the store directory too: so does fakejs, byte for byte."""
    text, flags, position = FLAGS_BEFORE_FILE[name]
    path = write(tmp_path, text.replace("{dir}", str(tmp_path)))
    argv = [flag.replace("{dir}", str(tmp_path)) for flag in flags]
    expected = f"nats-server: {path}:{position}: Duplicate 'store_dir' configuration\n\n"
    assert run(server_command(target_kind), "-c", path, "-p", "-1", *argv) == (1, expected)


def test_user_flag_with_accounts_in_the_file(target_kind: str, tmp_path: Path) -> None:
    path = write(tmp_path, "accounts { A { users: [ {user: a, password: b} ] } }\n")
    expected = f"nats-server: {path}:1:15: Can not have a single user/pass and accounts\n\n"
    assert run(server_command(target_kind), "-c", path, "-p", "-1", "--user", "x") == (1, expected)


# -- files both serve -------------------------------------------------------------------------


def read_info(port: int) -> dict[str, object]:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        data = b""
        while b"\r\n" not in data:
            data += conn.recv(4096)
    line = data.split(b"\r\n", 1)[0]
    assert line.startswith(b"INFO ")
    info: dict[str, object] = json.loads(line[5:])
    return info


SERVED = {
    "jetstream_extension_hint_no_extend": "port: -1\njetstream { extension_hint: no_extend }\n",
    "jetstream_extension_hint_unchecked_alone": "port: -1\njetstream { extension_hint: anything }\n",
    "defaults_jetstream_off": "port: -1\n",
    "limits": "port: -1\nmax_payload: 64KB\nserver_name: limits\njetstream: enabled\n",
    "listen_and_name": 'listen: "127.0.0.1:-1"\nserver_name: srv_1\njetstream { max_mem_store: 1MB, max_file_store: 1MB }\n',
    "jetstream_disabled_block": "port: -1\njetstream { enabled: false }\n",
    "nats_js_default": (
        'host: 127.0.0.1\nport: -1\nhttp: "127.0.0.1:-1"\nleafnodes { listen: "127.0.0.1:-1" }\n'
        'server_tags: ["id:x"]\nwebsocket { port: -1, no_tls: true }\n'
        "jetstream { max_file_store: 1048576, max_mem_store: 1048576 }\n"
    ),
}
INFO_FIELDS = ("max_payload", "server_name", "jetstream", "headers", "auth_required", "proto")


def _start(command: list[str] | None, text: str, tmp_path: Path, name: str) -> ServerProcess:
    """A server (the real one without ``command``) started with ``-c`` on ``text``, its store under tmp_path."""
    store = tmp_path / name
    store.mkdir()
    if command is None:
        return ServerProcess(REAL_BINARY, config=text, store_dir=str(store)).start()
    return ServerProcess(command=command, config=text, store_dir=str(store)).start()


async def js_info(url: str) -> dict[str, object]:
    nc = await nats.connect(url)
    try:
        try:
            reply = await nc.request("$JS.API.INFO", b"", timeout=WAIT)
        except nats.errors.NoRespondersError:
            return {"error": "no responders"}  # JetStream off
        info: dict[str, object] = json.loads(reply.data)
        return info
    finally:
        await nc.close()


@pytest.mark.parametrize("name", sorted(SERVED))
async def test_served(name: str, tmp_path: Path) -> None:
    text = SERVED[name]
    if "store_dir" not in text and "jetstream" in text:
        text = text.replace("jetstream", 'store_dir: "{store}"\njetstream', 1)
    real_server = _start(None, text.replace("{store}", str(tmp_path / "rs")), tmp_path, "real")
    fake_server = _start(FAKE, text.replace("{store}", str(tmp_path / "fs")), tmp_path, "fake")
    try:
        real_info, fake_info = read_info(real_server.port), read_info(fake_server.port)
        for key in INFO_FIELDS:
            if key == "server_name" and "server_name" not in text:
                continue  # generated: the server id
            assert fake_info.get(key) == real_info.get(key), key
        if "host:" in text or "listen:" in text:  # fakejs's own default address is 127.0.0.1
            assert fake_info["host"] == real_info["host"]
        assert fake_info["port"] == fake_server.port and real_info["port"] == real_server.port
        real_js, fake_js = await js_info(real_server.url), await js_info(fake_server.url)
        assert ("error" in fake_js) == ("error" in real_js)
        if "error" in real_js:
            assert fake_js["error"] == real_js["error"]
        else:
            assert fake_js["limits"] == real_js["limits"]
    finally:
        real_server.stop()
        fake_server.stop()


async def test_flags_override_the_file(tmp_path: Path) -> None:
    """``-c FILE`` then flags: the flags win, as nats-server parses them again over the file."""
    text = "port: 4999\nserver_name: from_file\nmax_payload: 64KB\n"
    infos = []
    for kind, command in (("real", real()), ("fake", FAKE)):
        store = tmp_path / kind
        store.mkdir()
        path = write(store, text)
        process = subprocess.Popen(
            [*command, "-c", path, "-p", "-1", "--server_name", "from_flag", "--ports_file_dir", str(store)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            ports = store / f"nats-server_{process.pid}.ports"
            deadline = time.monotonic() + 15
            while not ports.exists() or not ports.read_text():
                assert time.monotonic() < deadline and process.poll() is None
                await asyncio.sleep(0.02)
            url = json.loads(ports.read_text())["nats"][0]
            infos.append(read_info(int(url.rsplit(":", 1)[1])))
        finally:
            process.terminate()
            process.wait(10)
    real_info, fake_info = infos
    assert real_info["server_name"] == fake_info["server_name"] == "from_flag"
    assert real_info["max_payload"] == fake_info["max_payload"] == 65536
    assert fake_info["port"] != 4999 and real_info["port"] != 4999


async def test_warnings_print_and_the_server_starts(tmp_path: Path) -> None:
    """An integer ping_interval is a warning: printed (no prefix) before the log, and the server runs."""
    text = "port: -1\nping_interval: 60\n"
    logs = []
    for name, command in (("real", None), ("fake", FAKE)):
        server = _start(command, text, tmp_path, name)
        try:
            logs.append(server.log_text().split("\n", 1)[0])
        finally:
            server.stop()
    real_first, fake_first = logs
    assert fake_first.replace(str(tmp_path / "fake"), "DIR") == real_first.replace(str(tmp_path / "real"), "DIR")
    assert fake_first.endswith('invalid use of field "ping_interval": ping_interval should be converted to a duration')


async def test_max_connections(tmp_path: Path) -> None:
    """Beyond max_connections a client gets INFO, then -ERR 'maximum connections exceeded', then EOF."""
    text = "port: -1\nmax_connections: 1\n"
    answers = []
    for name, command in (("real", None), ("fake", FAKE)):
        server = _start(command, text, tmp_path, name)
        try:
            with socket.create_connection(("127.0.0.1", server.port), timeout=5) as first:
                # nats-server sends INFO before it counts the connection; its PONG comes after.
                first.sendall(b"CONNECT {}\r\nPING\r\n")
                greeting = b""
                while b"PONG\r\n" not in greeting:
                    chunk = first.recv(4096)
                    assert chunk, greeting
                    greeting += chunk
                with socket.create_connection(("127.0.0.1", server.port), timeout=5) as second:
                    data = b""
                    while chunk := second.recv(4096):
                        data += chunk
            answers.append(data.split(b"\r\n", 1)[1])
        finally:
            server.stop()
    assert answers[0] == answers[1] == b"-ERR 'maximum connections exceeded'\r\n"


async def test_server_store_limits(tmp_path: Path) -> None:
    """jetstream { max_mem_store, max_file_store }: once a store is over its limit, publishes are refused."""
    replies = []
    for name, command in (("real", None), ("fake", FAKE)):
        text = f'port: -1\njetstream {{ max_mem_store: 1KB, max_file_store: 2KB, store_dir: "{tmp_path / name}-js" }}\n'
        server = _start(command, text, tmp_path, name)
        try:
            nc = await nats.connect(server.url)
            js = nc.jetstream()
            seen = []
            for storage in ("memory", "file"):
                await js.add_stream(name=storage.upper(), subjects=[f"{storage}.>"], storage=storage)
                for _ in range(5):
                    reply = await nc.request(f"{storage}.x", b"x" * 600, timeout=WAIT)
                    seen.append(reply.data)
                info = await js.stream_info(storage.upper())
                seen.append(b"%d msgs, %d bytes" % (info.state.messages, info.state.bytes))
            await nc.close()
            replies.append(seen)
            assert "resource limits exceeded for server" in server.log_text()
        finally:
            server.stop()
    assert replies[0] == replies[1]
    assert b"insufficient resources" in replies[1][2]
