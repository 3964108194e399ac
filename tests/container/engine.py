"""Podman as the container tests call it: set up by the recipe beside the repository, the image built once.

The recipe (``../shared/container/podman-env.sh``) installs podman, configures it
for this kind of machine and makes a local Debian base image. When it is missing
or cannot run (no root, no apt), the fixtures in ``conftest.py`` skip the tests
with the reason shown.
"""

from __future__ import annotations

import os
import shlex
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RECIPE = REPO.parent / "shared" / "container" / "podman-env.sh"
# The recipe builds this base (Debian bookworm, Python 3.11 from apt); no registry is needed.
BASE_IMAGE = "localhost/debian:bookworm"
IMAGE_TAG = "localhost/fakejs:test"
SETUP_TIMEOUT = 600.0
BUILD_TIMEOUT = 900.0
READY_TIMEOUT = 30.0


@dataclass
class Podman:
    """How to call podman as the recipe configured it."""

    env: dict[str, str]
    build_mounts: list[str]

    def run(self, *args: str, timeout: float = 60.0, check: bool = True) -> subprocess.CompletedProcess[str]:
        return self.command(["podman", *args], timeout=timeout, check=check)

    def command(
        self, argv: list[str], *, timeout: float = 60.0, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run a program (podman or a tool driving it) with the recipe's settings."""
        result = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=timeout, check=False)
        if check and result.returncode != 0:
            raise AssertionError(
                f"{shlex.join(argv)} exited {result.returncode}:\n{tail(result.stdout)}\n{tail(result.stderr)}"
            )
        return result

    def logs(self, name: str) -> str:
        """The container's log: fakejs writes it to stderr, which podman keeps apart from stdout."""
        result = self.run("logs", name, check=False)
        return result.stdout + result.stderr

    def logs_with(self, name: str, *texts: str) -> str:
        """The container's log once it holds every one of ``texts`` (or the test fails, showing it)."""
        deadline = time.monotonic() + READY_TIMEOUT
        while True:
            logs = self.logs(name)
            if all(text in logs for text in texts):
                return logs
            assert time.monotonic() < deadline, f"not logged: {[t for t in texts if t not in logs]}\n{tail(logs)}"
            time.sleep(0.1)


def tail(text: str, lines: int = 25) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def free_ports(count: int) -> list[int]:
    """Ports free on every interface (a container binds 0.0.0.0), never fixed ones:
    other servers on the machine may hold the usual 4222/8222."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(("", 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def set_up_podman() -> Podman:
    """Source the recipe and keep the settings it exports (skips the test when it cannot run)."""
    if not RECIPE.is_file():
        pytest.skip(f"podman recipe not found at {RECIPE}")
    if os.geteuid() != 0:
        pytest.skip("the podman recipe needs root (it installs packages with apt)")
    script = '. "$1" && printf "%s\\n" "$CONTAINERS_CONF" "$CONTAINERS_STORAGE_CONF" "$PODMAN_BUILD_MOUNTS"'
    try:
        result = subprocess.run(
            ["sh", "-c", script, "sh", str(RECIPE)], check=False, capture_output=True, text=True, timeout=SETUP_TIMEOUT
        )
    except subprocess.TimeoutExpired:
        pytest.skip(f"podman set-up took longer than {SETUP_TIMEOUT:.0f}s")
    if result.returncode != 0:
        pytest.skip(f"podman could not be set up ({RECIPE} exited {result.returncode}): {tail(result.stderr, 5)}")
    conf, storage_conf, mounts = result.stdout.splitlines()[-3:]
    env = dict(os.environ, CONTAINERS_CONF=conf, CONTAINERS_STORAGE_CONF=storage_conf)
    return Podman(env=env, build_mounts=shlex.split(mounts))


def build_image(podman: Podman, iidfile: Path) -> str:
    """Build the repository's image; returns its ID, which other builds of the same tag can't move."""
    # Docker format: podman's default OCI format drops HEALTHCHECK.
    podman.run(
        "build", "--format", "docker", "--network=host", *podman.build_mounts,
        "--build-arg", f"BASE_IMAGE={BASE_IMAGE}", "--iidfile", str(iidfile), "-t", IMAGE_TAG, str(REPO),
        timeout=BUILD_TIMEOUT,
    )  # fmt: skip
    return iidfile.read_text().strip()
