"""fakejs started the way test harnesses start ``nats-server``: an executable of that name on PATH.

The directory on PATH holds a ``nats-server`` script that execs ``python -m
fakejs "$@"`` (the same process, so the pid the launcher knows is the
server's).  Each launcher's command line, configuration file and readiness
check are reproduced from its source:

* the nats.js harness: ``nats-server -c FILE`` with its default
  configuration, ready once ``<ports_file_dir>/nats-server_<pid>.ports``
  exists;
* pytest-nats 0.0.2 (``_runtime.py``): ``nats-server -c nats.conf
  --ports_file_dir DIR`` with ``host``/``port: -1``/``http`` and a
  ``jetstream { store_dir, max_mem, max_file }`` block, ready once the ports
  file exists, INFO and PING/PONG answer and ``/healthz?js-enabled-only=true``
  says ok (the package needs ``httpx2``, which this environment lacks, so
  its command line is reproduced rather than imported);
* natsio-testing 0.1.1 (``server.py``): ``nats-server -a 127.0.0.1 -p PORT
  -js -sd DIR -c server.conf``, ready once a connection reads an INFO line
  (the package needs Python 3.13, so it is reproduced too).

Each then does a JetStream round trip with nats-py: create a stream,
publish, fetch.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import nats
import pytest

START_TIMEOUT = 15.0


@pytest.fixture
def path_with_shim(tmp_path: Path) -> Iterator[dict[str, str]]:
    """An environment whose PATH starts with a directory holding a ``nats-server`` that is fakejs."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "nats-server"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m fakejs "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    yield env


def launch(env: dict[str, str], *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(["nats-server", *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def stop(process: subprocess.Popen[bytes]) -> str:
    """SIGKILL (as the nats.js harness stops servers); returns what the server wrote on stderr."""
    process.kill()
    _, stderr = process.communicate(timeout=10)
    return stderr.decode(errors="replace")


async def wait_for_ports_file(directory: Path, process: subprocess.Popen[bytes]) -> dict[str, list[str]]:
    path = directory / f"nats-server_{process.pid}.ports"
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        if path.exists() and path.read_text():
            ports: dict[str, list[str]] = json.loads(path.read_text())
            return ports
        if process.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"no ports file: {stop(process)}")
        await asyncio.sleep(0.02)


async def round_trip(url: str) -> None:
    nc = await nats.connect(url)
    try:
        js = nc.jetstream()
        await js.add_stream(name="LAUNCHED", subjects=["launched.>"])
        ack = await js.publish("launched.one", b"hello")
        assert ack.seq == 1
        sub = await js.pull_subscribe("launched.>", durable="reader")
        messages = await sub.fetch(1, timeout=5)
        assert [m.data for m in messages] == [b"hello"]
        await messages[0].ack()
    finally:
        await nc.close()


async def test_nats_js_harness_default_configuration(path_with_shim: dict[str, str], tmp_path: Path) -> None:
    ports_dir = tmp_path / "ports"
    ports_dir.mkdir()
    config = tmp_path / "nats.conf"
    config.write_text(
        "host: 127.0.0.1\n"
        "port: -1\n"
        'http: "127.0.0.1:-1"\n'
        f'ports_file_dir: "{ports_dir}"\n'
        'leafnodes { listen: "127.0.0.1:-1" }\n'
        'server_tags: ["id:launchers"]\n'
        "websocket { port: -1, no_tls: true }\n"
        f'jetstream {{ max_file_store: 1048576, max_mem_store: 1048576, store_dir: "{tmp_path / "js"}" }}\n'
    )
    process = launch(path_with_shim, "-c", str(config))
    try:
        ports = await wait_for_ports_file(ports_dir, process)
        assert ports["nats"][0].startswith("nats://127.0.0.1:")
        assert ports["monitoring"][0].startswith("http://127.0.0.1:")
        assert ports["websocket"][0].startswith("ws://127.0.0.1:")
        await round_trip(ports["nats"][0])
    finally:
        stderr = stop(process)
    assert "Listening for leafnode connections on 127.0.0.1:" in stderr
    assert "Listening for websocket clients on ws://0.0.0.0:" in stderr


async def test_pytest_nats_launch(path_with_shim: dict[str, str], tmp_path: Path) -> None:
    version = subprocess.run(
        ["nats-server", "--version"], env=path_with_shim, capture_output=True, text=True, check=True
    )
    assert version.stdout.startswith("nats-server: v2.")
    config = tmp_path / "nats.conf"
    store = json.dumps(str(tmp_path / "jetstream"))
    config.write_text(
        'host: "127.0.0.1"\nport: -1\nhttp: "127.0.0.1:-1"\n'
        f"jetstream {{\n  store_dir: {store}\n  max_mem: {256 * 1024 * 1024}\n  max_file: {1024 * 1024 * 1024}\n}}\n"
    )
    process = launch(path_with_shim, "-c", str(config), "--ports_file_dir", str(tmp_path))
    try:
        ports = await wait_for_ports_file(tmp_path, process)
        client_port = int(ports["nats"][0].rsplit(":", 1)[1])
        monitor_port = int(ports["monitoring"][0].rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", client_port), timeout=2) as conn:
            assert conn.recv(65536).startswith(b"INFO ")
            conn.sendall(b"PING\r\n")
            assert b"PONG\r\n" in conn.recv(65536)
        health = f"http://127.0.0.1:{monitor_port}/healthz?js-enabled-only=true"
        with urllib.request.urlopen(health, timeout=2) as response:
            assert json.load(response)["status"] == "ok"
        await round_trip(ports["nats"][0])
    finally:
        stop(process)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def test_natsio_testing_launch(path_with_shim: dict[str, str], tmp_path: Path) -> None:
    config = tmp_path / "server.conf"
    config.write_text("max_payload: 2MB\nserver_name: launched\n")
    store = tmp_path / "jetstream"
    for _ in range(3):  # the harness passes a port it picked: another program may take it first
        port = free_port()
        process = launch(
            path_with_shim, "-a", "127.0.0.1", "-p", str(port), "-js", "-sd", str(store), "-c", str(config)
        )
        try:
            info = await first_info(process, port)
            if info is None:
                continue
            assert info["max_payload"] == 2 * 1024 * 1024  # the file's, under the flags
            await round_trip(f"nats://127.0.0.1:{port}")
            return
        finally:
            stop(process)
    pytest.fail("three ports picked were taken before the server could listen on them")


async def first_info(process: subprocess.Popen[bytes], port: int) -> dict | None:
    """The INFO of the launched server on ``port``; None when another program answers there or took it."""
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        assert time.monotonic() < deadline
        if process.poll() is not None:
            return None  # it could not listen: the port was taken
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.05)
            continue
        banner = await asyncio.wait_for(reader.readline(), 2)
        writer.close()
        if banner.startswith(b"INFO "):
            info: dict = json.loads(banner[5:])
            return info if info.get("server_name") == "launched" else None
