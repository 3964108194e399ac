"""Where the parity campaign's choices come from, and the configurations and headers it draws.

Every builder takes a :class:`Draw`: something that can pick from a list or
an integer range.  :class:`RandomDraw` wraps ``random.Random(seed)``, so a
seed names one choice sequence anywhere;
:class:`~fakejs.parity.strategies.StrategyDraw` wraps a hypothesis ``draw``.
The values come from a :class:`~fakejs.parity.vocabulary.Vocabulary`.
:mod:`fakejs.parity.operations` builds whole operations on these.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

from fakejs.parity.vocabulary import (
    ATOMIC_ONE,
    BASE,
    CAMPAIGN,
    CONSUMER_EXTRAS,
    FEATURE_FLAGS,
    FEED_FILTERS,
    FEED_SUBJECT_SETS,
    FEED_TRANSFORMS,
    KV_BUCKET,
    KV_STREAM,
    PUBLISH_EXTRAS,
    SECOND,
    STREAM_EXTRAS,
    Vocabulary,
)

T = TypeVar("T")


class Draw(Protocol):
    """Where a builder gets its choices from (a seeded random, or hypothesis)."""

    def choice(self, values: Sequence[T]) -> T: ...

    def integer(self, low: int, high: int) -> int: ...


class RandomDraw:
    """Choices from ``random.Random(seed)``: the same seed, the same sequence, anywhere."""

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)

    def choice(self, values: Sequence[T]) -> T:
        return values[self.random.randrange(len(values))]

    def integer(self, low: int, high: int) -> int:
        return self.random.randint(low, high)


def maybe(d: Draw, odds: int) -> bool:
    """True one time in ``odds`` (drawn as ``integer(0, odds - 1) == 0``, which shrinks to True)."""
    return d.integer(0, odds - 1) == 0


BOOLEANS = (False, True)


def subject_matches(pattern: str, subject: str) -> bool:
    """NATS subject matching (``*`` one token, ``>`` the rest)."""
    want, have = pattern.split("."), subject.split(".")
    for i, token in enumerate(want):
        if token == ">":
            return len(have) > i
        if i >= len(have) or (token != "*" and token != have[i]):
            return False
    return len(want) == len(have)


# ---------------------------------------------------------------------------- configs and headers


def stream_config(d: Draw, v: Vocabulary = BASE) -> dict[str, Any]:
    """A stream configuration: a name, subjects, and a few optional limits and flags."""
    config: dict[str, Any] = {"name": d.choice(v.streams), "subjects": list(d.choice(v.subject_sets))}
    optional: dict[str, Sequence[Any]] = {
        "storage": ("memory", "file"),
        "retention": ("limits", "interest", "workqueue"),
        "max_msgs": (-1, 0, 1, 3, 10),
        "max_bytes": (-1, 100, 200, 1000),
        "max_msgs_per_subject": (-1, 1, 2),
        "max_msg_size": (-1, 5, 64),
        "discard": ("old", "new"),
        "discard_new_per_subject": BOOLEANS,
        "allow_rollup_hdrs": BOOLEANS,
        "deny_delete": BOOLEANS,
        "deny_purge": BOOLEANS,
        "allow_msg_ttl": BOOLEANS,
        "duplicate_window": v.duplicate_windows,
        "max_consumers": (-1, 1),
        "sealed": BOOLEANS,
        "no_ack": BOOLEANS,
        "allow_direct": BOOLEANS,
    }
    for key, values in optional.items():
        if maybe(d, 5):
            config[key] = d.choice(values)
    for key, values in STREAM_EXTRAS.items():
        if (v.extras or key in v.base_extras) and maybe(d, 8):
            config[key] = d.choice(values)
    if v.extras and maybe(d, 2):
        config[d.choice(FEATURE_FLAGS)] = True
    if v.feeds and maybe(d, 5):
        _feed(d, v, config)
    if v.direct and "allow_direct" not in config and maybe(d, 2):
        config["allow_direct"] = True  # campaigns want Direct Get to have something to answer
    return config


def _feed(d: Draw, v: Vocabulary, config: dict[str, Any]) -> None:
    """Make ``config`` a mirror or a sourcing stream (:func:`~fakejs.parity.operations.generate` aims it)."""
    config["subjects"] = list(d.choice(FEED_SUBJECT_SETS))
    if maybe(d, 3):
        config["mirror"] = _origin(d, v)
        if not config["subjects"] or maybe(d, 2):
            config.pop("subjects")
        return
    config["sources"] = [_origin(d, v) for _ in range(d.integer(1, 2))]
    if maybe(d, 4):
        config["allow_msg_counter"] = True  # counters sourcing counters add up
    if not config["subjects"] and maybe(d, 2):
        config.pop("subjects")


def _origin(d: Draw, v: Vocabulary) -> dict[str, Any]:
    """One mirror or source: a stream of the vocabulary, maybe a filter, maybe subject transforms."""
    origin: dict[str, Any] = {"name": d.choice(v.streams)}
    how = d.choice(("all", "filter", "transforms"))
    if how == "filter":
        origin["filter_subject"] = d.choice(FEED_FILTERS)
    elif how == "transforms":
        origin["subject_transforms"] = list(d.choice(FEED_TRANSFORMS))
    if maybe(d, 6):
        origin["opt_start_seq"] = d.choice((2, 3))
    return origin


def kv_config(d: Draw) -> dict[str, Any]:
    """The stream a KV bucket is (what nats.py's ``create_key_value`` sends)."""
    return {
        "name": KV_STREAM,
        "subjects": [f"$KV.{KV_BUCKET}.>"],
        "retention": "limits",
        "max_consumers": -1,
        "max_msgs": -1,
        "max_bytes": -1,
        "max_msgs_per_subject": d.choice((1, 3, 5)),
        "max_msg_size": -1,
        "storage": d.choice(("file", "memory")),
        "discard": "new",
        "num_replicas": 1,
        "duplicate_window": 120 * SECOND,
        "allow_rollup_hdrs": True,
        "deny_delete": True,
        "allow_direct": True,
        "allow_msg_ttl": d.choice(BOOLEANS),
    }


def publish_headers(d: Draw, v: Vocabulary = BASE) -> dict[str, str] | None:
    """Publish headers that steer JetStream: dedup, expectations, rollups, TTLs."""
    choices: dict[str, Sequence[str]] = {
        "Nats-Msg-Id": ("m1", "m2", "m3"),
        "Nats-Expected-Stream": tuple(v.streams) + ("X",),
        "Nats-Expected-Last-Sequence": ("0", "1", "2", "5", "x"),
        "Nats-Expected-Last-Subject-Sequence": ("0", "1", "3"),
        "Nats-Expected-Last-Msg-Id": ("m1", "m2", ""),
        "Nats-Rollup": ("sub", "all", "bad"),
        "Nats-TTL": ("1h", "never", "0s", "x", "30m"),
    }
    headers = {}
    for key, values in choices.items():
        if maybe(d, 6):
            headers[key] = d.choice(values)
    if v.extras:
        for key, values in PUBLISH_EXTRAS.items():
            if maybe(d, 8):
                headers[key] = d.choice(values)
        if maybe(d, 12):
            headers.update(ATOMIC_ONE)
    return headers or None


def consumer_config(d: Draw, v: Vocabulary = BASE) -> dict[str, Any]:
    """A durable consumer configuration (pull, or push to a subject nobody reads)."""
    config: dict[str, Any] = {"durable_name": d.choice(v.consumers)}
    optional: dict[str, Sequence[Any]] = {
        "ack_policy": ("explicit", "none", "all"),
        "deliver_policy": ("all", "last", "new", "last_per_subject"),
        "filter_subject": v.consumer_filters,
        "max_ack_pending": (-1, 1, 2),
        "max_deliver": (-1, 1, 2),
        "deliver_subject": ("push.x",),
        "max_waiting": (1, 512),
    }
    for key, values in optional.items():
        if maybe(d, 4):
            config[key] = d.choice(values)
    if v.extras:
        for bundles in CONSUMER_EXTRAS.values():
            if maybe(d, 8):
                config.update(d.choice(bundles))
        if "ack_policy" not in config and maybe(d, 2):
            config["ack_policy"] = "explicit"  # the API's default is "none": no acks to send
    return config


def direct_get_body(d: Draw, v: Vocabulary = CAMPAIGN) -> dict[str, Any] | None:
    """A Direct Get request body: every selector, batches, multi_last, and some invalid mixes."""
    subjects = tuple(v.publish_subjects) + ("a.*", ">")
    form = d.choice(("seq", "last_by_subj", "next_by_subj", "batch", "multi_last", "invalid"))
    body: dict[str, Any]
    if form == "seq":
        body = {"seq": d.choice(v.sequences)}
    elif form == "last_by_subj":
        body = {"last_by_subj": d.choice(subjects)}
    elif form == "next_by_subj":
        body = {"seq": d.choice(v.sequences), "next_by_subj": d.choice(subjects)}
    elif form == "batch":
        body = {"seq": d.choice(v.sequences), "batch": d.choice((1, 2, 5))}
        if maybe(d, 2):
            body["next_by_subj"] = d.choice(subjects)
        if maybe(d, 3):
            body["max_bytes"] = d.choice((1, 40, 1000))
    elif form == "multi_last":
        body = {"multi_last": list(d.choice(((">",), ("a.*",), ("a", "b"), (f"$KV.{KV_BUCKET}.>",))))}
        if maybe(d, 2):
            body["up_to_seq"] = d.choice(v.sequences)
        if maybe(d, 3):
            body["batch"] = d.choice((1, 2))
    else:
        return d.choice((None, {}, {"seq": 1, "last_by_subj": "a"}, {"last_by_subj": "a", "batch": 2}))
    if maybe(d, 4):
        body["no_hdr"] = True
    return body
