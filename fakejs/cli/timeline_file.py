"""``--timeline FILE``: the server's timeline written as one HTML page once the server has stopped.

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

if TYPE_CHECKING:
    from fakejs.server.server import Server

__all__ = ["write_timeline_page"]


def write_timeline_page(server: Server, path: str) -> None:
    """Write the stopped server's timeline page to ``path`` (logged: where, and how many events)."""
    log = get_logger()
    page = server.timeline_page(f"fakejs timeline: {server.broker.name}")
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
    log.info("Wrote the timeline page (%d events) to %s", len(server.recorded), path)
