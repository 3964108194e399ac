"""What STREAM.INFO shows of a mirror or source: ``StreamSourceInfo``."""

from __future__ import annotations

from typing import Any

from fakejs.jetstream.config.stream import transforms_json
from fakejs.jetstream.stream.feed import Feed


def source_info(feed: Feed, source: dict[str, Any], with_seq: bool) -> dict[str, Any]:
    """``StreamSourceInfo`` in the order nats-server 2.15.1 writes it.

    A mirror (``with_seq`` false) learns its ``filter_subject`` when it first
    asks the origin for a consumer: the reply that creates it shows none (its
    subject transforms, it shows).
    """
    out: dict[str, Any] = {"name": source["name"]}
    external = source.get("external")
    if external:
        out["external"] = {"api": external.get("api", ""), "deliver": external.get("deliver", "")}
    out["lag"] = feed.lag
    if with_seq and feed.stored_seq:
        out["seq"] = feed.stored_seq
    out["active"] = feed.active_ns()
    if (with_seq or feed.requested) and source.get("filter_subject"):
        out["filter_subject"] = source["filter_subject"]
    if source.get("subject_transforms"):
        out["subject_transforms"] = transforms_json(source["subject_transforms"])
    if feed.error is not None:
        out["error"] = feed.error
    return out
