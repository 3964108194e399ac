"""The campaign's wider operation families: what clients reach beyond one account's JetStream API.

Each builder takes a :class:`~fakejs.parity.configs.Draw` like those of
:mod:`fakejs.parity.operations`, so seeds and hypothesis draw them alike:

* ``priority_pulls`` -- a consumer with ``priority_policy: prioritized``,
  two to four pulls of different priorities written in one write, then as
  many messages as they ask for (or fewer) published one by one; or
  (``pending``) fewer messages published first, which the pulls of the one
  write share;
* ``kv_ttl`` -- a KV bucket made anew with ``subject_delete_marker_ttl`` of
  1 s, puts, deletes and purges that carry ``Nats-TTL: 1s``, then
  ``ttl.settle``: both servers polled in lockstep until every message has
  expired (:mod:`fakejs.parity.wide`);
* ``import_consume`` -- the pull consumer bundle of
  :mod:`fakejs.parity.operations` (``consume``) carried out by a second account,
  APP, through its import of ``$JS.API.>`` (under ``JS.acc.API``) and
  ``$JS.ACK.>`` (:mod:`fakejs.parity.accounts`); two fetches in three wait
  (``expires`` 1 s) instead of ``no_wait``;
* ``traced_publish`` -- a publish with ``Nats-Trace-Dest`` (sometimes
  ``Nats-Trace-Only``), its reply and its trace event;
* ``advisories`` -- the JetStream advisories collected since the last such
  operation (the whole sequence is watched once one is drawn);
* ``reload`` -- the configuration rewritten with a reloadable change and
  reloaded on both servers.

Operations that need the two-account configuration (``account: app``, and
every ``reload``) make the pair start from it (:func:`accounts_of`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fakejs.parity.configs import Draw, kv_config, maybe, subject_matches
from fakejs.parity.vocabulary import KV_BUCKET, KV_KEYS, KV_STREAM, SECOND, Vocabulary

Operation = dict[str, Any]

APP = "app"  # the account that uses JetStream through imports
EXPORTS = ("singleton", "stream")  # response types of the exported ``$JS.API.>``
PRIORITIES = (0, 1, 1, 3, 9)
TTL = "1s"
PULL_EXPIRES = 1_000_000_000  # a waiting pull through the imports ends after 1 s
TRACE_DEST = "trace.x"
RELOADS = ("max_payload", "max_connections", "debug", "base")


def matching_subjects(v: Vocabulary, subjects: Sequence[str]) -> list[str]:
    """The vocabulary's publish subjects a stream with ``subjects`` takes (all of them if none does)."""
    found = [s for s in v.publish_subjects if any(subject_matches(p, s) for p in subjects)]
    return found or list(v.publish_subjects)


def priority_pulls(d: Draw, v: Vocabulary, stream: str | None = None, subjects: Sequence[str] = ()) -> list[Operation]:
    """A prioritized consumer, pulls of different priorities in one write, then the messages they wait for."""
    name = stream or d.choice(v.streams)
    consumer = d.choice(v.consumers)
    config = {
        "durable_name": consumer,
        "deliver_policy": "new",
        "ack_policy": d.choice(("none", "explicit")),
        "priority_groups": ["g"],
        "priority_policy": "prioritized",
    }
    pulls: list[dict[str, Any]] = []
    for _ in range(d.integer(2, 4)):
        pull: dict[str, Any] = {"batch": d.integer(1, 2), "group": "g"}
        priority = d.choice(PRIORITIES)
        if priority or maybe(d, 2):
            pull["priority"] = priority
        pulls.append(pull)
    wanted = sum(pull["batch"] for pull in pulls)
    pending = maybe(d, 2)  # the messages are stored before the pulls come, or after they wait
    messages = d.integer(1, wanted) if pending or maybe(d, 3) else wanted
    return [
        {
            "op": "consumer.create",
            "stream": name,
            "consumer": consumer,
            "body": {"stream_name": name, "config": config},
        },
        {
            "op": "priority_pulls",
            "stream": name,
            "consumer": consumer,
            "pulls": pulls,
            "subject": d.choice(matching_subjects(v, subjects)),
            "messages": messages,
            "pending": pending,
        },
    ]


def _kv_message(kind: str, key: str, ttl: bool) -> Operation:
    headers: dict[str, str] = {"Nats-TTL": TTL} if ttl else {}
    if kind == "kv.delete":
        headers["KV-Operation"] = "DEL"
    elif kind == "kv.purge":
        headers.update({"KV-Operation": "PURGE", "Nats-Rollup": "sub"})
    payload = "v" if kind == "kv.put" else ""
    return {"op": kind, "subject": f"$KV.{KV_BUCKET}.{key}", "payload": payload, "headers": headers or None}


def kv_ttl(d: Draw, v: Vocabulary) -> list[Operation]:
    """A bucket with 1 s delete markers; messages that all expire (puts, deletes, purges with ``Nats-TTL``)."""
    config = kv_config(d)
    config.update(allow_msg_ttl=True, subject_delete_marker_ttl=SECOND)
    config["max_msgs_per_subject"] = d.choice((1, 5))
    ops: list[Operation] = [
        {"op": "stream.delete", "stream": KV_STREAM},
        {"op": "kv.create", "stream": KV_STREAM, "body": config},
    ]
    for _ in range(d.integer(1, 3)):
        key = d.choice(KV_KEYS)
        how = d.choice(("put", "purge", "delete", "put_then_purge", "put_then_purge"))
        if how == "put_then_purge":  # the put has no TTL; the purge's roll-up removes it
            ops += [_kv_message("kv.put", key, False), _kv_message("kv.purge", key, True)]
        else:
            ops.append(_kv_message(f"kv.{how}", key, True))
    ops.append({"op": "ttl.settle", "stream": KV_STREAM})
    return ops


def through_imports(d: Draw, ops: list[Operation], export: str | None = None) -> list[Operation]:
    """A consume bundle with the consumer's side carried out by APP, through its imports (publishes stay)."""
    export = export or d.choice(EXPORTS)
    for op in ops:
        if op["op"] != "publish":
            op["account"] = APP
            op["export"] = export
        if op["op"] == "fetch" and not maybe(d, 3):
            op["extra"] = {"no_wait": False, "expires": PULL_EXPIRES}  # the request waits, then ends
    return ops


def traced_publish(d: Draw, v: Vocabulary) -> list[Operation]:
    """A publish with ``Nats-Trace-Dest`` (and one time in three ``Nats-Trace-Only``)."""
    headers = {"Nats-Trace-Dest": TRACE_DEST}
    if maybe(d, 3):
        headers["Nats-Trace-Only"] = d.choice(("true", "1"))
    if maybe(d, 4):
        headers["Nats-Msg-Id"] = d.choice(("m1", "t1"))
    return [{"op": "traced_publish", "subject": d.choice(v.publish_subjects), "payload": "t", "headers": headers}]


def advisories(d: Draw, v: Vocabulary) -> list[Operation]:
    return [{"op": "advisories"}]


def reload(d: Draw, v: Vocabulary) -> list[Operation]:
    """A reloadable change of the two-account configuration (:data:`fakejs.parity.accounts.CHANGES`)."""
    return [{"op": "reload", "change": d.choice(RELOADS)}]


def accounts_of(ops: Sequence[Operation]) -> str | None:
    """The export the pair's two-account configuration needs (None: the plain single-account pair)."""
    needed = None
    for op in ops:
        if op.get("account") == APP:
            return str(op.get("export") or EXPORTS[0])
        if op["op"] == "reload":
            needed = EXPORTS[0]
    return needed
