"""``/routez`` of a two-server cluster, the same check on nats-server and on fakejs.

Both kinds run as subprocesses with the same flags (``-a 127.0.0.1 -p -1
-m -1 --cluster nats://127.0.0.1:-1 --cluster_name C -n NAME``, B with
``--routes`` to A's route port), their ports read from the ports file.
Facts pinned (read off the 2.15.1 binary):

* the document is ``server_id, server_name, now, num_routes, routes``;
  ``num_routes`` counts the entries;
* one entry per route connection: a pool of 3 gives 3 entries per remote
  server, none of which names its pool slot (there is no ``pool_idx``);
* an entry's fields, in order: ``rid, remote_id, remote_name, did_solicit,
  is_configured, ip, port, start, last_activity, rtt, uptime, idle,
  pending_size, in_msgs, out_msgs, in_bytes, out_bytes, subscriptions``,
  ``subscriptions_list`` (``subs=1``) or ``subscriptions_list_detail``
  (``subs=detail``) when the route has subscriptions, ``account`` on a
  dedicated route, ``compression`` (``off``);
* the server that dialled says ``did_solicit``/``is_configured`` true and
  shows the remote's route port; the one that accepted says false and shows
  the dialler's ephemeral port;
* a client's subscriptions on A appear on one of B's pool connections (the
  one carrying ``$G``) with ``sid`` ``R $G <subject>[ <queue>]`` and the
  route's ``rid`` as ``cid``.

* the dialling server also opens a route dedicated to ``$SYS`` (one more
  entry, with ``account``, the same remote and ``did_solicit``), and the
  system subscriptions travel there, so only subjects outside ``$SYS`` are
  compared.
"""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.harness.targets import FAKEJS_COMMAND, REAL_BINARY, REAL_MISSING_REASON

pytestmark = pytest.mark.skipif(REAL_BINARY is None, reason=REAL_MISSING_REASON)

FAKEJS = FAKEJS_COMMAND
POOL = 3  # nats-server's default route pool size
DEADLINE = 10.0
ENTRY_KEYS = [
    "rid",
    "remote_id",
    "remote_name",
    "did_solicit",
    "is_configured",
    "ip",
    "port",
    "start",
    "last_activity",
    "rtt",
    "uptime",
    "idle",
    "pending_size",
    "in_msgs",
    "out_msgs",
    "in_bytes",
    "out_bytes",
    "subscriptions",
]
RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")
GO_DURATION = re.compile(r"(0s|[0-9.]+(ns|µs|ms|s|m|h))+")
UPTIME = re.compile(r"(\d+[ydhm])*\d+s")


