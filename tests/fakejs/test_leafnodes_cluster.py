"""A leaf port in a cluster: the nats.js harness's default ``leafnodes { listen }`` beside ``cluster`` starts.

Leaf connections across routes are not served yet: the port is named in a
notice and not opened, and remotes in a cluster are refused at start.
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


def test_a_listen_only_leaf_block_in_a_cluster_starts_with_a_notice(tmp_path: Path) -> None:
    config = tmp_path / "cluster.conf"
    config.write_text('port: -1\nleafnodes { listen: "127.0.0.1:-1" }\ncluster { name: c, listen: "127.0.0.1:-1" }\n')
    lines, status = start_lines(config)
    assert status is None, lines
    notice = (
        "leafnodes listener (127.0.0.1:-1) accepted from the configuration file but not served by fakejs in a cluster"
    )
    assert any(line.endswith(notice) for line in lines), lines
    assert not any("Listening for leafnode connections" in line for line in lines), lines


def test_leaf_remotes_in_a_cluster_are_refused_at_start(tmp_path: Path) -> None:
    config = tmp_path / "remotes.conf"
    config.write_text(
        'port: -1\nleafnodes { remotes [ { url: "nats://127.0.0.1:1" } ] }\ncluster { name: c, listen: "127.0.0.1:-1" }\n'
    )
    lines, status = start_lines(config)
    assert status == 1, lines
    assert any(
        "leaf node remotes in a cluster (leafnodes { remotes } with cluster): not supported by fakejs yet" in line
        for line in lines
    ), lines
