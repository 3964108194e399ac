"""What nats-server 2.15.1 reports for a stream nobody configured beyond its name.

Stream tests state expectations as "the defaults, with these changes"; one
copy of the defaults keeps every file reading the same server.
"""

from __future__ import annotations

from typing import Any

from fakejs.parity.normalize import ZERO_TIME

OMIT = object()  # marks a key that must be absent from an expected config

EMPTY_STATE = {
    "messages": 0,
    "bytes": 0,
    "first_seq": 0,
    "first_ts": ZERO_TIME,
    "last_seq": 0,
    "last_ts": ZERO_TIME,
    "consumer_count": 0,
}


def meta(req_level: int = 0, **user: str) -> dict[str, str]:
    """The metadata the server echoes: user keys plus its three ``_nats.*`` keys."""
    return {**user, "_nats.level": "5", "_nats.req.level": str(req_level), "_nats.ver": "2.15.1"}


def stream_config(name: str = "S", subjects: Any = None, **changes: Any) -> dict[str, Any]:
    """The config nats-server echoes for ``{"name": name}`` (subjects default to the name),
    with ``changes`` applied; a value of :data:`OMIT` removes the key."""
    cfg: dict[str, Any] = {
        "name": name,
        "subjects": [name] if subjects is None else subjects,
        "retention": "limits",
        "max_consumers": -1,
        "max_msgs": -1,
        "max_bytes": -1,
        "max_age": 0,
        "max_msgs_per_subject": -1,
        "max_msg_size": -1,
        "discard": "old",
        "storage": "file",
        "num_replicas": 1,
        "duplicate_window": 120_000_000_000,
        "compression": "none",
        "allow_direct": False,
        "mirror_direct": False,
        "sealed": False,
        "deny_delete": False,
        "deny_purge": False,
        "allow_rollup_hdrs": False,
        "consumer_limits": {},
        "allow_msg_ttl": False,
        "metadata": meta(),
    }
    cfg.update(changes)
    return {key: value for key, value in cfg.items() if value is not OMIT}
