"""Configuration reload of logging and the files a server writes, and of ``server_tags``, on both servers.

``log_file`` (the line naming the new file still goes to the old one),
``pid_file`` (written again), ``ports_file_dir`` (the old ports file
removed, a new one written), ``trace_verbose``, ``max_traced_msg_len``,
``server_tags`` (``/varz`` shows the new tags), and what nats-server
refuses among them (``max_pending``).
"""

from __future__ import annotations

import glob
import json
import re
from pathlib import Path

import pytest

from tests.harness.reload import TARGETS, failure, hangup, reload, rewrite, start
from tests.harness.targets import REAL_BINARY, REAL_MISSING_REASON
from tests.harness.wait import eventually

pytestmark = pytest.mark.skipif(REAL_BINARY is None, reason=REAL_MISSING_REASON)


def _reloaded(log: str) -> list[str]:
    return re.findall(r"\[INF\] (Reloaded: .*)\n", log)


@pytest.mark.parametrize("kind", TARGETS)
async def test_pid_file_ports_file_dir_and_tracing_settings(kind: str, tmp_path: Path) -> None:
    ports = tmp_path / f"{kind}-ports"
    ports.mkdir()
    server = start(kind, f'ports_file_dir: "{ports}"\n', tmp_path)
    try:

        async def ports_files() -> list[str]:
            return glob.glob(str(ports / "*.ports"))

        assert len(await eventually(ports_files, lambda found: len(found) == 1, what="the ports file")) == 1
        moved, pid_file = tmp_path / f"{kind}-moved", tmp_path / f"{kind}.pid"
        moved.mkdir()
        settings = f'ports_file_dir: "{moved}"\npid_file: "{pid_file}"\ntrace_verbose: true\nmax_traced_msg_len: 10\n'
        settings += 'server_tags: ["az:1", "ssd"]\n'
        log = await reload(server, settings)
        assert _reloaded(log) == [
            "Reloaded: trace = true",  # trace_verbose turns trace on
            "Reloaded: trace_verbose = true",
            "Reloaded: authorization users",
            "Reloaded: accounts",
            f"Reloaded: pid_file = {pid_file}",
            f"Reloaded: ports_file_dir = {moved}",
            "Reloaded: max_traced_msg_len = 10",
            "Reloaded: tags",
        ]
        assert server.process is not None
        assert pid_file.read_text().strip() == str(server.process.pid)
        assert await ports_files() == []

        async def moved_file() -> list[str]:
            found = glob.glob(str(moved / "*.ports"))
            text = Path(found[0]).read_text() if len(found) == 1 else ""
            return json.loads(text)["nats"] if text.rstrip().endswith("}") else []

        # nats-server writes the new file from a goroutine of its own: soon after the line.
        assert server.url in await eventually(moved_file, bool, what="the new ports file")
    finally:
        server.stop()


@pytest.mark.parametrize("kind", TARGETS)
async def test_new_log_file(kind: str, tmp_path: Path) -> None:
    first, second = tmp_path / kind / "server.log", tmp_path / f"{kind}-2.log"
    server = start(kind, f'log_file: "{first}"\n', tmp_path)
    try:

        async def text(path: Path) -> str:
            return path.read_text() if path.is_file() else ""

        await eventually(lambda: text(first), lambda value: "Server is ready" in value, what="the first log file")
        rewrite(server, f'log_file: "{second}"\n')
        hangup(server)
        new = await eventually(lambda: text(second), lambda value: "Reloaded server" in value, what="the new log")
        old = await text(first)
        assert old.endswith(f"[INF] Reloaded: log_file = {second}\n"), old[-300:]
        assert re.fullmatch(
            r"\[\d+\] [\d/]+ [\d:.]+ \[INF\] Reloaded server configuration \(sha256:[0-9a-f]{64}\)\n", new
        )
    finally:
        server.stop()


@pytest.mark.parametrize("kind", TARGETS)
async def test_max_pending_is_refused(kind: str, tmp_path: Path) -> None:
    server = start(kind, "", tmp_path)
    try:
        log = await reload(server, "max_pending: 100000000\n")
        assert failure(log) == "config reload not supported for MaxPending: old=67108864, new=100000000"
    finally:
        server.stop()
