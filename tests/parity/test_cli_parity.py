"""The same argv to nats-server and to ``python -m fakejs``: same exit status, same error line, same ports file.

Each case runs both programs as subprocesses.  Where fakejs refuses a
feature it does not serve, only what must match is compared (the flag is
read as the flag it is, the refusal names it).
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import stat
import subprocess
import time
from pathlib import Path

import pytest

from fakejs.cli.settings import command_line
from tests.harness.targets import FAKEJS_COMMAND, REAL_BINARY, REAL_MISSING_REASON

pytestmark = pytest.mark.skipif(REAL_BINARY is None, reason=REAL_MISSING_REASON)

FAKEJS = FAKEJS_COMMAND
USAGE_START = "\nUsage: nats-server [options]\n"
FAKEJS_USAGE_START = "\nUsage: fakejs [options]\n"


def both(argv: list[str]) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
    assert REAL_BINARY is not None
    real = subprocess.run([REAL_BINARY, *argv], capture_output=True, text=True, timeout=20, check=False)
    fake = subprocess.run([*FAKEJS, *argv], capture_output=True, text=True, timeout=20, check=False)
    return real, fake


@pytest.mark.parametrize(
    "argv",
    [
        ["-x"],
        ["--no-such-flag"],
        ["-p", "abc"],
        ["-p", "99999999999999999999"],
        ["-p"],
        ["---x"],
        ["-js=maybe"],
        ["-js", "-sd"],
        ["--log_size_limit", "1k"],
    ],
)
def test_flag_errors(argv: list[str]) -> None:
    """Go's message on stderr, the usage on stdout, status 0."""
    real, fake = both(argv)
    assert (fake.returncode, fake.stderr) == (real.returncode, real.stderr) == (0, fake.stderr)
    assert real.stdout.startswith(USAGE_START) and fake.stdout.startswith(FAKEJS_USAGE_START)


@pytest.mark.parametrize(
    "argv",
    [["-v"], ["--version"], ["version"], ["-h", "-v"], ["-p", "0x10", "-v"], ["-cluster_name", "abc", "-v"]],
)
def test_version(argv: list[str]) -> None:
    """nats-server's line, byte for byte, then fakejs's own version line."""
    real, fake = both(argv)
    assert (fake.returncode, fake.stderr) == (real.returncode, real.stderr)
    assert real.stdout == "nats-server: v2.15.1\n"
    first, second = fake.stdout.splitlines(keepends=True)
    assert first == real.stdout and second.startswith("fakejs: v")


@pytest.mark.parametrize("argv", [["-h"], ["--help"], ["help"]])
def test_help(argv: list[str]) -> None:
    real, fake = both(argv)
    assert (fake.returncode, fake.stderr) == (real.returncode, real.stderr) == (0, "")
    assert real.stdout.startswith(USAGE_START) and fake.stdout.startswith(FAKEJS_USAGE_START)
    assert real.stdout.endswith("\n\n") and fake.stdout.endswith("\n\n")
    sections = [line for line in real.stdout.splitlines() if line.endswith("Options:")]
    fake_sections = [line for line in fake.stdout.splitlines() if line.endswith("Options:")]
    assert [line for line in fake_sections if line != "fakejs Options:"] == sections


@pytest.mark.parametrize("argv", [["--help_tls"], ["-help_tls", "-p", "-1"]])
def test_help_tls(argv: list[str]) -> None:
    """Both print their own TLS help to stdout and exit 0 (the texts differ: fakejs lists what it serves)."""
    real, fake = both(argv)
    assert (fake.returncode, fake.stderr) == (real.returncode, real.stderr) == (0, "")
    assert real.stdout.startswith("\n") and fake.stdout.startswith("\n")
    assert "cipher_suites" in real.stdout and "cipher_suites" in fake.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ["foo"],
        ["-p", "4222", "extra"],
        ["-js", "--", "-p"],
        ["-t"],
        ["--tls"],
        ["--tls", "--tlscert", "x"],
        ["--routes", "nats://127.0.0.1:1"],
    ],
)
def test_refusals_before_start(argv: list[str]) -> None:
    real, fake = both(argv)
    assert (fake.returncode, fake.stdout, fake.stderr) == (real.returncode, real.stdout, real.stderr)
    assert fake.returncode == 1


