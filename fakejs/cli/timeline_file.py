"""``--timeline FILE``: the server's (or the cluster's) timeline written as one HTML page once it has stopped.

The page is written after :meth:`~fakejs.server.server.Server.stop`, which
closed the clients and flushed the JetStream store: nothing acknowledged
waits on it.  It goes to a temporary file beside ``FILE``, then takes its
name, so a reader never sees half a page.  A page that cannot be written is
logged as an error; the server has stopped all the same.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from fakejs.core.log import get_logger
from fakejs.server.cluster_timeline import document
from fakejs.testkit.timeline import TimelineFilter
from fakejs.testkit.timeline_page import render

if TYPE_CHECKING:
    from fakejs.server.local_cluster import Cluster
    from fakejs.server.server import Server

__all__ = ["write_cluster_timeline_page", "write_timeline_page"]


def write_timeline_page(server: Server, path: str) -> None:
    """Write the stopped server's timeline page to ``path`` (logged: where, and how many events)."""
    _write(server.timeline_page(f"fakejs timeline: {server.broker.name}"), len(server.recorded), path)


def write_cluster_timeline_page(cluster: Cluster, path: str) -> None:
    """Write the stopped cluster's timeline page (a group of lanes per node) to ``path``: the nodes' events
    merged once, for the page and its count."""
    merged = document(cluster.servers, TimelineFilter())
    _write(render(merged, f"fakejs timeline: cluster {cluster.name}"), len(merged["events"]), path)


def _write(page: str, events: int, path: str) -> None:
    log = get_logger()
    directory, name = os.path.split(path)
    temporary = os.path.join(directory, f".{name}.{os.getpid()}.tmp")  # made as FILE would be: the umask's mode
    try:
        try:
            with open(temporary, "w", encoding="utf-8") as handle:
                handle.write(page)
            os.replace(temporary, path)
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)
    except OSError as exc:
        log.error("Could not write the timeline page to %s: %s", path, exc)
        return
    log.info("Wrote the timeline page (%d events) to %s", events, path)
