"""An account's JetStream limits, and the value of a limit nats-server does not enforce.

Apart from :mod:`fakejs.core.account_config` (the accounts a configuration file or a JWT makes):
every JetStream start reads the limits, and a plain start builds no other account setting.
"""

from __future__ import annotations

from dataclasses import dataclass

# A limit nats-server does not enforce (``jwt.NoLimit``).
NO_LIMIT = -1


@dataclass(frozen=True)
class JetStreamLimits:
    """An account's JetStream limits (nats-server's ``JetStreamAccountLimits``); -1 means unlimited."""

    max_memory: int = -1
    max_storage: int = -1
    max_streams: int = -1
    max_consumers: int = -1
    max_ack_pending: int = -1
    memory_max_stream_bytes: int = -1
    storage_max_stream_bytes: int = -1
    max_bytes_required: bool = False
