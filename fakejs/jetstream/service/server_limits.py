"""The server's JetStream store limits: the configured ones, or nats-server's defaults for this machine.

``jetstream { max_mem_store, max_file_store }`` set them; a limit not set
is computed as nats-server computes it (``dynJetStreamConfig``): three
quarters of the machine's memory (``sysinfo``'s total RAM), and three
quarters of the disk space free for an unprivileged user where the store
lives.  A limit configured as 0 stays 0.
"""

from __future__ import annotations

import os

from fakejs.core.options import ServerOptions

# nats-server's fallbacks when the machine cannot tell: 256 MiB of memory, 1 TiB of disk.
MAX_MEMORY_FALLBACK = 256 * 1024**2
MAX_STORAGE_FALLBACK = 1024**4


class ServerLimits:
    """The server's store limits in bytes; ``dynamic``: one of them was computed from the machine.

    A plain class: a dataclass costs its import, and every JetStream start imports this module.
    """

    __slots__ = ("dynamic", "max_memory", "max_storage")

    def __init__(self, max_memory: int, max_storage: int, dynamic: bool) -> None:
        self.max_memory = max_memory
        self.max_storage = max_storage
        self.dynamic = dynamic


def machine_memory() -> int:
    """Three quarters of the machine's memory (nats-server's default ``max_mem_store``)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return MAX_MEMORY_FALLBACK
    return int(total) // 4 * 3 if total > 0 else MAX_MEMORY_FALLBACK


def free_disk(path: str) -> int:
    """Three quarters of the disk free for an unprivileged user at ``path`` (nats-server's default ``max_file_store``)."""
    try:
        st = os.statvfs(path)
    except OSError:
        return MAX_STORAGE_FALLBACK
    return st.f_bavail * st.f_bsize // 4 * 3


def server_limits(options: ServerOptions, store_dir: str) -> ServerLimits:
    """The limits a server with ``options`` storing in ``store_dir`` runs with."""
    memory, storage = options.jetstream_max_memory, options.jetstream_max_store
    dynamic = memory <= 0 or storage <= 0
    return ServerLimits(
        max_memory=memory if memory >= 0 else machine_memory(),
        max_storage=storage if storage >= 0 else free_disk(store_dir),
        dynamic=dynamic,
    )
