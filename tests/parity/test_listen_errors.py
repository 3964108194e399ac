"""A port that cannot be listened on: the fatal line and the exit status, ``python -m fakejs`` against nats-server.

nats-server logs Go's ``net.Listen`` error under a line of its own for each
port (client, monitoring, cluster, websocket) and exits with status 1.
Harnesses read that line when a port they picked was taken meanwhile.
"""

from __future__ import annotations

import re
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness.targets import REAL_BINARY, REAL_MISSING_REASON, server_command

pytestmark = pytest.mark.skipif(REAL_BINARY is None, reason=REAL_MISSING_REASON)

STAMP = re.compile(r"^\[\d+\] \d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{6} ")


@pytest.fixture
def taken() -> Iterator[int]:
    """A port some other program listens on."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


def fatal_line(kind: str, *args: str) -> tuple[int, str]:
    """The exit status and the ``[FTL]`` line (without its stamp) of a start that fails."""
    out = subprocess.run(server_command(kind) + list(args), capture_output=True, text=True, timeout=30, check=False)
    lines = [STAMP.sub("", line) for line in out.stderr.splitlines() if "[FTL]" in line]
    return out.returncode, lines[-1] if lines else out.stderr


@pytest.mark.parametrize("port", ["client", "monitoring", "cluster", "websocket"])
def test_a_taken_port_is_fatal_with_the_same_line(taken: int, tmp_path: Path, port: str) -> None:
    (tmp_path / "ws.conf").write_text(f"websocket {{ host: 127.0.0.1, port: {taken}, no_tls: true }}\n")
    args = {
        "client": ["-p", str(taken)],
        "monitoring": ["-p", "-1", "-m", str(taken)],
        "cluster": ["-p", "-1", "--cluster", f"nats://127.0.0.1:{taken}"],
        "websocket": ["-p", "-1", "-c", str(tmp_path / "ws.conf")],
    }[port]
    fake, real = (fatal_line(kind, "-a", "127.0.0.1", *args) for kind in ("fake", "real"))
    assert fake == real
    assert real[0] == 1 and f"listen tcp 127.0.0.1:{taken}: bind: address already in use" in real[1], real


def test_an_address_the_machine_does_not_have_is_fatal_with_the_same_line() -> None:
    fake, real = (fatal_line(kind, "-a", "192.0.2.1", "-p", "-1") for kind in ("fake", "real"))  # TEST-NET-1
    assert fake == real
    assert real == (
        1,
        '[FTL] Error listening on port: 192.0.2.1:0, "listen tcp 192.0.2.1:0: bind: cannot assign requested address"',
    )


@pytest.mark.parametrize(
    ("store", "problem"),
    [
        ("/proc/nope/store", "could not create storage directory - mkdir /proc/nope: no such file or directory"),
        ("FILE/store", "storage directory is not a directory"),
        ("FILE", "storage directory is not a directory"),
    ],
)
def test_a_store_directory_that_cannot_be_used_is_fatal_with_the_same_line(
    tmp_path: Path, store: str, problem: str
) -> None:
    (tmp_path / "FILE").write_text("")
    store = store.replace("FILE", str(tmp_path / "FILE"))
    fake, real = (fatal_line(kind, "-p", "-1", "-js", "-sd", store) for kind in ("fake", "real"))
    assert fake == real
    assert real == (1, f"[FTL] Can't start JetStream: {problem}")
