"""``fakejs`` served by its forkserver: what a harness sees is what a server started by the command gives.

The first ``fakejs`` this test process runs starts its server itself and a
forkserver beside it; every later one is forked from that forkserver.  A
forked server is recognised by who holds its listening socket: the
launcher (the process the test spawned) when the server runs in it, another
process when it was forked.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fakejs.warm import wire
from fakejs.warm.forkserver import Forkserver, SourceFiles
from fakejs.warm.launch import Launch
from tests.harness.warm_spawn import (
    FAKEJS,
    LIMIT,
    NO_FORKSERVER,
    Started,
    holders,
    listening_inode,
    spawn_each,
    start_forkserver,
    until,
)

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="warm starts are Linux's (abstract sockets, pidfds)")


@pytest.fixture
def forkserver() -> None:
    """This process's forkserver, listening (the first ``fakejs`` run here starts it)."""
    start_forkserver()


@pytest.fixture
def spawn() -> Iterator[Callable[..., Started]]:
    """Spawns a ``fakejs`` and waits until it is ready; what is still running at the end is killed."""
    yield from spawn_each()


@pytest.fixture
def started(forkserver: None, spawn: Callable[..., Started], tmp_path: Path) -> Started:
    return spawn("-p", "-1", "-js", "-sd", str(tmp_path / "store"), "--ports_file_dir", str(tmp_path))


def test_a_forked_server_answers_to_its_launchers_pid(started: Started, tmp_path: Path) -> None:
    pid = started.process.pid
    (server,) = holders(listening_inode(started.port))
    assert server != pid  # forked: the launcher does not hold the listener
    assert all(line.startswith(f"[{pid}] ") for line in started.lines)
    ports_file = tmp_path / f"nats-server_{pid}.ports"
    assert ports_file.exists()
    rest = started.stop()
    assert started.process.returncode == 0
    assert 'Trapped "terminated" signal' in rest
    assert rest.rstrip().endswith("Server Exiting..")
    assert not ports_file.exists()
    assert not listening_inode(started.port)


def test_without_the_forkserver_the_launcher_is_the_server(spawn: Callable[..., Started]) -> None:
    server = spawn("-p", "-1", env=NO_FORKSERVER)
    assert holders(listening_inode(server.port)) == [server.process.pid]
    server.stop()
    assert server.process.returncode == 0


def test_signals_reach_the_server(forkserver: None, spawn: Callable[..., Started], tmp_path: Path) -> None:
    config = tmp_path / "server.conf"
    config.write_text("port: -1\n")
    server = spawn("-c", str(config))
    server.process.send_signal(signal.SIGHUP)
    assert 'Trapped "hangup" signal' in server.read_until("Reloaded server configuration")
    rest = server.stop(signal.SIGINT)
    assert 'Trapped "interrupt" signal' in rest
    assert server.process.returncode == 0


def test_a_killed_launcher_takes_its_server_along(started: Started) -> None:
    (server,) = holders(listening_inode(started.port))
    started.stop(signal.SIGKILL)
    assert started.process.returncode == -signal.SIGKILL
    until(lambda: not os.path.exists(f"/proc/{server}/fd"), "gone")
    assert not listening_inode(started.port)


def test_a_server_killed_by_a_signal_ends_its_launcher_by_it(started: Started) -> None:
    (server,) = holders(listening_inode(started.port))
    os.kill(server, signal.SIGKILL)
    assert started.process.wait(LIMIT) == -signal.SIGKILL


@pytest.mark.parametrize("arguments", [["-v"], ["--no_such_flag"], ["-p", "port"], ["-p", "70000"]])
def test_output_and_status_are_those_of_a_server_started_by_the_command(forkserver: None, arguments: list[str]) -> None:
    warm = subprocess.run([*FAKEJS, *arguments], capture_output=True, text=True, timeout=LIMIT, check=False)
    cold = subprocess.run(
        [*FAKEJS, *arguments], capture_output=True, text=True, timeout=LIMIT, env=NO_FORKSERVER, check=False
    )
    assert (warm.returncode, warm.stdout, _without_pids(warm.stderr)) == (
        cold.returncode,
        cold.stdout,
        _without_pids(cold.stderr),
    )


def _without_pids(text: str) -> str:
    """Log lines without their pid and time (two processes, two moments)."""
    return "\n".join(line.split(" [", 1)[-1] if line.startswith("[") else line for line in text.splitlines())


def test_the_server_runs_in_the_launchers_directory_with_its_environment(
    forkserver: None, spawn: Callable[..., Started], tmp_path: Path
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    (tmp_path / "server.conf").write_text("port: $WARM_TEST_PORT\n")
    server = spawn("-c", "server.conf", env={**os.environ, "WARM_TEST_PORT": str(port)}, cwd=tmp_path)
    assert server.port == port
    assert server.process.pid not in holders(listening_inode(port))


def test_the_forkserver_address_is_its_harness_and_interpreter_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    here = wire.address(os.getpid())
    assert here.startswith(f"\0fakejs-forkserver-{os.getuid()}-{os.getpid()}-")
    assert wire.address(os.getpid() + 1) != here
    monkeypatch.setenv("PYTHONSOMETHING", "1")
    assert wire.address(os.getpid()) != here
    monkeypatch.delenv("PYTHONSOMETHING")
    monkeypatch.setenv("UNRELATED_TO_PYTHON", "1")
    assert wire.address(os.getpid()) == here


def test_changed_source_files_are_noticed(tmp_path: Path) -> None:
    source = tmp_path / "module.py"
    source.write_text("")
    files = SourceFiles({str(source): source.stat().st_mtime_ns})
    assert not files.changed()
    os.utime(source, ns=(1, 1))
    assert files.changed()
    source.unlink()
    assert files.changed()


def test_a_forkserver_with_older_code_refuses_and_stops_listening(tmp_path: Path) -> None:
    source = tmp_path / "module.py"
    source.write_text("")
    files = SourceFiles({str(source): source.stat().st_mtime_ns})
    address = f"\0fakejs-test-{os.getpid()}-{time.monotonic_ns()}"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(address)
    listener.listen(1)
    harness = os.pidfd_open(os.getpid())  # never readable while this test runs
    forkserver = Forkserver(listener, harness, files)
    os.utime(source, ns=(1, 1))
    thread = threading.Thread(target=forkserver.run)
    thread.start()
    try:
        assert Launch(address).run() is None  # the launcher starts its server itself
        thread.join(LIMIT)
        assert not thread.is_alive()
        assert forkserver.listener is None
    finally:
        os.close(harness)
