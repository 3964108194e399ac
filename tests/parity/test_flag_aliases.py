"""Every alias of a nats-server flag does what its long form does, on nats-server and on fakejs.

nats-server 2.15.1 declares several names for one option (``-p`` and
``--port``, ``--cluster`` and ``--cluster_listen``, ...).  Each spelling is
started here as a subprocess (``-a 127.0.0.1 -p -1 -m -1 --ports_file_dir
DIR`` and the flag) and its effect read off the ports file, ``/varz``, the
log or the files it writes; the same expectation holds for every spelling,
on both programs.  ``--cluster_listen`` once opened no route port on fakejs.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fakejs.cli.flags import flag_set
from fakejs.cli.settings import Exit, command_line
from fakejs.targets.cluster import free_port
from tests.harness.targets import server_command

START_DEADLINE = 15.0  # seconds for a started program to write its ports file
LOG_DEADLINE = 10.0  # seconds for a line to reach the log

# nats-server 2.15.1's flags with more than one name (``ConfigureOptions``), by the dest fakejs gives them.
ALIASES: dict[str, tuple[str, ...]] = {
    "help": ("h", "help"),
    "port": ("p", "port"),
    "name": ("n", "name", "server_name"),
    "addr": ("a", "addr", "net"),
    "debug": ("D", "debug"),
    "trace": ("V", "trace"),
    "logtime": ("T", "logtime"),
    "http_port": ("m", "http_port"),
    "https_port": ("ms", "https_port"),
    "config": ("c", "config"),
    "signal": ("sl", "signal"),
    "pid": ("P", "pid"),
    "log": ("l", "log"),
    "syslog": ("s", "syslog"),
    "remote_syslog": ("r", "remote_syslog"),
    "version": ("v", "version"),
    "cluster": ("cluster", "cluster_listen"),
    "jetstream": ("js", "jetstream"),
    "store_dir": ("sd", "store_dir"),
}


class Started:
    """A program started with the common flags and more; its ports from the ports file."""

    def __init__(self, kind: str, directory: Path, *flags: str) -> None:
        self.directory = directory
        argv = [*server_command(kind), "-a", "127.0.0.1", "-p", "-1", "-m", "-1"]
        argv += ["--ports_file_dir", str(directory), *flags]
        self.log_path = directory / "server.log"
        self.log = open(self.log_path, "wb")  # noqa: SIM115 - closed by stop()
        self.process = subprocess.Popen(argv, stdout=self.log, stderr=self.log)
        path = directory / f"nats-server_{self.process.pid}.ports"
        deadline = time.monotonic() + START_DEADLINE
        while not (path.exists() and path.stat().st_size):
            assert self.process.poll() is None, self.log_path.read_text()
            assert time.monotonic() < deadline, f"no ports file: {self.log_path.read_text()}"
            time.sleep(0.02)
        self.ports: dict[str, list[str]] = json.loads(path.read_text())

    def port(self, kind: str) -> int:
        return int(self.ports[kind][0].rsplit(":", 1)[1])

    def varz(self) -> dict[str, Any]:
        url = f"http://127.0.0.1:{self.port('monitoring')}/varz"
        with urllib.request.urlopen(url, timeout=5) as answer:
            document: dict[str, Any] = json.loads(answer.read())
        return document

    def wait_log(self, text: str) -> str:
        deadline = time.monotonic() + LOG_DEADLINE
        while text not in (log := self.log_path.read_text()):
            assert time.monotonic() < deadline, f"{text!r} never logged: {log}"
            time.sleep(0.02)
        return log

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


def ping_client(server: Started) -> None:
    """A raw client that logs in and pings (what ``-D`` and ``-V`` log something about)."""
    with socket.create_connection(("127.0.0.1", server.port("nats")), timeout=5) as client:
        client.recv(4096)  # INFO
        client.sendall(b'CONNECT {"verbose":false}\r\nPING\r\n')
        answer = b""
        while b"PONG\r\n" not in answer:
            chunk = client.recv(4096)
            assert chunk, answer
            answer += chunk


@dataclass(frozen=True)
class Case:
    """A flag's value (from the test's directory) and the check of its effect on a started program."""

    value: Callable[[Path], str | None]  # None: a boolean flag, given alone
    check: Callable[[Started, str | None], None]
    extra: tuple[str, ...] = ()  # flags the effect needs besides this one


def _check_port(server: Started, value: str | None) -> None:
    assert server.ports["nats"] == [f"nats://127.0.0.1:{value}"]


def _check_name(server: Started, value: str | None) -> None:
    assert server.varz()["server_name"] == value


def _check_addr(server: Started, value: str | None) -> None:
    assert server.varz()["host"] == value


def _check_http_port(server: Started, value: str | None) -> None:
    assert server.port("monitoring") == int(value or 0)
    assert server.varz()["http_port"] == int(value or 0)


def _check_debug(server: Started, value: str | None) -> None:
    ping_client(server)
    server.wait_log("[DBG]")


def _check_trace(server: Started, value: str | None) -> None:
    ping_client(server)
    server.wait_log("[TRC]")


def _check_logtime(server: Started, value: str | None) -> None:
    log = server.wait_log("Server is ready")
    assert all(line.split("] ", 1)[1][:4].isdigit() for line in log.splitlines() if line.startswith("[")), log


def _check_pid(server: Started, value: str | None) -> None:
    path = Path(value or "")
    deadline = time.monotonic() + LOG_DEADLINE
    while not (path.exists() and path.read_text()):
        assert time.monotonic() < deadline, "no pid file"
        time.sleep(0.02)
    assert path.read_text() == str(server.process.pid)


def _check_log(server: Started, value: str | None) -> None:
    path = Path(value or "")
    deadline = time.monotonic() + LOG_DEADLINE
    while not (path.exists() and "Server is ready" in path.read_text()):
        assert time.monotonic() < deadline, "nothing logged to the file"
        time.sleep(0.02)


def _check_jetstream(server: Started, value: str | None) -> None:
    server.wait_log("Starting JetStream")


def _check_store_dir(server: Started, value: str | None) -> None:
    # nats-server logs the directory it keeps JetStream in, a "jetstream" folder under the flag's (fakejs: the flag's)
    server.wait_log(f'Store Directory: "{value}')


def _check_cluster(server: Started, value: str | None) -> None:
    port = server.port("cluster")
    assert server.varz()["cluster"]["cluster_port"] == port
    server.wait_log(f"Listening for route connections on 127.0.0.1:{port}")


def _config_file(directory: Path) -> str:
    path = directory / "server.conf"
    path.write_text('server_name: "from-file"\n')
    return str(path)


# Each served flag with aliases, what to give it and what it must do (-h, -v: test_cli_parity.py; -ms: below).
CASES: dict[str, Case] = {
    "port": Case(lambda _: str(free_port()), _check_port),
    "name": Case(lambda _: "alias-name", _check_name),
    "addr": Case(lambda _: "localhost", _check_addr),
    "http_port": Case(lambda _: str(free_port()), _check_http_port),
    "debug": Case(lambda _: None, _check_debug),
    "trace": Case(lambda _: None, _check_trace),
    "logtime": Case(lambda _: None, _check_logtime),
    "config": Case(_config_file, lambda server, _: _check_name(server, "from-file")),
    "pid": Case(lambda directory: str(directory / "server.pid"), _check_pid),
    "log": Case(lambda directory: str(directory / "file.log"), _check_log),
    "jetstream": Case(lambda directory: None, _check_jetstream, ("--store_dir", "{dir}")),
    "store_dir": Case(lambda directory: str(directory / "store"), _check_store_dir, ("-js",)),
    "cluster": Case(lambda _: "nats://127.0.0.1:-1", _check_cluster, ("--cluster_name", "C")),
}

SPELLINGS = [(dest, name) for dest in CASES for name in ALIASES[dest]]


@pytest.mark.parametrize(("dest", "name"), SPELLINGS, ids=[f"-{name}" for _, name in SPELLINGS])
def test_every_alias_does_what_its_long_form_does(target_kind: str, tmp_path: Path, dest: str, name: str) -> None:
    case = CASES[dest]
    value = case.value(tmp_path)
    flags = [f"-{name}"] if value is None else [f"-{name}", value]
    extra = [part.replace("{dir}", str(tmp_path / "store")) for part in case.extra]
    server = Started(target_kind, tmp_path, *extra, *flags)
    try:
        case.check(server, value)
    finally:
        server.stop()


def test_cluster_listen_opens_the_route_port(target_kind: str, tmp_path: Path) -> None:
    """``--cluster_listen URL`` is ``--cluster URL``: the route port listens and is reported."""
    route_port = free_port()
    server = Started(target_kind, tmp_path, "--cluster_name", "C", "--cluster_listen", f"nats://127.0.0.1:{route_port}")
    try:
        assert server.ports["cluster"] == [f"nats://127.0.0.1:{route_port}"]
        assert server.varz()["cluster"] == {
            "name": "C",
            "addr": "127.0.0.1",
            "cluster_port": route_port,
            "auth_timeout": 2,
            "tls_timeout": 2,
            "pool_size": 3,
        }
        server.wait_log(f"Listening for route connections on 127.0.0.1:{route_port}")
        with socket.create_connection(("127.0.0.1", route_port), timeout=5) as route:
            assert route.recv(5) == b"INFO "
    finally:
        server.stop()


@pytest.mark.parametrize("name", ALIASES["https_port"])
def test_https_port_aliases_need_tls_alike(target_kind: str, name: str) -> None:
    out = subprocess.run(
        [*server_command(target_kind), "-a", "127.0.0.1", "-p", "-1", f"-{name}", "-1"],
        capture_output=True,
        text=True,
        timeout=20,
        check=False,
    )
    assert out.returncode == 1
    assert "[FTL] Can't start monitoring: TLS cert and key required for HTTPS" in out.stdout + out.stderr


@pytest.mark.fake_only
def test_fakejs_declares_each_nats_server_flag_once_with_its_aliases() -> None:
    """The flag table groups exactly nats-server's aliases, each group under one dest."""
    flags = flag_set().flags
    groups: dict[str, set[str]] = {}
    for name, flag in flags.items():
        groups.setdefault(flag.dest, set()).add(name)
    shared = {dest: names for dest, names in groups.items() if len(names) > 1}
    fakejs_own = {"tls_selfsigned", "tls_dir"}  # --tls-selfsigned and --tls_dir have no nats-server spelling
    assert {dest: set(names) for dest, names in ALIASES.items()} == {
        dest: names for dest, names in shared.items() if dest not in fakejs_own
    }


ARGUMENTS: dict[str, list[str]] = {
    "https_port": ["-1"],
    "signal": ["nope"],
    "syslog": [],
    "remote_syslog": ["udp://127.0.0.1:514"],
    "help": [],
    "version": [],
}


@pytest.mark.fake_only
@pytest.mark.parametrize("dest", sorted(ALIASES))
def test_every_alias_reads_as_its_long_form(dest: str, tmp_path: Path) -> None:
    """What each spelling makes of the command line (the options, or the refusal) is the long form's."""
    value = CASES[dest].value(tmp_path) if dest in CASES else None
    arguments = ARGUMENTS.get(dest, [] if value is None else [value])
    outcomes = []
    for name in ALIASES[dest]:
        try:
            outcomes.append(repr(command_line([f"-{name}", *arguments]).options))
        except Exit as end:
            outcomes.append(f"{end.status} {end.stdout} {end.stderr}")
    assert len(set(outcomes)) == 1, outcomes