class Node:
    """One server of the cluster, started with the shared flags; its ports from the ports file."""

    def __init__(self, command: list[str], directory: Path, name: str, *flags: str) -> None:
        directory.mkdir()
        argv = [*command, "-a", "127.0.0.1", "-p", "-1", "-m", "-1", "--ports_file_dir", str(directory)]
        argv += ["--cluster", "nats://127.0.0.1:-1", "--cluster_name", "C", "-n", name, *flags]
        self.log = open(directory / "server.log", "wb")  # noqa: SIM115 - closed by stop()
        self.process = subprocess.Popen(argv, stdout=self.log, stderr=self.log)
        path = directory / f"nats-server_{self.process.pid}.ports"
        deadline = time.monotonic() + 15
        while not (path.exists() and path.stat().st_size):
            assert self.process.poll() is None, (directory / "server.log").read_text()
            assert time.monotonic() < deadline, f"no ports file from {command}"
            time.sleep(0.02)
        ports = json.loads(path.read_text())
        self.port = _port(ports["nats"][0])
        self.http_port = _port(ports["monitoring"][0])
        self.cluster_port = _port(ports["cluster"][0])

    def get(self, path: str) -> tuple[int, bytes]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}{path}", timeout=5) as answer:
                return answer.status, answer.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def routez(self, query: str = "") -> dict[str, Any]:
        status, body = self.get("/routez" + query)
        assert status == 200, body
        doc: dict[str, Any] = json.loads(body)
        return doc

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def _pool_entries(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [route for route in doc["routes"] if "account" not in route]


def _user_subjects(route: dict[str, Any]) -> list[str]:
    return sorted(s for s in route.get("subscriptions_list", []) if not s.startswith("$SYS."))


def _wait_for(check: Any, what: str) -> Any:
    deadline = time.monotonic() + DEADLINE
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def _expected_keys(route: dict[str, Any], listed: str) -> list[str]:
    keys = list(ENTRY_KEYS)
    if route["subscriptions"]:
        keys.append(listed)
    if route.get("account"):
        keys.append("account")
    return [*keys, "compression"]


def _check_entries(doc: dict[str, Any], remote: dict[str, Any], dialled: bool, listed: str) -> None:
    assert list(doc) == ["server_id", "server_name", "now", "num_routes", "routes"]
    assert doc["num_routes"] == len(doc["routes"])
    assert RFC3339.fullmatch(doc["now"])
    for route in doc["routes"]:
        assert list(route) == _expected_keys(route, listed), route
        assert route.get("account", "$SYS") == "$SYS"
    pool = _pool_entries(doc)
    assert len(pool) == POOL
    for route in pool:
        assert (route["remote_id"], route["remote_name"]) == (remote["server_id"], remote["server_name"])
        assert (route["did_solicit"], route["is_configured"]) == (dialled, dialled)
        assert route["ip"] == "127.0.0.1" and route["compression"] == "off"
        assert RFC3339.fullmatch(route["start"]) and RFC3339.fullmatch(route["last_activity"])
        assert GO_DURATION.fullmatch(route["rtt"]), route["rtt"]
        assert UPTIME.fullmatch(route["uptime"]) and UPTIME.fullmatch(route["idle"])
        assert route["pending_size"] >= 0 and route["subscriptions"] >= 0
    assert len({route["rid"] for route in pool}) == POOL
    dedicated = [route for route in doc["routes"] if "account" in route]
    assert [(route["account"], route["remote_id"], route["did_solicit"]) for route in dedicated] == [
        ("$SYS", remote["server_id"], dialled)
    ]


@pytest.mark.parametrize("kind", ["fake", "real"])
def test_routez_of_a_two_server_cluster(tmp_path: Path, kind: str) -> None:
    command = FAKEJS if kind == "fake" else [str(REAL_BINARY)]
    a = b = None
    client = None
    try:
        a = Node(command, tmp_path / "a", "A")
        b = Node(command, tmp_path / "b", "B", "--routes", f"nats://127.0.0.1:{a.cluster_port}")
        for node in (a, b):
            _wait_for(lambda node=node: node.routez()["num_routes"] == POOL + 1, f"{kind}: the pool and $SYS's route")
        # A client on A subscribes; B learns it over the pool connection carrying $G.
        client = _subscriber(a.port)
        found = _wait_for(
            lambda: [r for r in _pool_entries(b.routez("?subs=1")) if _user_subjects(r)], f"{kind}: interest"
        )
        assert len(found) == 1 and _user_subjects(found[0]) == ["routez.probe.>", "routez.q"]
        a_doc, b_doc = a.routez("?subs=1"), b.routez("?subs=1")
        assert (a_doc["server_name"], b_doc["server_name"]) == ("A", "B")
        _check_entries(b_doc, a_doc, dialled=True, listed="subscriptions_list")
        _check_entries(a_doc, b_doc, dialled=False, listed="subscriptions_list")
        assert {route["port"] for route in _pool_entries(b_doc)} == {a.cluster_port}
        assert a.cluster_port not in {route["port"] for route in _pool_entries(a_doc)}
        detail = b.routez("?subs=detail")
        _check_entries(detail, a_doc, dialled=True, listed="subscriptions_list_detail")
        carrier = next(r for r in detail["routes"] if r["rid"] == found[0]["rid"])
        subs = {d["sid"]: d for d in carrier["subscriptions_list_detail"] if not d["subject"].startswith("$SYS.")}
        assert subs == {
            "R $G routez.probe.>": {
                "subject": "routez.probe.>",
                "sid": "R $G routez.probe.>",
                "msgs": 0,
                "cid": carrier["rid"],
            },
            "R $G routez.q q1": {
                "subject": "routez.q",
                "qgroup": "q1",
                "sid": "R $G routez.q q1",
                "msgs": 0,
                "cid": carrier["rid"],
            },
        }
        status, body = b.get("/routez?subs=maybe")
        assert (status, body) == (
            400,
            b"Error decoding boolean for 'subs': strconv.ParseBool: parsing \"maybe\": invalid syntax",
        )
    finally:
        if client is not None:
            client.close()
        for node in (b, a):
            if node is not None:
                node.stop()


def _subscriber(port: int) -> socket.socket:
    """A raw client holding a subject and a queue subscription, once the server answered its PING."""
    conn = socket.create_connection(("127.0.0.1", port), timeout=5)
    conn.recv(4096)
    conn.sendall(b'CONNECT {"verbose":false}\r\nSUB routez.probe.> 1\r\nSUB routez.q q1 2\r\nPING\r\n')
    data = b""
    while b"PONG\r\n" not in data:
        chunk = conn.recv(4096)
        assert chunk, data
        data += chunk
    return conn
