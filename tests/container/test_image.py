"""The Docker image: built from the repository's Dockerfile and run with podman.

What users get from ``docker run fakejs`` is checked end to end: a client
connects from outside the container, core pub/sub and JetStream work, the
monitor answers ``/healthz``, the image's HEALTHCHECK passes, and ``stop``
(SIGTERM to PID 1) ends the server at once with status 0 rather than after
the engine's kill timeout; ``--cluster_size 3`` runs three routed nodes on
consecutive ports.

No Docker engine is assumed. The podman set-up recipe lives next to the
repository (``../shared/container/podman-env.sh``); it installs podman,
configures it for this kind of machine and makes a local Debian base image.
When it is missing or cannot run (no root, no apt), these tests are skipped
with the reason shown (``engine.py``; the session's podman and image are
``conftest.py``'s fixtures).
"""

from __future__ import annotations

import contextlib
import json
import socket
import ssl
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import nats
import pytest

from tests.container.engine import READY_TIMEOUT, REPO, Podman, free_ports, tail

pytestmark = [pytest.mark.slow, pytest.mark.container]


@dataclass
class Container:
    """A running fakejs container on the host network."""

    name: str
    port: int
    http_port: int

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def http(self, path: str) -> tuple[int, bytes]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}{path}", timeout=5) as response:
            return response.status, response.read()


@pytest.fixture
def container(podman: Podman, image: str) -> Iterator[Container]:
    """Run the image as users do, only moving it to free ports: the image's own defaults
    (bind 0.0.0.0, store in /data) are what is under test."""
    with _run(podman, image) as box:
        yield box


def _free_runs(width: int) -> tuple[int, int]:
    """Two ports each followed by ``width - 1`` free ones (a cluster's nodes count up from the port given)."""
    while True:
        bases = free_ports(2)
        wanted = [base + i for base in bases for i in range(1, width)]
        try:
            with contextlib.ExitStack() as held:
                for port in wanted:
                    sock = held.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
                    sock.bind(("", port))
        except OSError:
            continue
        return bases[0], bases[1]


@contextlib.contextmanager
def _run(
    podman: Podman, image: str, *options: str, server_args: tuple[str, ...] = (), ports: tuple[int, int] | None = None
) -> Iterator[Container]:
    """Run the image (with extra ``podman run`` options and server arguments) until it is healthy; removed afterwards."""
    port, http_port = ports or free_ports(2)
    box = Container(name=f"fakejs-test-{uuid.uuid4().hex[:12]}", port=port, http_port=http_port)
    try:
        podman.run(
            "run", "-d", "--name", box.name, "--network=host", *options, image,
            "-p", str(port), "-m", str(http_port), *server_args,
        )  # fmt: skip
        deadline = time.monotonic() + READY_TIMEOUT
        while True:
            try:
                if box.http("/healthz")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"container not healthy after {READY_TIMEOUT:.0f}s:\n{tail(podman.logs(box.name))}"
                )
            time.sleep(0.1)
        yield box
    finally:
        podman.run("rm", "-f", box.name, check=False)


async def test_serves_clients_jetstream_and_health(podman: Podman, container: Container) -> None:
    podman.logs_with(container.name, f"Listening for client connections on 0.0.0.0:{container.port}")

    nc = await nats.connect(container.url)
    try:
        sub = await nc.subscribe("image.core")
        await nc.publish("image.core", b"hello")
        assert (await sub.next_msg(timeout=2)).data == b"hello"

        js = nc.jetstream()
        await js.add_stream(name="IMAGE", subjects=["image.js.>"], storage="file")
        ack = await js.publish("image.js.one", b"stored")
        assert (ack.stream, ack.seq) == ("IMAGE", 1)
        assert (await js.stream_info("IMAGE")).state.messages == 1
        assert (await js.get_msg("IMAGE", 1)).data == b"stored"
    finally:
        await nc.close()

    assert container.http("/healthz") == (200, b'{"status":"ok"}')
    varz = json.loads(container.http("/varz")[1])
    assert varz["jetstream"]["config"]["store_dir"] == "/data"
    # File-backed streams land in the /data volume, written by the image's unprivileged user.
    listing = podman.run("exec", container.name, "sh", "-c", "id -u; ls /data/fakejs/streams").stdout.split()
    assert listing[0] != "0" and "IMAGE" in listing[1:], listing
    health = podman.run("healthcheck", "run", container.name, check=False)
    assert health.returncode == 0, health.stdout + health.stderr


