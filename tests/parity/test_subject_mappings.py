"""Account subject mappings (``mappings { }``), on both targets, from the same configuration text.

Facts pinned (nats-server 2.15.1):

* a client's message on a mapped subject reaches subscribers as the
  destination subject, and a JetStream stream capturing the destination
  stores it under that subject;
* ``$n`` and ``{{wildcard(n)}}`` reorder source tokens; ``{{partition(n,i)}}``
  picks the same partition on both servers (FNV-1a);
* weighted destinations draw per message; what the weights leave below 100
  goes to the source subject itself; a destination scoped to a cluster is
  ignored by a standalone server, and replaces the unscoped ones on a server
  of that cluster;
* publish permissions are checked against the mapped subject;
* mappings are per account: the top-level block is the global account's;
* bad mappings are refused by ``nats-server -t`` with the texts fakejs gives, and so are
  import renames using functions other than wildcard references (strict transforms).
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import nats
import pytest

from tests.harness.configured import Start, configured_fixture, configured_servers
from tests.harness.targets import FAKEJS_COMMAND, REAL_BINARY, REAL_MISSING_REASON, Settings, Target
from tests.harness.wait import WAIT

MAPPINGS = """
mappings {
  "orig.one": "dest.one"
  "ord.*.*": "ord.$2.{{wildcard(1)}}"
  "part.*.*": "part.{{partition(5,1,2)}}.$1.$2"
  "w.*": [ {destination: "w.a.$1", weight: 40}, {destination: "w.b.$1", weight: "30%"},
           {destination: "w.c.$1", weight: 30, cluster: "elsewhere"} ]
  "js.>": "stored.>"
}
"""
PER_ACCOUNT = """
accounts {
  A { users: [ {user: a, password: a} ], mappings { "in": "out.a" } }
  B { users: [ {user: b, password: b} ], maps { "in": { destination: "out.b", weight: 100 } } }
}
"""
PERMISSIONS = """
mappings { "orig.*": "dest.$1" }
authorization { users [
  {user: p, password: p, permissions: {publish: ["orig.*"], subscribe: ">"}}
  {user: q, password: q, permissions: {publish: ["dest.*"], subscribe: ">"}}
] }
"""


server = configured_fixture()


async def _received(target: Target, publish: list[str], user: str = "", watch: str = ">") -> list[str]:
    """The subjects a subscriber on ``watch`` sees for messages published on ``publish``, in order."""
    creds = {"user": user, "password": user} if user else {}
    nc = await nats.connect(target.url, **creds)
    try:
        got: list[str] = []
        sub = await nc.subscribe(watch)
        await nc.flush()
        for subject in publish:
            await nc.publish(subject, b"x")
        await nc.flush()
        deadline = asyncio.get_running_loop().time() + 5
        while len(got) < len(publish) and asyncio.get_running_loop().time() < deadline:
            try:
                msg = await sub.next_msg(timeout=0.2)
            except nats.errors.TimeoutError:
                continue
            got.append(msg.subject)
        return got
    finally:
        await nc.close()


async def test_rename_reorder_and_partition(server: Start) -> None:
    target = await server(MAPPINGS)
    published = ["orig.one", "ord.x.y", "part.k.1", "part.k.2", "part.zz.99", "other"]
    got = await _received(target, published)
    # The partitions are nats-server's FNV-1a of the two tokens, modulo 5.
    assert got == ["dest.one", "ord.y.x", "part.4.k.1", "part.2.k.2", "part.1.zz.99", "other"]


async def test_weighted_destinations_cover_every_choice(server: Start) -> None:
    target = await server(MAPPINGS)
    got = await _received(target, ["w.t"] * 200)
    assert len(got) == 200
    # 40 % w.a, 30 % w.b, the 30 % left to the subject itself; the cluster-scoped entry is ignored.
    assert set(got) == {"w.a.t", "w.b.t", "w.t"}


async def test_a_stream_captures_the_destination(server: Start) -> None:
    target = await server(MAPPINGS)
    nc = await nats.connect(target.url)
    try:
        js = nc.jetstream()
        await js.add_stream(name="MAPPED", subjects=["stored.>"])
        ack = await js.publish("js.a.b", b"hello")
        assert (ack.stream, ack.seq) == ("MAPPED", 1)
        msg = await js.get_msg("MAPPED", 1)
        assert (msg.subject, msg.data) == ("stored.a.b", b"hello")
    finally:
        await nc.close()


async def test_mappings_are_per_account(server: Start) -> None:
    target = await server(PER_ACCOUNT)
    assert await _received(target, ["in"], user="a") == ["out.a"]
    assert await _received(target, ["in"], user="b") == ["out.b"]


async def test_publish_permissions_see_the_mapped_subject(server: Start) -> None:
    target = await server(PERMISSIONS)
    errors: list[str] = []

    async def on_error(error: Exception) -> None:
        errors.append(str(error))

    p = await nats.connect(target.url, user="p", password="p", error_cb=on_error)
    try:
        await p.publish("orig.x", b"")
        await p.flush()
        deadline = asyncio.get_running_loop().time() + 5
        while not errors and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.02)
    finally:
        await p.close()
    assert errors[:1] == ['nats: permissions violation for publish to "dest.x"']
    # Allowed to publish on the destination only, q may publish on the source.
    assert await _received(target, ["orig.y"], user="q") == ["dest.y"]


FAKE = FAKEJS_COMMAND
CONFIG_ERRORS = {
    "bad_source": 'mappings { "foo..bar": "x" }\n',
    "index_out_of_range": 'mappings {\n  "a.*": "b.$2"\n}\n',
    "total_weight": 'mappings {\n  "c": [ {destination: "d", weight: 60}, {destination: "e", weight: 50} ]\n}\n',
    "weight_too_big": 'mappings {\n  "h": [ {destination: "i", weight: 101} ]\n}\n',
    "weight_string": 'mappings {\n  "u": [ {destination: "v", weight: "abc"} ]\n}\n',
    "weight_float": 'mappings {\n  "w": [ {destination: "x", weight: 1.5} ]\n}\n',
    "missing_weight": 'mappings {\n  "j": [ {destination: "k"} ]\n}\n',
    "unknown_field": 'mappings {\n  "l": [ {destination: "m", weight: 10, foo: 1} ]\n}\n',
    "not_an_entry": 'mappings {\n  "n": [ "o" ]\n  "p": 5\n}\n',
    "wildcard_destination": 'mappings {\n  "q.>": "r.*"\n}\n',
    "duplicate": 'mappings {\n  "s": [ {destination: "t", weight: 50}, {destination: "t", weight: 10} ]\n}\n',
    "unknown_function": 'mappings { "y.*": "z.{{foo(1)}}" }\n',
    "account_blank": 'accounts { A { mappings { "x.*": "y.$1 .z" } } }\n',
    # Import renames are strict transforms: only wildcard references.
    "stream_import_function": (
        'accounts {\n  A { exports [ {stream: "ev.*"} ] }\n'
        '  B { imports [ {stream: {account: A, subject: "ev.*"}, to: "x.{{partition(3,1)}}"} ] }\n}\n'
    ),
    "service_import_function": (
        'accounts {\n  A { exports [ {service: "svc.*"} ] }\n'
        '  B { imports [ {service: {account: A, subject: "svc.*"}, to: "req.{{partition(3,1)}}"} ] }\n}\n'
    ),
}


def _check(command: list[str], path: Path) -> tuple[int, str]:
    out = subprocess.run([*command, "-t", "-c", str(path)], capture_output=True, text=True, timeout=30, check=False)
    return out.returncode, out.stderr


@pytest.mark.parametrize("name", sorted(CONFIG_ERRORS))
def test_config_errors(name: str, tmp_path: Path) -> None:
    if REAL_BINARY is None:
        pytest.skip(REAL_MISSING_REASON)
    path = tmp_path / "server.conf"
    path.write_text(CONFIG_ERRORS[name])
    real = _check([REAL_BINARY], path)
    assert real[0] == 1
    fake = _check(FAKE, path)
    # nats-server walks a block in Go's random map order: compare the lines, not their order (the
    # "nats-server: " prefix goes on whichever comes first).
    assert (fake[0], _lines(fake[1])) == (real[0], _lines(real[1]))
    assert fake[1].startswith("nats-server: ") == real[1].startswith("nats-server: ")


def _lines(stderr: str) -> list[str]:
    return sorted(line.removeprefix("nats-server: ") for line in stderr.splitlines())


def test_a_valid_block_passes_the_check(tmp_path: Path) -> None:
    if REAL_BINARY is None:
        pytest.skip(REAL_MISSING_REASON)
    path = tmp_path / "server.conf"
    path.write_text(MAPPINGS + PER_ACCOUNT)
    assert _check([REAL_BINARY], path)[0] == 0
    assert _check(FAKE, path)[0] == 0


CLUSTER_SCOPED = """
cluster { name: east, listen: "127.0.0.1:-1" }
mappings {
  "geo.*": [ {destination: "geo.east.$1", weight: 100, cluster: "east"}, {destination: "geo.any.$1", weight: 100} ]
}
"""


async def test_a_destination_scoped_to_the_servers_cluster_wins(target_kind: str, tmp_path: Path) -> None:
    """On a server of cluster ``east`` the ``east`` entries replace the unscoped ones."""
    async with configured_servers(target_kind, tmp_path, Settings(jetstream=False)) as start:
        target = await start(CLUSTER_SCOPED)
        nc = await nats.connect(target.url)
        try:
            sub = await nc.subscribe("geo.>")
            await nc.publish("geo.x", b"")
            msg = await sub.next_msg(timeout=WAIT)
            assert msg.subject == "geo.east.x"
        finally:
            await nc.close()
