"""nats-server's ``friendlyBytes``: a byte count as its log lines show it (``953.67 MB``)."""

from __future__ import annotations

import math

__all__ = ["friendly_bytes"]

_UNITS = "KMGTPE"


def friendly_bytes(count: int) -> str:
    """``-1 B``, ``512 B``, ``953.67 MB``, ``17.66 GB``."""
    if count < 1024:
        return f"{count} B"
    exponent = int(math.log(count) / math.log(1024))
    return f"{count / 1024**exponent:.2f} {_UNITS[exponent - 1]}B"
