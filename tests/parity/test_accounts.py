"""Accounts from one ``accounts`` block, on both targets: separate subjects, users and JetStream.

Both servers start from the same configuration text (the real one reads
it from its file, fakejs gets the options the text maps onto).
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

from tests.harness.configured import Start, configured_servers
from tests.harness.monitoring import monitor
from tests.harness.targets import FAKEJS_COMMAND, REAL_BINARY, REAL_MISSING_REASON, Settings, Target
from tests.harness.wait import WAIT, eventually

ACCOUNTS = """
accounts {
  A { users: [ {user: a, password: a} ], jetstream: enabled }
  B { users: [ {user: b, password: b} ], jetstream: true }
  C { users: [ {user: c, password: c} ] }
  L {
    users: [ {user: l, password: l} ]
    jetstream: { max_mem: 1M, max_file: 1G, max_streams: 10, max_consumers: 20, max_ack_pending: 30,
                 mem_max_stream_bytes: 1000, disk_max_stream_bytes: 2000, max_bytes_required: true }
  }
}
no_auth_user: b
"""
NOT_ENABLED = {"code": 503, "err_code": 10039, "description": "JetStream not enabled for account"}


@pytest.fixture
async def server(target_kind: str, tmp_path: Path) -> AsyncIterator[Start]:
    async with configured_servers(target_kind, tmp_path, Settings(monitor=True)) as start:
        yield start


async def connect(target: Target, user: str | None) -> nats.NATS:
    if user is None:
        return await nats.connect(target.url)
    return await nats.connect(target.url, user=user, password=user)


async def raw_session(target: Target, connect: dict[str, object], then: bytes = b"", replies: int = 0) -> bytes:
    """The bytes a client gets after its CONNECT (and ``then``) and a PING.

    An accepted client's first PONG is followed by an INFO (``connect_info``),
    which nats-server may write in a later packet: it is waited for too, and
    so are ``replies`` messages (nats-server answers API requests from
    another goroutine, after the PONG), then anything more that comes until
    it is quiet.
    """
    reader, writer = await asyncio.open_connection("127.0.0.1", target.port)
    try:
        await reader.readline()  # the greeting
        options = {"verbose": False, "protocol": 1, "headers": True, **connect}
        writer.write(b"CONNECT " + json.dumps(options).encode() + b"\r\n" + then + b"PING\r\n")
        data = b""
        while b"PONG\r\n" not in data or b"INFO " not in data or data.count(b"MSG ") < replies:
            chunk = await asyncio.wait_for(reader.read(65536), 10)
            if not chunk:
                return data
            data += chunk
        if then:  # replies may follow the PONG: take what comes until it is quiet
            while True:
                try:
                    chunk = await asyncio.wait_for(reader.read(65536), 0.5)
                except TimeoutError:
                    break
                if not chunk:
                    break
                data += chunk
        return data
    finally:
        writer.close()


def connect_info(data: bytes) -> dict[str, object]:
    line = next(line for line in data.split(b"\r\n") if line.startswith(b"INFO "))
    info: dict[str, object] = json.loads(line[5:])
    return info


async def test_subjects_are_separate(server: Start) -> None:
    target = await server(ACCOUNTS)
    a, b, a2 = await connect(target, "a"), await connect(target, "b"), await connect(target, "a")
    try:
        got: dict[str, list[bytes]] = {"a": [], "b": []}

        async def on_a(msg: nats.aio.msg.Msg) -> None:
            got["a"].append(msg.data)

        async def on_b(msg: nats.aio.msg.Msg) -> None:
            got["b"].append(msg.data)

        await a.subscribe("x.>", cb=on_a)
        await b.subscribe("x.>", cb=on_b)
        await a.flush()
        await b.flush()
        await b.publish("x.1", b"from b")
        await a2.publish("x.2", b"from a")
        await a2.flush()
        await b.flush()
        await eventually(lambda: asyncio.sleep(0, got), lambda got: got["a"] and got["b"], what="both messages")
        assert got == {"a": [b"from a"], "b": [b"from b"]}
        await a.subscribe("y.svc", cb=on_a)  # a responder in A is none for B
        await a.flush()
        with pytest.raises(nats.errors.NoRespondersError):
            await b.request("y.svc", b"", timeout=1)
    finally:
        for nc in (a, b, a2):
            await nc.close()


async def test_info_names_the_account(server: Start) -> None:
    target = await server(ACCOUNTS)
    for user, account in (("a", "A"), ("c", "C"), ("l", "L")):
        info = connect_info(await raw_session(target, {"verbose": False, "user": user, "pass": user}))
        assert (info["remote_account"], info["connect_info"], info["jetstream"]) == (account, True, True)
    # The no_auth_user lands in its account.
    info = connect_info(await raw_session(target, {"verbose": False}))
    assert info["remote_account"] == "B"
    data = await raw_session(target, {"verbose": False, "user": "a", "pass": "b"})
    assert b"-ERR 'Authorization Violation'" in data


async def test_each_account_has_its_own_jetstream(server: Start) -> None:
    target = await server(ACCOUNTS)
    a, b = await connect(target, "a"), await connect(target, None)  # b: the no_auth_user
    try:
        for nc, count in ((a, 2), (b, 1)):
            js = nc.jetstream()
            await js.add_stream(name="S", subjects=["s.>"])
            for i in range(count):
                await js.publish(f"s.{i}", b"x")
        for nc, count in ((a, 2), (b, 1)):
            info = await nc.jetstream().stream_info("S")
            assert info.state.messages == count
            reply = json.loads((await nc.request("$JS.API.INFO", b"", timeout=WAIT)).data)
            assert reply["streams"] == 1 and reply["limits"]["max_streams"] == -1
        # The other account's stream subjects are not captured.
        await b.publish("s.9", b"y")
        await b.flush()
        await asyncio.sleep(0.1)
        assert (await a.jetstream().stream_info("S")).state.messages == 2
    finally:
        await a.close()
        await b.close()


async def test_account_limits_in_account_info(server: Start) -> None:
    target = await server(ACCOUNTS)
    nc = await connect(target, "l")
    try:
        reply = json.loads((await nc.request("$JS.API.INFO", b"", timeout=WAIT)).data)
        assert reply["limits"] == {
            "max_memory": 1_000_000,
            "max_storage": 1_000_000_000,
            "max_streams": 10,
            "max_consumers": 20,
            "max_ack_pending": 30,
            "memory_max_stream_bytes": 1000,
            "storage_max_stream_bytes": 2000,
            "max_bytes_required": True,
        }
        assert reply["streams"] == 0
    finally:
        await nc.close()


async def test_account_without_jetstream(server: Start) -> None:
    target = await server(ACCOUNTS)
    requests = (
        b"SUB r.> 1\r\n"
        b"PUB $JS.API.INFO r.info 0\r\n\r\n"
        b"PUB $JS.API.STREAM.NAMES r.names 0\r\n\r\n"
        b"PUB $JS.API.STREAM.CREATE.S r.create 2\r\n{}\r\n"
        b"PUB $JS.API.NOPE r.nope 0\r\n\r\n"
    )
    data = await raw_session(target, {"verbose": False, "user": "c", "pass": "c"}, requests, replies=3)
    error = json.dumps(NOT_ENABLED, separators=(",", ":"))
    info = '{"type":"io.nats.jetstream.api.v1.account_info_response","error":' + error + "}"
    names = (
        '{"type":"io.nats.jetstream.api.v1.stream_names_response","error":'
        + error
        + ',"total":0,"offset":0,"limit":0,"streams":null}'
    )
    create = '{"type":"io.nats.jetstream.api.v1.stream_create_response","error":' + error + "}"
    for subject, body in (("r.info", info), ("r.names", names), ("r.create", create)):
        assert f"MSG {subject} 1 {len(body)}\r\n{body}\r\n".encode() in data
    assert b"r.nope" not in data


async def test_restart_keeps_each_accounts_streams(server: Start) -> None:
    target = await server(ACCOUNTS)
    for user, count in (("a", 3), ("b", 1)):
        nc = await connect(target, user)
        js = nc.jetstream()
        await js.add_stream(name="F", subjects=["f.>"], storage="file")
        for i in range(count):
            await js.publish(f"f.{i}", f"{user}{i}".encode())
        await nc.close()
    await target.restart()
    for user, count in (("a", 3), ("b", 1)):
        nc = await connect(target, user)
        js = nc.jetstream()
        info = await js.stream_info("F")
        assert info.state.messages == count
        assert (await js.get_msg("F", 1)).data == f"{user}0".encode()
        await nc.close()


async def test_key_value_in_an_account(server: Start) -> None:
    target = await server(ACCOUNTS)
    a, b = await connect(target, "a"), await connect(target, "b")
    try:
        kv = await a.jetstream().create_key_value(bucket="cfg")
        await kv.put("k", b"v1")
        assert (await kv.get("k")).value == b"v1"
        with pytest.raises(nats.js.errors.BucketNotFoundError):
            await b.jetstream().key_value("cfg")
    finally:
        await a.close()
        await b.close()


async def test_monitoring_names_accounts(server: Start) -> None:
    target = await server(ACCOUNTS)
    a, b = await connect(target, "a"), await connect(target, None)
    try:
        await a.jetstream().add_stream(name="S", subjects=["s.>"])
        connz = await monitor(target, "/connz?auth=1")
        connections = connz["connections"]
        assert isinstance(connections, list)
        seen = sorted((c["authorized_user"], c["account"], c["name_tag"]) for c in connections)
        assert seen == [("a", "A", "A"), ("b", "B", "B")]
        only_a = await monitor(target, "/connz?acc=A")
        assert only_a["num_connections"] == 1
        jsz = await monitor(target, "/jsz?accounts=true")
        details = jsz["account_details"]
        assert isinstance(details, list)
        assert (jsz["accounts"], jsz["streams"], jsz["total"]) == (3, 1, 3)
        assert [d["name"] for d in details] == ["A", "B", "L"]
        assert [d["reserved_memory"] for d in details] == [2**64 - 1, 2**64 - 1, 1_000_000]
    finally:
        await a.close()
        await b.close()


# -- configuration errors, from the binaries' command lines ---------------------------------------

FAKE = FAKEJS_COMMAND
OPTION_ERRORS = {
    "reserved": "accounts { $G { users: [ {user: a, password: a} ] } }\n",
    "duplicate_user": "accounts { A { users: [ {user: a, password: a} ] }, B { users: [ {user: a, password: b} ] } }\n",
    "jetstream_value": "accounts { A { jetstream: maybe } }\n",
    "jetstream_type": "accounts { A { jetstream: 5 } }\n",
    "jetstream_size": 'accounts { A { jetstream: { max_mem: "x" } } }\n',
    "jetstream_tiers": "accounts { A { jetstream: { tiers: { R1: { max_mem: 1 } } } } }\n",
    "unknown_field": "accounts { A { foo: 1 } }\n",
    "not_a_map": "accounts { A: 1 }\n",
    "users_not_a_list": "accounts { A { users: 1 } }\n",
    "account_nkey": "accounts { A { nkey: x } }\n",
}
START_ERRORS = {
    "system_account_unknown": "port: -1\nsystem_account: X\naccounts { A { } }\n",
    "no_auth_user_unknown": "port: -1\nno_auth_user: z\naccounts { A { users: [ {user: a, password: a} ] } }\n",
}


def run(command: list[str], *args: str) -> tuple[int, str]:
    out = subprocess.run([*command, *args], capture_output=True, text=True, timeout=30, check=False)
    return out.returncode, out.stderr


@pytest.fixture
def real_binary() -> list[str]:
    if REAL_BINARY is None:
        pytest.skip(REAL_MISSING_REASON)
    return [REAL_BINARY]


@pytest.mark.parametrize("name", sorted(OPTION_ERRORS))
def test_option_errors(name: str, tmp_path: Path, real_binary: list[str]) -> None:
    path = tmp_path / "server.conf"
    path.write_text(OPTION_ERRORS[name])
    real = run(real_binary, "-t", "-c", str(path))
    assert real[0] == 1
    fake = run(FAKE, "-t", "-c", str(path))
    if name not in MAP_ORDER:
        assert fake == real
        return
    # nats-server walks the accounts in Go's random map order: the duplicate is reported at the
    # ``users`` of whichever account it meets second.  The text is the same; the place is one of those.
    assert (fake[0], _unplaced(fake[1])) == (real[0], _unplaced(real[1]))
    places = {f"{path}:1:{found.start()}:" for found in re.finditer("users", OPTION_ERRORS[name])}
    assert any(place in fake[1] for place in places) and any(place in real[1] for place in places)


# Option errors whose place depends on nats-server's map order.
MAP_ORDER = {"duplicate_user"}


def _unplaced(text: str) -> str:
    return re.sub(r":\d+:\d+: ", ": ", text)


@pytest.mark.parametrize("name", sorted(START_ERRORS))
def test_start_errors(name: str, tmp_path: Path, real_binary: list[str]) -> None:
    path = tmp_path / "server.conf"
    path.write_text(START_ERRORS[name])
    assert run(real_binary, "-t", "-c", str(path))[0] == 0
    real = run(real_binary, "-c", str(path))
    assert real[0] == 1
    assert run(FAKE, "-c", str(path)) == real
