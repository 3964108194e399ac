"""A leaf port in a cluster: the nats.js harness's default ``leafnodes { listen }`` beside ``cluster`` starts.

The leaf port opens as on a server alone, and leaf remotes beside a cluster
start too (what crosses them is pinned by tests/parity/test_leafnodes_in_clusters.py).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

READY = "Server is ready"


def start_lines(config: Path) -> tuple[list[str], int | None]:
    """The log lines of ``fakejs -c config`` up to its readiness (or its exit), and its exit status if it exited."""
    process = subprocess.Popen([sys.executable, "-m", "fakejs", "-c", str(config)], stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    lines: list[str] = []
    try:
        for line in process.stderr:
            lines.append(line.rstrip("\n"))
            if READY in line:
                return lines, None
        return lines, process.wait(timeout=30)
    finally:
        process.kill()
        process.wait(timeout=30)


def test_a_leaf_port_in_a_cluster_is_opened(tmp_path: Path) -> None:
    config = tmp_path / "cluster.conf"
    config.write_text('port: -1\nleafnodes { listen: "127.0.0.1:-1" }\ncluster { name: c, listen: "127.0.0.1:-1" }\n')
    lines, status = start_lines(config)
    assert status is None, lines
    assert any("Listening for leafnode connections" in line for line in lines), lines
    assert not any("not served by fakejs" in line for line in lines), lines


def test_leaf_remotes_in_a_cluster_start(tmp_path: Path) -> None:
    config = tmp_path / "remotes.conf"
    config.write_text(
        'port: -1\nleafnodes { remotes [ { url: "nats://127.0.0.1:1" } ] }\ncluster { name: c, listen: "127.0.0.1:-1" }\n'
    )
    lines, status = start_lines(config)
    assert status is None, lines
    assert not any("not supported by fakejs" in line for line in lines), lines
