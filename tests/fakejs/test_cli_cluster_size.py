"""``fakejs --cluster_size N``: N nodes in one process as one cluster.

Pinned: N < 1 is refused; N = 1 is an ordinary server; route flags, a
configuration file's ``cluster {}`` and websocket are refused by name
(scenarios run on the cluster: tests.fakejs.test_cluster_scenarios); node ``i`` listens on ``-p P`` + i and ``-m M`` + i (free
ports with ``-1``) and is named ``<-n or "n">`` + (i + 1); one ports file lists
every node; started as a process, a message published on node 3 reaches a
subscriber on node 1, and SIGTERM stops every node (the ports file goes).
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import nats
import pytest

from fakejs import Cluster, cli
from fakejs.cli.cluster_size import make_cluster
from fakejs.cli.settings import Exit

START_TIMEOUT = 15.0


def refusal(argv: list[str]) -> str:
    with pytest.raises(Exit) as caught:
        cli.command_line(argv)
    assert caught.value.status == 1
    return caught.value.stderr


@pytest.mark.parametrize(
    "argv,named",
    [
        (["--cluster_size", "0"], "--cluster_size must be at least 1, not 0"),
        (["--cluster_size", "-2"], "--cluster_size must be at least 1, not -2"),
        (["--cluster_size", "3", "--cluster", "nats://127.0.0.1:-1"], "give it no --cluster\n"),
        (["--cluster_size", "3", "--cluster_listen", "nats://127.0.0.1:-1"], "give it no --cluster_listen\n"),
        (["--cluster_size", "3", "--routes", "nats://127.0.0.1:1"], "give it no --routes\n"),
    ],
)
def test_what_cannot_go_with_it_is_refused_by_name(argv: list[str], named: str) -> None:
    stderr = refusal(argv)
    assert stderr.startswith("fakejs: ") and named in stderr


def test_a_configuration_file_with_a_cluster_block_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "c.conf"
    config.write_text('port: -1\ncluster { name: X, listen: "127.0.0.1:-1" }\n')
    assert "without a cluster {} block" in refusal(["--cluster_size", "2", "-c", str(config)])


def test_one_node_is_an_ordinary_server() -> None:
    command = cli.command_line(["--cluster_size", "1", "-js"])
    assert command.cluster_size == 1 and command.options.jetstream


def test_ports_and_names_count_up_from_the_command_line() -> None:
    command = cli.command_line(["--cluster_size", "3", "-p", "4300", "-m", "8300", "-n", "web", "--seed", "5"])
    cluster = make_cluster(3, command.options, None, "")
    assert [s.options.port for s in cluster.servers] == [4300, 4301, 4302]
    assert [s.options.http_port for s in cluster.servers] == [8300, 8301, 8302]
    assert [s.options.name for s in cluster.servers] == ["web1", "web2", "web3"]
    assert [s.options.seed for s in cluster.servers] == [5, 6, 7]
    free = make_cluster(2, cli.command_line(["--cluster_size", "2", "-p", "-1", "-m", "-1"]).options, None, "")
    assert [(s.options.port, s.options.http_port, s.options.name) for s in free.servers] == [(0, 0, "n1"), (0, 0, "n2")]


def test_the_default_port_counts_up_too() -> None:
    cluster = make_cluster(2, cli.command_line(["--cluster_size", "2"]).options, None, "")
    assert [s.options.port for s in cluster.servers] == [4222, 4223]
    assert [s.options.http_port for s in cluster.servers] == [None, None]


async def read_ports(path: Path, process: subprocess.Popen[bytes]) -> dict[str, list[str]]:
    deadline = time.monotonic() + START_TIMEOUT
    while not (path.exists() and path.read_text()):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"no ports file: {process.communicate()[1].decode()}")
        await asyncio.sleep(0.02)
    ports: dict[str, list[str]] = json.loads(path.read_text())
    return ports


async def test_three_nodes_in_one_process_carry_a_message(tmp_path: Path) -> None:
    command = [
        sys.executable,
        "-m",
        "fakejs",
        "--cluster_size",
        "3",
        "-js",
        "-p",
        "-1",
        "--ports_file_dir",
        str(tmp_path),
    ]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    path = tmp_path / f"nats-server_{process.pid}.ports"
    try:
        ports = await read_ports(path, process)
        assert len(ports["nats"]) == 3 and len(ports["cluster"]) == 3 and "monitoring" not in ports
        first = await nats.connect(ports["nats"][0])
        third = await nats.connect(ports["nats"][2])
        sub = await first.subscribe("crossing")
        await first.flush()
        deadline = time.monotonic() + 5
        while True:  # interest crosses the routes asynchronously
            await third.publish("crossing", b"hello")
            try:
                msg = await sub.next_msg(timeout=0.05)
                break
            except nats.errors.TimeoutError:
                assert time.monotonic() < deadline, "no message crossed from node 3 to node 1"
        assert msg.data == b"hello"
        assert third.connected_server_version.major == 2
        await first.close()
        await third.close()
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=10)
    log = stderr.decode()
    assert process.returncode == 0, log
    for node in ("n1", "n2", "n3"):
        assert f"Cluster C node {node}: clients on nats://127.0.0.1:" in log
    assert not path.exists()
    assert all(line.startswith("[") for line in log.splitlines()), log  # log lines only: nothing else went wrong


def test_the_image_s_jetstream_serves_the_whole_cluster_or_is_turned_off() -> None:
    argv = ["--jetstream", "--addr=0.0.0.0", "--port=4222", "--http_port=8222", "--store_dir=/data"]
    command = cli.command_line([*argv, "--cluster_size", "3", "-p", "4222", "--jetstream=false"])
    cluster = make_cluster(command.cluster_size, command.options, None, "")
    assert [(s.options.port, s.options.http_port) for s in cluster.servers] == [
        (4222, 8222),
        (4223, 8223),
        (4224, 8224),
    ]
    assert not serves_jetstream(cluster)
    served = cli.command_line([*argv, "--cluster_size", "3", "-p", "4222"])
    assert serves_jetstream(make_cluster(served.cluster_size, served.options, None, ""))


def serves_jetstream(cluster: Cluster) -> bool:
    """Whether the cluster has a JetStream, replicated across its nodes (each node's own)."""
    return all(server.options.jetstream for server in cluster.servers)


def test_a_last_port_above_65535_is_refused() -> None:
    assert "the last node's port would be above 65535" in refusal(["--cluster_size", "3", "-p", "65534"])
    assert "with -m 65535" in refusal(["--cluster_size", "2", "-m", "65535"])
