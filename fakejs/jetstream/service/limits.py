"""An account's JetStream limits, checked where nats-server checks them.

``accounts { A { jetstream { max_mem, max_file, max_streams, max_consumers,
max_ack_pending, max_bytes_required, mem_max_stream_bytes,
disk_max_stream_bytes } } }`` become a :class:`JetStreamLimits` on the
account's JetStream.  nats-server checks them (single server, no tiers):

* every stream config, on create and update: ``max_bytes`` required, and
  not above the per-stream cap of its storage type;
* a new stream: the stream count, the stream's ``max_consumers`` against
  the account's, and its ``max_bytes`` reservation (1 byte when unset) on
  top of the account's other reservations of that storage type, then the
  same reservation against the server's store;
* an update: the same reservation check with the stream's new ``max_bytes``;
* a new consumer: the stream's consumer count against the smaller of the
  stream's and the account's ``max_consumers``, and ``max_ack_pending``
  (the default is lowered to the account's, a larger one is refused);
* a publish: the account's stored bytes of that storage type plus the
  message's stored size against ``max_memory`` / ``max_storage``.

Each check costs O(streams of the account), not O(messages).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from fakejs.core.jetstream_limits import JetStreamLimits

if TYPE_CHECKING:
    from fakejs.jetstream.config.stream import StreamConfig
    from fakejs.jetstream.errors import ApiError


def api_error(name: str) -> ApiError:
    """:func:`fakejs.jetstream.errors.api_error`, its table imported by the first error (start-up stays lean)."""
    # The error table comes with the first error (start-up stays lean)
    from fakejs.jetstream.errors import api_error as make

    return make(name)


def stream_bytes_rules(limits: JetStreamLimits, config: StreamConfig) -> None:
    """``maxBytesLimits`` on every stream config (create and update)."""
    memory = config["storage"] == "memory"
    cap = limits.memory_max_stream_bytes if memory else limits.storage_max_stream_bytes
    if limits.max_bytes_required and config["max_bytes"] <= 0:
        raise api_error("JSStreamMaxBytesRequired")
    if cap > 0 and config["max_bytes"] > cap:
        raise api_error("JSStreamMaxStreamBytesExceeded")


def reserved(configs: Iterable[StreamConfig], memory: bool, exclude: str = "") -> int:
    """The ``max_bytes`` reserved by the streams of one storage type (``exclude`` left out)."""
    total = 0
    for config in configs:
        if config["name"] != exclude and (config["storage"] == "memory") == memory and config["max_bytes"] > 0:
            total += config["max_bytes"]
    return total


def new_stream(limits: JetStreamLimits, config: StreamConfig, others: list[StreamConfig]) -> None:
    """``jsNonClusteredStreamLimitsCheck``'s account part: the stream count, then :func:`reservation`."""
    counted = sum(1 for other in others if other["name"] != config["name"])
    if limits.max_streams > 0 and counted >= limits.max_streams:
        raise api_error("JSMaximumStreamsLimitErr")
    reservation(limits, config, others)


def reservation(
    limits: JetStreamLimits, config: StreamConfig, others: list[StreamConfig], update: bool = False
) -> None:
    """``checkLimits`` against the account: ``max_consumers``, then the bytes the stream reserves.

    A new stream without ``max_bytes`` reserves 1 byte; an update without it, none.
    """
    if config["max_consumers"] > 0 and limits.max_consumers > 0 and config["max_consumers"] > limits.max_consumers:
        raise api_error("JSMaximumConsumersLimitErr")
    memory = config["storage"] == "memory"
    held = reserved(others, memory, exclude=config["name"])
    wanted = config["max_bytes"] if config["max_bytes"] >= 0 else (0 if update else 1)
    cap = limits.max_memory if memory else limits.max_storage
    if cap >= 0 and (held > cap or wanted > cap - held):
        raise api_error("JSMemoryResourcesExceededErr" if memory else "JSStorageResourcesExceededErr")


def consumer_room(limits: JetStreamLimits, stream_max_consumers: int, counted: int) -> None:
    """A new consumer: the stream's limit, or the account's when that is smaller (or the stream has none)."""
    cap = stream_max_consumers
    if cap <= 0 or (0 < limits.max_consumers < cap):
        cap = limits.max_consumers
    if cap > 0 and counted >= cap:
        raise api_error("JSMaximumConsumersLimitErr")


def message_size(memory: bool, subject: str, hdr: bytes | None, payload: bytes) -> int:
    """The bytes a message takes in a memory or a file store, as the account's limit counts them."""
    # The store's sizes come with the first publish under an account limit (a plain start stores nothing)
    from fakejs.jetstream.storage.message import file_size, memory_size

    return (memory_size if memory else file_size)(subject, hdr, payload)


def publish_exceeds(limits: JetStreamLimits, memory: bool, stored: int, size: int) -> bool:
    """``wouldExceedLimits``: the account's stored bytes of that kind plus this message over its limit."""
    cap = limits.max_memory if memory else limits.max_storage
    return cap >= 0 and stored + size > cap


# The usage counts each tier of ``$JS.API.INFO`` reports.
TIER_USAGE = ("memory", "storage", "reserved_memory", "reserved_storage", "streams", "consumers")


def tiers_json(info: Mapping[str, Any], tiers: Mapping[str, JetStreamLimits], used: str) -> dict[str, Any]:
    """The ``tiers`` of ``$JS.API.INFO``: each tier's limits, the usage in ``info`` under tier ``used`` only."""
    usage = {key: value for key, value in info.items() if key in TIER_USAGE}
    unused = dict.fromkeys(TIER_USAGE, 0)
    return {
        name: {**(usage if name == used else unused), "limits": limits_json(tier)}
        for name, tier in sorted(tiers.items())
    }


def limits_json(limits: JetStreamLimits) -> dict[str, Any]:
    """The ``limits`` object of ``$JS.API.INFO``."""
    return {
        "max_memory": limits.max_memory,
        "max_storage": limits.max_storage,
        "max_streams": limits.max_streams,
        "max_consumers": limits.max_consumers,
        "max_ack_pending": limits.max_ack_pending,
        "memory_max_stream_bytes": limits.memory_max_stream_bytes,
        "storage_max_stream_bytes": limits.storage_max_stream_bytes,
        "max_bytes_required": limits.max_bytes_required,
    }