def test_cluster_name_is_not_read_as_config() -> None:
    """``-cluster_name abc`` is the flag cluster_name (never ``-c luster_name``); alone it opens no route port."""
    line = command_line(["-cluster_name", "abc"])
    assert line.flags.values["cluster_name"] == "abc" and line.flags.values["config"] == ""
    assert line.options.cluster is None


class Started:
    """A server started with ``-p -1 -m -1 --ports_file_dir``; ready once its ports file exists."""

    def __init__(self, command: list[str], directory: Path, *flags: str) -> None:
        directory.mkdir()
        self.directory = directory
        argv = [*command, "-a", "127.0.0.1", "-p", "-1", "-m", "-1", "--ports_file_dir", str(directory), *flags]
        self.process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.path = directory / f"nats-server_{self.process.pid}.ports"
        deadline = time.monotonic() + 15
        while not (self.path.exists() and self.path.stat().st_size):
            assert self.process.poll() is None, f"{command} exited with {self.process.returncode}"
            assert time.monotonic() < deadline, f"no ports file from {command}"
            time.sleep(0.02)
        self.text = self.path.read_text()
        self.mode = stat.S_IMODE(self.path.stat().st_mode)
        self.port = int(json.loads(self.text)["nats"][0].rsplit(":", 1)[1])

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(15)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


REPLY = re.compile(rb"(H?)MSG _INBOX\.cli 1 (\d+)(?: (\d+))?\r\n")


def js_info_reply(port: int) -> bytes:
    """The raw answer to a ``$JS.API.INFO`` request (headers and no responders on): its MSG or HMSG, whole."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        data = b""
        while b"\r\n" not in data:
            data += conn.recv(4096)
        conn.sendall(
            b'CONNECT {"verbose":false,"headers":true,"no_responders":true,"protocol":1}\r\n'
            b"SUB _INBOX.cli 1\r\nPUB $JS.API.INFO _INBOX.cli 0\r\n\r\n"
        )
        data = b""
        while True:
            found = REPLY.search(data)
            if found:
                size = int(found.group(3) or found.group(2))
                end = found.end() + size + 2
                if len(data) >= end:
                    return data[found.start() : end]
            chunk = conn.recv(65536)
            assert chunk, data
            data += chunk


def normalised(text: str) -> str:
    return re.sub(r":\d+\"", ':PORT"', text)


@pytest.mark.parametrize("jetstream", [False, True])
def test_jetstream_only_with_js_and_the_ports_file(tmp_path: Path, jetstream: bool) -> None:
    assert REAL_BINARY is not None
    flags = ["-js", "-sd", str(tmp_path / "store")] if jetstream else []
    real = fake = None
    try:
        real = Started([REAL_BINARY], tmp_path / "real", *flags)
        fake = Started(FAKEJS, tmp_path / "fake", *flags)
        assert normalised(fake.text) == normalised(real.text)
        assert normalised(real.text) == '{"nats":["nats://127.0.0.1:PORT"],"monitoring":["http://127.0.0.1:PORT"]}'
        assert fake.mode == real.mode
        real_reply, fake_reply = js_info_reply(real.port), js_info_reply(fake.port)
        if jetstream:
            for reply in (real_reply, fake_reply):
                assert reply.startswith(b"MSG _INBOX.cli 1 "), reply
                assert b'"type":"io.nats.jetstream.api.v1.account_info_response"' in reply
        else:
            assert fake_reply == real_reply
            assert real_reply == b"HMSG _INBOX.cli 1 44 44\r\nNATS/1.0 503\r\nNats-Subject: $JS.API.INFO\r\n\r\n\r\n"
        assert (fake.stop(), real.stop()) == (0, 0)
        assert not fake.path.exists() and not real.path.exists()
        assert os.listdir(fake.directory) == os.listdir(real.directory) == []
    finally:
        for started in (real, fake):
            if started is not None:
                started.kill()