def test_stop_sends_sigterm_and_exits_promptly(podman: Podman, container: Container) -> None:
    started = time.monotonic()
    podman.run("stop", "-t", "20", container.name)
    elapsed = time.monotonic() - started
    state = json.loads(podman.run("inspect", "--format", "{{json .State}}", container.name).stdout)
    logs = podman.logs(container.name)
    assert elapsed < 5, f"stop took {elapsed:.1f}s: SIGTERM was not handled"
    assert state["ExitCode"] == 0, state
    assert 'Trapped "terminated" signal' in logs and "Server Exiting.." in logs, logs
    assert "Traceback" not in logs, logs


def test_mounted_scenarios_start_by_file_name(podman: Podman, image: str, tmp_path: Path) -> None:
    """The image names /scenarios as a scenario directory: a control request starts a mounted file by name."""
    scenario = tmp_path / "orders.toml"
    scenario.write_text('name = "orders"\n')
    tmp_path.chmod(0o755)
    scenario.chmod(0o644)  # readable by the image's unprivileged user
    with _run(podman, image, "-v", f"{tmp_path}:/scenarios:ro") as box:
        request = urllib.request.Request(
            f"http://127.0.0.1:{box.http_port}/fakejs/scenario/start",
            data=b'{"name": "orders.toml"}',
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=5) as response:
            assert json.loads(response.read())["scenario"] == "orders"


def test_shipped_scenarios_are_installed_in_the_image(podman: Podman, image: str) -> None:
    """The image installs fakejs with a plain ``pip install``: shipped scenarios are found by name."""
    script = "from fakejs.testkit.scenarios import load_scenario, shipped_names; print(' '.join(shipped_names())); load_scenario('consumer-deleted')"
    result = podman.run("run", "--rm", "--entrypoint", "python", image, "-c", script)
    names = result.stdout.split()
    assert names == sorted(path.stem for path in (REPO / "scenarios").glob("*.toml"))


async def test_self_signed_tls_writes_the_ca_to_a_mounted_directory(podman: Podman, image: str, tmp_path: Path) -> None:
    """``--tls-selfsigned --tls_dir /certs``: a client outside trusts the CA the server made at start."""
    certs = tmp_path / "certs"
    certs.mkdir()
    certs.chmod(0o777)  # writable by the image's unprivileged user
    with _run(podman, image, "-v", f"{certs}:/certs", server_args=("--tls-selfsigned", "--tls_dir", "/certs")) as box:
        podman.logs_with(box.name, "CA bundle:           /certs/ca.pem")
        context = ssl.create_default_context(cafile=str(certs / "ca.pem"))
        nc = await nats.connect(f"tls://localhost:{box.port}", tls=context)
        try:
            assert nc._server_info["tls_required"] is True
        finally:
            await nc.close()


async def test_a_cluster_of_three_nodes_in_one_container(podman: Podman, image: str) -> None:
    """``--cluster_size 3 -p P --jetstream=false``: nodes on P, P+1, P+2 (monitoring M+i); a message crosses."""
    ports = _free_runs(3)
    with _run(podman, image, server_args=("--cluster_size", "3", "--jetstream=false"), ports=ports) as box:
        podman.logs_with(box.name, *(f"Cluster C node n{node}: clients on" for node in (1, 2, 3)))
        first = await nats.connect(f"nats://127.0.0.1:{box.port}")
        third = await nats.connect(f"nats://127.0.0.1:{box.port + 2}")
        try:
            sub = await first.subscribe("image.cluster")
            await first.flush()
            deadline = time.monotonic() + 5
            while True:  # interest crosses the routes asynchronously
                await third.publish("image.cluster", b"crossed")
                try:
                    assert (await sub.next_msg(timeout=0.05)).data == b"crossed"
                    break
                except nats.errors.TimeoutError:
                    assert time.monotonic() < deadline, "no message crossed from node 3 to node 1"
        finally:
            await first.close()
            await third.close()
        with urllib.request.urlopen(f"http://127.0.0.1:{box.http_port + 1}/varz", timeout=5) as response:
            assert json.loads(response.read())["server_name"] == "n2"
