"""The consumer request a mirror or source sends to its origin.

An ephemeral consumer is asked for with ``CONSUMER.CREATE`` and a config
written in Go's field order (nats-server's ``setupMirrorConsumer`` /
``trySetupSourceConsumer``); a durable sourcing consumer (``consumer:
{name, deliver_subject}``, made beforehand by the origin's owner) is only
moved back to its ack floor with an empty ``CONSUMER.RESET``.
"""

from __future__ import annotations

from typing import Any

from fakejs.gocompat.gotime import NS

HEARTBEAT_NS = NS  # sourceHealthHB
ACK_WAIT_NS = 22 * 3600 * NS
INACTIVE_NS = 10 * NS  # sourceHealthCheckInterval


def consumer_config(name: str, metadata: dict[str, str]) -> dict[str, Any]:
    """The consumer nats-server asks for, in Go's field order (start and filters filled in after)."""
    return {
        "name": name,
        "deliver_policy": "all",
        "ack_policy": "none",
        "ack_wait": ACK_WAIT_NS,
        "max_deliver": 1,
        "replay_policy": "instant",
        "flow_control": True,
        "deliver_subject": "",
        "idle_heartbeat": HEARTBEAT_NS,
        "inactive_threshold": INACTIVE_NS,
        "num_replicas": 0,
        "direct": True,
        "sourcing": True,
        "metadata": metadata,
    }


def with_start(config: dict[str, Any], policy: str, seq: int = 0, time: Any = None) -> dict[str, Any]:
    """The config with its deliver policy and start placed where Go writes them."""
    out: dict[str, Any] = {}
    for key, value in config.items():
        out[key] = value
        if key == "deliver_policy":
            out[key] = policy
            if seq:
                out["opt_start_seq"] = seq
            if time is not None:
                out["opt_start_time"] = time
    return out


def with_filters(config: dict[str, Any], filter_subject: str, filters: list[str]) -> dict[str, Any]:
    """The config with ``filter_subject`` / ``filter_subjects`` placed after ``max_deliver``."""
    out: dict[str, Any] = {}
    for key, value in config.items():
        out[key] = value
        if key == "max_deliver":
            if filter_subject:
                out["filter_subject"] = filter_subject
            if filters:
                out["filter_subjects"] = filters
    return out


def create_subject(origin: str, config: dict[str, Any]) -> str:
    """``CONSUMER.CREATE.<origin>.<name>.<filter>`` with a single filter, else ``CONSUMER.CREATE.<origin>``."""
    if config.get("filter_subject"):
        return f"$JS.API.CONSUMER.CREATE.{origin}.{config['name']}.{config['filter_subject']}"
    return f"$JS.API.CONSUMER.CREATE.{origin}"


def reset_subject(origin: str, consumer: str) -> str:
    """The durable sourcing consumer is not created but reset to its ack floor."""
    return f"$JS.API.CONSUMER.RESET.{origin}.{consumer}"
