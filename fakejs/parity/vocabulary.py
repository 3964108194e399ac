"""The value sets operations are drawn from, and what is deliberately left out.

Small sets on purpose: with three streams and ten subjects, random
operations keep colliding (same stream, overlapping subjects, the message
just deleted), which is where servers disagree.  :data:`BASE` is what the
test suite's differential state machine draws from; :data:`CAMPAIGN` adds a
KV-shaped stream, Direct Get and the rarer settings below, for campaigns.

Nothing here depends on time passing (see :mod:`fakejs.parity.operations`),
and nothing here is a setting fakejs refuses by name (see :func:`_supported`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from fakejs.gocompat.gotime import NS
from fakejs.jetstream.config.stream import UNSUPPORTED

SECOND = NS  # JetStream durations in JSON are nanoseconds


@dataclass(frozen=True)
class Vocabulary:
    """The names, subjects and numbers operations are drawn from."""

    streams: tuple[str, ...] = ("S1", "S2", "S3")
    consumers: tuple[str, ...] = ("C1", "C2")
    subject_sets: tuple[tuple[str, ...], ...] = (
        ("a",),
        ("a.*",),
        ("a.>",),
        ("b", "c"),
        ("c.>",),
        ("a", "b"),
        ("d.*.x",),
    )
    publish_subjects: tuple[str, ...] = ("a", "a.1", "a.2", "a.1.2", "b", "c", "c.1", "d.1.x", "d.2.x", "e")
    sequences: tuple[int, ...] = (0, 1, 2, 3, 5, 8)
    purge_filters: tuple[str | None, ...] = (None, "a", "a.*", "b", "c.>", ">")
    info_filters: tuple[str | None, ...] = (None, ">", "a.*", "c")
    list_subjects: tuple[str | None, ...] = (None, "a", "b", "c.1")
    consumer_filters: tuple[str, ...] = ("a", "a.*", ">", "c.1", "b")
    duplicate_windows: tuple[int, ...] = (0, 30 * SECOND, 120 * SECOND)
    # Campaign-only: Direct Get and KV operations, and the rarer settings (STREAM_EXTRAS...).
    direct: bool = False
    kv: bool = False
    extras: bool = False
    # The rarer stream settings drawn even without ``extras`` (cheap and synchronous: no time, no copies).
    base_extras: tuple[str, ...] = ("allow_atomic", "subject_transform", "republish")
    # Campaign-only: streams fed by others (mirror, sources), fast batches, message schedules.
    feeds: bool = False
    # Campaign-only: prioritized pulls, TTL expiry, a second account's imports, tracing, advisories, reloads.
    wide: bool = False


BASE = Vocabulary()

KV_BUCKET = "b"
KV_STREAM = f"KV_{KV_BUCKET}"
KV_KEYS = ("k1", "k2", "k3")
KV_SUBJECTS = tuple(f"$KV.{KV_BUCKET}.{key}" for key in KV_KEYS)

CAMPAIGN = replace(
    BASE,
    streams=BASE.streams + (KV_STREAM,),
    publish_subjects=BASE.publish_subjects + KV_SUBJECTS[:2],
    consumer_filters=BASE.consumer_filters + (f"$KV.{KV_BUCKET}.>",),
    direct=True,
    kv=True,
    extras=True,
    feeds=True,
    wide=True,
)

# Rarer stream settings, each drawn one time in eight in campaigns.  Left out
# on purpose: ``max_age`` (time).  ``mirror`` and ``sources`` are drawn apart
# (see FEED_*), with the executor waiting for the copies to settle.
CANDIDATE_STREAM_EXTRAS: dict[str, Sequence[Any]] = {
    "description": ("orders",),
    "metadata": ({"team": "a"},),
    "compression": ("none", "s2", "zip"),
    "first_seq": (1, 5, 100),
    "num_replicas": (0, 1, 3),
    "subject_delete_marker_ttl": (SECOND, 60 * SECOND),
    "allow_msg_counter": (False, True),
    "allow_atomic": (False, True),
    "allow_msg_schedules": (False, True),
    "allow_batched": (False, True),
    "persist_mode": ("default", "async"),
    "republish": ({"src": ">", "dest": "rp.>"}, {"src": "a.*", "dest": "rp.{{wildcard(1)}}", "headers_only": True}),
    "subject_transform": ({"src": "a.*", "dest": "t.{{wildcard(1)}}"}, {"src": ">", "dest": "t.>"}),
    "consumer_limits": ({"max_ack_pending": 1},),
}
# Values fakejs refuses outside its table of unsupported settings (none at the moment).
REFUSED_VALUES: frozenset[tuple[str, str]] = frozenset()


def _supported(candidates: dict[str, Sequence[Any]]) -> dict[str, Sequence[Any]]:
    """The candidates fakejs implements.

    fakejs refuses some settings by name ("republish is not supported by
    fakejs", see ``UNSUPPORTED`` in :mod:`fakejs.jetstream.config.stream`).
    Every such request is a known, deliberate divergence that would drown
    everything else in a report, so they are not drawn -- and a setting starts
    being drawn as soon as fakejs implements it and drops it from that table.
    """
    refused = {key for key, _ in UNSUPPORTED}
    out: dict[str, Sequence[Any]] = {}
    for key, values in candidates.items():
        kept = tuple(value for value in values if not (isinstance(value, str) and (key, value) in REFUSED_VALUES))
        if key not in refused and kept:
            out[key] = kept
    return out


STREAM_EXTRAS = _supported(CANDIDATE_STREAM_EXTRAS)

# Rarer consumer settings (one time in eight), as bundles merged into the
# config, so settings that only work together come together.  Left out:
# ``replay_policy: original`` and ``pause_until`` (time), ``inactive_threshold``
# and ephemeral consumers (deleted after a period of inactivity: time again).
CONSUMER_EXTRAS: dict[str, Sequence[dict[str, Any]]] = {
    "description": ({"description": "worker"}, {"metadata": {"m": "1"}}),
    "filter_subjects": ({"filter_subjects": ["a", "b"]}, {"filter_subjects": ["a.*", "c.>"]}, {"filter_subjects": []}),
    "start": ({"deliver_policy": "by_start_sequence", "opt_start_seq": 2}, {"opt_start_seq": 3}),
    "headers_only": ({"headers_only": True},),
    "sample_freq": ({"sample_freq": "50%"}, {"sample_freq": "bad"}),
    "limits": ({"max_batch": 1}, {"max_bytes": 10}, {"max_batch": 2, "max_bytes": 1000}, {"max_expires": 60 * SECOND}),
    "storage": ({"num_replicas": 1, "mem_storage": True}, {"num_replicas": 0}),
    "ack_wait": ({"ack_wait": 60 * SECOND},),
    "priority": (
        {"priority_groups": ["g"], "priority_policy": "overflow"},
        {"priority_groups": ["g"], "priority_policy": "pinned_client", "priority_timeout": 120 * SECOND},
        {"priority_groups": ["g"], "priority_policy": "prioritized"},
        {"priority_policy": "overflow"},
    ),
}

# Publish headers only campaigns send: counters, batches of one message, the subject-scoped expectation.
PUBLISH_EXTRAS: dict[str, Sequence[str]] = {
    "Nats-Incr": ("1", "+5", "-2", "x"),
    "Nats-Expected-Last-Subject-Sequence-Subject": ("a", "a.*"),
}
ATOMIC_ONE = {"Nats-Batch-Id": "b1", "Nats-Batch-Sequence": "1", "Nats-Batch-Commit": "1"}

# One of these is switched on one time in two in campaigns, so the batch and
# schedule operations find streams that take them.
FEATURE_FLAGS = ("allow_atomic", "allow_batched", "allow_msg_schedules", "allow_msg_counter")

# Streams fed by other streams (campaigns): a mirror or one or two sources,
# naming the vocabulary's streams (the one created last, mostly), with filters
# and subject transforms.  Sourcing streams have their own subjects or none.
FEED_FILTERS: tuple[str | None, ...] = (None, None, "a.*", "b", ">", "c.>")
FEED_TRANSFORMS: tuple[tuple[dict[str, str], ...], ...] = (
    ({"src": "a.*", "dest": "m.{{wildcard(1)}}"},),
    ({"src": ">", "dest": "m.>"},),
    ({"src": "a.>", "dest": "m.a.>"}, {"src": "b", "dest": "m.b"}),
    ({"src": "b", "dest": "c"},),
)
FEED_SUBJECT_SETS: tuple[tuple[str, ...], ...] = ((), (), ("m.>",), ("e",))

# Atomic batches (campaigns and the state machine): ids, and how a batch is broken.
BATCH_IDS = ("b1", "b2")
BATCH_BREAKS = ("none", "none", "none", "gap", "no_commit", "bad_commit", "eob", "start_at_2")
# Fast batches (``$FI`` reply subjects): ids, flow values and gap modes.
FAST_IDS = ("f1", "f2")
FAST_FLOWS: tuple[int | str, ...] = (1, 2, 10, 0)
FAST_MODES = ("ok", "fail")
# Message schedules: only those that fire at once (``@at`` in the past), never
# (``@at`` far ahead), or are refused; repeating ones depend on the clock.
SCHEDULES = (
    "@at 2020-01-01T00:00:00Z",
    "@at 2020-01-01T00:00:00Z",
    "@at 2099-01-01T00:00:00Z",
    "@every 500ms",
    "@at x",
    "* * * *",
    "",
)
SCHEDULE_EXTRAS: dict[str, Sequence[str]] = {
    "Nats-Schedule-TTL": ("1h", "x"),
    "Nats-Schedule-Rollup": ("sub", "bad"),
    "Nats-Schedule-Source": ("a", "b", "a.*"),
    "Nats-Schedule-Time-Zone": ("UTC",),
}

ACK_PAYLOADS = ("+ACK", "", "-NAK", "+TERM", "+WPI")
