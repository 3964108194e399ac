"""The operation model of differential testing: JetStream requests as plain data.

An *operation* is a JSON-able dict such as ``{"op": "stream.info", "stream":
"S1", "body": {"deleted_details": true}}``; a *sequence* is a list of them.
Plain data is what makes a divergence portable: it goes into a report, a
Spark task, a reproduction file, and back into :mod:`fakejs.parity.executor`
without any code attached.

How values are drawn
--------------------
Every builder (:func:`~fakejs.parity.configs.stream_config`,
:func:`~fakejs.parity.configs.publish_headers`, :func:`build`...) takes a
:class:`~fakejs.parity.configs.Draw`: something that can pick from a list
or an integer range.  Two implementations share the same builders:

* :class:`RandomDraw` wraps ``random.Random(seed)``.  :func:`generate` uses it,
  so a seed names one sequence, on any machine and in any Spark task, with no
  hypothesis machinery involved (hypothesis' ``.example()`` and ``find`` are not
  reproducible per seed, and its database is local state).
* :class:`~fakejs.parity.strategies.StrategyDraw` wraps a hypothesis ``draw``
  function, and the strategies of :mod:`fakejs.parity.strategies` are built on
  it, so the state machine in ``tests/property/test_stream_differential.py``
  draws from exactly the same value sets, and hypothesis can still shrink
  every choice (each pick is a ``sampled_from`` or ``integers`` draw).

Value sets live in a :class:`~fakejs.parity.vocabulary.Vocabulary`:
:data:`BASE` is the state machine's, :data:`CAMPAIGN` adds a KV-shaped
stream, Direct Get, more subjects and rarer settings for the large campaigns
(see :mod:`fakejs.parity.vocabulary`).

What is left out, and why
-------------------------
Nothing here moves time.  fakejs can run on a manual clock, but the real
server only has the wall clock, and the two cannot be aligned cheaply: a
sequence would have to sleep through every ``ack_wait``, ``max_age`` or TTL
and then still race the server's timers.  So there is no ``max_age``,
``inactive_threshold``, ``backoff`` or short duplicate window (the values
used are at least 30 s, far beyond any sequence's run time), and message TTLs
are an hour or more.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from fakejs.parity import families
from fakejs.parity.configs import (
    BOOLEANS,
    Draw,
    RandomDraw,
    consumer_config,
    direct_get_body,
    kv_config,
    maybe,
    publish_headers,
    stream_config,
    subject_matches,
)
from fakejs.parity.vocabulary import (
    ACK_PAYLOADS,
    ATOMIC_ONE,
    BASE,
    BATCH_BREAKS,
    BATCH_IDS,
    CAMPAIGN,
    CONSUMER_EXTRAS,
    FAST_FLOWS,
    FAST_IDS,
    FAST_MODES,
    KV_BUCKET,
    KV_KEYS,
    KV_STREAM,
    KV_SUBJECTS,
    PUBLISH_EXTRAS,
    SCHEDULE_EXTRAS,
    SCHEDULES,
    SECOND,
    STREAM_EXTRAS,
    Vocabulary,
)

__all__ = [
    "ACK_PAYLOADS", "ATOMIC_ONE", "BASE", "BUILDERS", "CAMPAIGN", "CONSUMER_EXTRAS", "KV_BUCKET", "KV_KEYS", "KV_STREAM",
    "KV_SUBJECTS", "PUBLISH_EXTRAS", "SECOND", "STREAM_EXTRAS", "WEIGHTS", "Draw", "Operation", "RandomDraw",
    "Vocabulary", "build", "consumer_config", "direct_get_body", "generate", "kv_config", "publish_headers",
    "stream_config",
]  # fmt: skip

T = TypeVar("T")
Operation = dict[str, Any]

# ---------------------------------------------------------------------------- operations


def _optional_body(d: Draw, **choices: Sequence[Any]) -> dict[str, Any] | None:
    body: dict[str, Any] = {}
    for key, values in choices.items():
        value = d.choice(values)
        if value is not None:
            body[key] = value
    return body or None


def _publish(d: Draw, v: Vocabulary) -> list[Operation]:
    size = d.choice((0, 1, 10, 50))
    return [
        {
            "op": "publish",
            "subject": d.choice(v.publish_subjects),
            "payload": "x" * size,
            "headers": publish_headers(d, v),
        }
    ]


def _publish_many(d: Draw, v: Vocabulary) -> list[Operation]:
    subject = d.choice(v.publish_subjects)
    return [{"op": "publish", "subject": subject, "payload": str(i), "headers": None} for i in range(d.integer(2, 6))]


def _purge(d: Draw, v: Vocabulary) -> list[Operation]:
    body = _optional_body(d, filter=v.purge_filters, seq=(None,) + v.sequences, keep=(None, 0, 1, 2))
    return [{"op": "stream.purge", "stream": d.choice(v.streams), "body": body}]


def _msg_delete(d: Draw, v: Vocabulary) -> list[Operation]:
    body: dict[str, Any] = {"seq": d.choice(v.sequences)}
    if d.choice(BOOLEANS):
        body["no_erase"] = True
    return [{"op": "msg.delete", "stream": d.choice(v.streams), "body": body}]


def _msg_get(d: Draw, v: Vocabulary) -> list[Operation]:
    name = d.choice(v.streams)
    how = d.choice(("seq", "last_by_subj", "next_by_subj"))
    seq = d.choice(v.sequences)
    subject = d.choice(tuple(v.publish_subjects) + ("a.*", ">"))
    body: dict[str, Any] = {"seq": seq} if how == "seq" else {"last_by_subj": subject}
    if how == "next_by_subj":
        body = {"seq": seq, "next_by_subj": subject}
    return [{"op": "msg.get", "stream": name, "body": body}]


def _info(d: Draw, v: Vocabulary) -> list[Operation]:
    name = d.choice(v.streams)
    body: dict[str, Any] = {}
    subjects_filter = d.choice(v.info_filters)
    if subjects_filter:
        body["subjects_filter"] = subjects_filter
    if d.choice(BOOLEANS):
        body["deleted_details"] = True
    return [_api_level(d, v, {"op": "stream.info", "stream": name, "body": body or None})]


def _names_or_list(kind: str) -> Callable[[Draw, Vocabulary], list[Operation]]:
    def build(d: Draw, v: Vocabulary) -> list[Operation]:
        subject = d.choice(v.list_subjects)
        return [{"op": kind, "body": {"subject": subject} if subject else {}}]

    return build


def _consumer_create(d: Draw, v: Vocabulary) -> list[Operation]:
    stream = d.choice(v.streams)
    config = consumer_config(d, v)
    body: dict[str, Any] = {"stream_name": stream, "config": config}
    if v.extras and maybe(d, 6):
        body["action"] = d.choice(("create", "update"))
    return [{"op": "consumer.create", "stream": stream, "consumer": config["durable_name"], "body": body}]


def _api_level(d: Draw, v: Vocabulary, op: Operation) -> Operation:
    """Sometimes ask for an API level (campaigns): ``Nats-Required-Api-Level`` is checked before anything else."""
    if v.extras and maybe(d, 10):
        op["headers"] = {"Nats-Required-Api-Level": d.choice(("0", "5", "6", "x"))}
    return op


def _consumer_op(kind: str) -> Callable[[Draw, Vocabulary], list[Operation]]:
    def build(d: Draw, v: Vocabulary) -> list[Operation]:
        op: Operation = {"op": kind, "stream": d.choice(v.streams), "consumer": d.choice(v.consumers)}
        if kind == "consumer.unpin":
            op["body"] = d.choice(({"group": "g"}, {"group": "x"}, {}))
        return [_api_level(d, v, op)]

    return build


def _consumer_listing(kind: str) -> Callable[[Draw, Vocabulary], list[Operation]]:
    def build(d: Draw, v: Vocabulary) -> list[Operation]:
        return [{"op": kind, "stream": d.choice(v.streams), "body": d.choice((None, {}, {"offset": 1}))}]

    return build


def _fetch(d: Draw, v: Vocabulary) -> list[Operation]:
    op: Operation = {
        "op": "fetch",
        "stream": d.choice(v.streams),
        "consumer": d.choice(v.consumers),
        "batch": d.integer(1, 4),
    }
    if v.extras and maybe(d, 4):
        op["extra"] = d.choice(
            (
                {"max_bytes": 20},
                {"max_bytes": 1000},
                {"group": "g"},
                {"group": "g", "min_pending": 1},
                {"id": "x", "group": "g"},
            )
        )
    return [op]


def _ack(d: Draw, v: Vocabulary) -> list[Operation]:
    return [{"op": "ack", "index": d.integer(0, 3), "payload": d.choice(ACK_PAYLOADS)}]


def _direct_get(d: Draw, v: Vocabulary) -> list[Operation]:
    return [{"op": "direct.get", "stream": d.choice(v.streams), "body": direct_get_body(d, v)}]


def _direct_last(d: Draw, v: Vocabulary) -> list[Operation]:
    return [{"op": "direct.last", "stream": d.choice(v.streams), "subject": d.choice(v.publish_subjects)}]


def _consume(d: Draw, v: Vocabulary, stream: str | None = None, subjects: Sequence[str] = ()) -> list[Operation]:
    """A pull consumer's life in a few operations: create, publish, fetch, ack, fetch again, info.

    Operations drawn one by one rarely line up (a fetch on the consumer that
    exists, on a stream holding messages it matches, then an ack), so
    campaigns also draw this bundle, on the stream created last.
    """
    name = stream or d.choice(v.streams)
    config = consumer_config(d, v)
    config.pop("deliver_subject", None)
    consumer = config["durable_name"]
    ops: list[Operation] = [
        {"op": "consumer.create", "stream": name, "consumer": consumer, "body": {"stream_name": name, "config": config}}
    ]
    matching = [s for s in v.publish_subjects if any(subject_matches(p, s) for p in subjects)] or list(
        v.publish_subjects
    )
    for i in range(d.integer(0, 3)):
        ops.append({"op": "publish", "subject": d.choice(matching), "payload": f"m{i}", "headers": None})
    ops.append({"op": "fetch", "stream": name, "consumer": consumer, "batch": d.integer(1, 4)})
    for _ in range(d.integer(1, 3)):
        ops.append({"op": "ack", "index": d.integer(0, 2), "payload": d.choice(ACK_PAYLOADS)})
    if maybe(d, 2):
        ops.append({"op": "fetch", "stream": name, "consumer": consumer, "batch": d.integer(1, 4)})
    ops.append({"op": "consumer.info", "stream": name, "consumer": consumer})
    return ops


def _kv_publish(kind: str) -> Callable[[Draw, Vocabulary], list[Operation]]:
    """KV puts, deletes and purges: publishes to ``$KV.<bucket>.<key>`` with the headers nats.py uses."""

    def build(d: Draw, v: Vocabulary) -> list[Operation]:
        headers: dict[str, str] = {}
        payload = ""
        if kind == "kv.put":
            payload = d.choice(("v", "value-2", ""))
        elif kind == "kv.delete":
            headers["KV-Operation"] = "DEL"
        else:
            headers.update({"KV-Operation": "PURGE", "Nats-Rollup": "sub"})
        if maybe(d, 3):
            headers["Nats-Expected-Last-Subject-Sequence"] = d.choice(("0", "1", "2", "4"))
        if maybe(d, 5):
            headers["Nats-TTL"] = d.choice(("1h", "never"))
        subject = f"$KV.{KV_BUCKET}.{d.choice(KV_KEYS)}"
        return [{"op": kind, "subject": subject, "payload": payload, "headers": headers or None}]

    return build


def _atomic_batch(d: Draw, v: Vocabulary) -> list[Operation]:
    """A batch of 1-4 messages with ``Nats-Batch-*`` headers; sometimes broken (a gap, no commit, a bad commit)."""
    batch = d.choice(BATCH_IDS)
    count = d.integer(1, 4)
    broken = d.choice(BATCH_BREAKS)
    numbers = list(range(1, count + 1))
    if broken == "gap" and count > 1:
        numbers[-1] += 1
    elif broken == "start_at_2":
        numbers = [n + 1 for n in numbers]
    messages: list[dict[str, Any]] = []
    for number in numbers:
        headers = {"Nats-Batch-Id": batch, "Nats-Batch-Sequence": str(number)}
        if maybe(d, 6):
            headers.update(publish_headers(d, v) or {})
        messages.append({"subject": d.choice(v.publish_subjects), "payload": f"b{number}", "headers": headers})
    commit = {"none": "1", "gap": "1", "start_at_2": "1", "no_commit": None, "bad_commit": "x", "eob": "eob"}[broken]
    if commit is not None:
        messages[-1]["headers"]["Nats-Batch-Commit"] = commit
    return [{"op": "atomic_batch", "subject": messages[0]["subject"], "messages": messages}]


def _fast_batch(d: Draw, v: Vocabulary) -> list[Operation]:
    """A short fast-ingest batch: publishes with ``<inbox>.<id>.<flow>.<mode>.<seq>.<op>.$FI`` reply subjects.

    Operations: 0 start, 1 append, 2 commit, 3 commit without storing, 4 ping;
    sometimes a sequence is skipped, or the batch is left open.
    """
    count = d.integer(1, 4)
    messages = []
    for seq in range(1, count + 1):
        messages.append({"seq": seq, "op": 0 if seq == 1 else 1, "payload": f"f{seq}"})
    last = d.choice(("commit", "commit", "eob", "open", "ping", "gap"))
    if last == "commit":
        messages[-1]["op"] = 2
    elif last == "eob" and count > 1:
        messages[-1]["op"] = 3
    elif last == "ping":
        messages.append({"seq": count, "op": 4, "payload": ""})
    elif last == "gap":
        messages.append({"seq": count + 2, "op": 2, "payload": "g"})
    return [
        {
            "op": "fast_batch",
            "subject": d.choice(v.publish_subjects),
            "batch": d.choice(FAST_IDS),
            "flow": d.choice(FAST_FLOWS),
            "mode": d.choice(FAST_MODES),
            "messages": messages,
        }
    ]


def _schedule(d: Draw, v: Vocabulary) -> list[Operation]:
    """A message schedule that fires at once (``@at`` in the past), never, or is refused."""
    headers = {"Nats-Schedule": d.choice(SCHEDULES), "Nats-Schedule-Target": d.choice(v.publish_subjects)}
    if maybe(d, 8):
        headers.pop("Nats-Schedule-Target")
    for key, values in SCHEDULE_EXTRAS.items():
        if maybe(d, 6):
            headers[key] = d.choice(values)
    return [{"op": "schedule", "subject": d.choice(v.publish_subjects), "payload": "s", "headers": headers}]


BUILDERS: dict[str, Callable[[Draw, Vocabulary], list[Operation]]] = {
    "stream.create": lambda d, v: [_stream_op("stream.create", stream_config(d, v))],
    "stream.update": lambda d, v: [_stream_op("stream.update", stream_config(d, v))],
    "stream.delete": lambda d, v: [{"op": "stream.delete", "stream": d.choice(v.streams)}],
    "publish": _publish,
    "publish_many": _publish_many,
    "stream.purge": _purge,
    "msg.delete": _msg_delete,
    "msg.get": _msg_get,
    "stream.info": _info,
    "stream.names": _names_or_list("stream.names"),
    "stream.list": _names_or_list("stream.list"),
    "account.info": lambda d, v: [{"op": "account.info"}],
    "consumer.create": _consumer_create,
    "consumer.info": _consumer_op("consumer.info"),
    "consumer.delete": _consumer_op("consumer.delete"),
    "consumer.names": _consumer_listing("consumer.names"),
    "consumer.list": _consumer_listing("consumer.list"),
    "consumer.unpin": _consumer_op("consumer.unpin"),
    "consume": lambda d, v: _consume(d, v),
    "fetch": _fetch,
    "ack": _ack,
    "direct.get": _direct_get,
    "direct.last": _direct_last,
    "kv.create": lambda d, v: [_stream_op("kv.create", kv_config(d))],
    "kv.put": _kv_publish("kv.put"),
    "kv.delete": _kv_publish("kv.delete"),
    "kv.purge": _kv_publish("kv.purge"),
    "atomic_batch": _atomic_batch,
    "fast_batch": _fast_batch,
    "schedule": _schedule,
    "kv.get": lambda d, v: [{"op": "kv.get", "stream": KV_STREAM, "subject": f"$KV.{KV_BUCKET}.{d.choice(KV_KEYS)}"}],
    "priority_pulls": lambda d, v: families.priority_pulls(d, v),
    "kv_ttl": families.kv_ttl,
    "ttl.settle": lambda d, v: [{"op": "ttl.settle", "stream": KV_STREAM}],  # drawn within kv_ttl only
    "import_consume": lambda d, v: families.through_imports(d, _consume(d, v)),
    "traced_publish": families.traced_publish,
    "advisories": families.advisories,
    "reload": families.reload,
}


def _stream_op(kind: str, config: dict[str, Any]) -> Operation:
    return {"op": kind, "stream": config["name"], "body": config}


# How often each family is drawn in a campaign (relative weights).  Stream
# creation is frequent so later operations find something to act on.
WEIGHTS: dict[str, int] = {
    "stream.create": 9, "stream.update": 4, "stream.delete": 2,
    "publish": 16, "publish_many": 4,
    "stream.purge": 3, "msg.delete": 3, "msg.get": 5, "stream.info": 4,
    "stream.names": 1, "stream.list": 1, "account.info": 2,
    "consumer.create": 6, "consumer.info": 2, "consumer.delete": 1, "fetch": 7, "ack": 6,
    "consumer.names": 1, "consumer.list": 1, "consumer.unpin": 1, "consume": 4,
    "direct.get": 6, "direct.last": 2,
    "kv.create": 3, "kv.put": 6, "kv.delete": 2, "kv.purge": 1, "kv.get": 3,
    "atomic_batch": 4, "fast_batch": 3, "schedule": 3,
    "priority_pulls": 2, "kv_ttl": 1, "import_consume": 3, "traced_publish": 2, "advisories": 2, "reload": 1,
}  # fmt: skip

# Families only campaigns draw (the state machine sticks to the rest).
CAMPAIGN_KINDS = frozenset({"consumer.names", "consumer.list", "consumer.unpin", "consume"})
# Families only vocabularies with ``feeds`` draw (replies or state that come later).
FEED_KINDS = frozenset({"fast_batch", "schedule"})
# Families only vocabularies with ``wide`` draw (priorities, TTL expiry, imports, tracing, advisories, reloads).
WIDE_KINDS = frozenset({"priority_pulls", "kv_ttl", "import_consume", "traced_publish", "advisories", "reload"})
# Operations whose subject :func:`_aim_publish` may point at the latest stream's subjects.
AIMABLE = frozenset({"publish", "atomic_batch", "fast_batch", "schedule", "traced_publish"})


def build(kind: str, d: Draw, v: Vocabulary = BASE) -> list[Operation]:
    """The operations one draw of ``kind`` makes (``publish_many`` makes several)."""
    return BUILDERS[kind](d, v)


# Operations that name a stream (and maybe a consumer) which :func:`generate` may point at the latest ones.
FOCUSABLE = frozenset({
    "stream.info", "stream.purge", "msg.get", "msg.delete", "direct.get", "direct.last", "consumer.create",
    "consumer.info", "consumer.delete", "consumer.names", "consumer.list", "consumer.unpin", "fetch",
})  # fmt: skip


def _focus(d: Draw, op: Operation, stream: str | None, consumer: str | None) -> None:
    """Three times in four, aim ``op`` at the stream (and consumer) created last.

    Drawn independently, a fetch hits the one consumer that exists, on a
    stream with messages, too rarely for acks to be exercised at all.
    """
    if stream is not None and not maybe(d, 4):
        op["stream"] = stream
        if op["op"] == "consumer.create":
            op["body"]["stream_name"] = stream
    if consumer is not None and "consumer" in op and not maybe(d, 4):
        op["consumer"] = consumer
        if op["op"] == "consumer.create":
            op["body"]["config"]["durable_name"] = consumer


def _aim_publish(d: Draw, op: Operation, v: Vocabulary, subjects: list[str]) -> None:
    """Half the time, publish to a subject the stream created last listens on (if the vocabulary has one).

    An atomic batch's messages are aimed one by one; a schedule's target too.
    """
    matching = [s for s in v.publish_subjects if any(subject_matches(p, s) for p in subjects)]
    if not matching:
        return
    if maybe(d, 2):
        op["subject"] = d.choice(matching)
    for message in op.get("messages") or ():
        if "subject" in message and maybe(d, 2):
            message["subject"] = d.choice(matching)
    headers = op.get("headers") or {}
    if op["op"] == "schedule" and "Nats-Schedule-Target" in headers and maybe(d, 2):
        headers["Nats-Schedule-Target"] = d.choice(matching)


# The stream setting each of these operations needs to be taken.
NEEDS_FLAG = {"atomic_batch": "allow_atomic", "fast_batch": "allow_batched", "schedule": "allow_msg_schedules"}


def _aim_at_flag(d: Draw, op: Operation, v: Vocabulary, created: dict[str, dict[str, Any]]) -> None:
    """Three times in four, send a batch or schedule to a stream drawn with the setting it needs (if any was).

    Few streams have the setting, and aiming at the stream created last
    rarely finds one, so without this nearly every batch would be refused.
    """
    flag = NEEDS_FLAG.get(op["op"])
    patterns = [config.get("subjects") or [] for config in created.values() if flag and config.get(flag)]
    if not patterns or maybe(d, 4):
        return
    chosen = d.choice(patterns)
    matching = [s for s in v.publish_subjects if any(subject_matches(p, s) for p in chosen)]
    if matching:
        op["subject"] = d.choice(matching)
        for message in op.get("messages") or ():
            if "subject" in message and not maybe(d, 4):
                message["subject"] = d.choice(matching)


def _aim_feed(d: Draw, op: Operation, stream: str | None) -> None:
    """Three times in four, a mirror or first source names the stream created last (it has the messages)."""
    config = op["body"]
    origins = [config["mirror"]] if "mirror" in config else config.get("sources") or []
    if stream is not None and origins and stream != config["name"] and not maybe(d, 4):
        origins[0]["name"] = stream


# Families of several operations on the stream created last (a consumer, then its use).
BUNDLES = frozenset({"consume", "priority_pulls", "import_consume"})


def _bundle(
    kind: str, d: Draw, v: Vocabulary, stream: str | None, subjects: list[str], export: str | None
) -> list[Operation]:
    if kind == "priority_pulls":
        return families.priority_pulls(d, v, stream, subjects)
    ops = _consume(d, v, stream, subjects)
    return families.through_imports(d, ops, export) if kind == "import_consume" else ops


def generate(seed: int, count: int, v: Vocabulary = CAMPAIGN, weights: dict[str, int] | None = None) -> list[Operation]:
    """The ``count`` operations seed ``seed`` stands for.

    The first operation creates a stream (a plain one or the KV bucket), so
    the rest rarely runs against nothing; later operations on streams and
    consumers lean towards the ones created last (:func:`_focus`), and
    publishes towards that stream's subjects (:func:`_aim_publish`).
    """
    d = RandomDraw(seed)
    weights = dict(weights or WEIGHTS)
    if not v.direct:
        weights = {k: w for k, w in weights.items() if not k.startswith("direct.")}
    if not v.kv:
        weights = {k: w for k, w in weights.items() if not k.startswith("kv.")}
    if not v.extras:
        weights = {k: w for k, w in weights.items() if k not in CAMPAIGN_KINDS}
    if not v.feeds:
        weights = {k: w for k, w in weights.items() if k not in FEED_KINDS}
    if not v.wide:
        weights = {k: w for k, w in weights.items() if k not in WIDE_KINDS}
    kinds = sorted(weights)
    cumulative = []
    total = 0
    for kind in kinds:
        total += weights[kind]
        cumulative.append(total)
    first = "kv.create" if v.kv and maybe(d, 4) else "stream.create"
    ops = build(first, d, v)
    stream: str | None = ops[0]["stream"]
    subjects: list[str] = list(ops[0]["body"].get("subjects") or ())
    consumer: str | None = None
    created: dict[str, dict[str, Any]] = {ops[0]["stream"]: ops[0]["body"]}  # the first config drawn for each name
    export: str | None = None  # one export of $JS.API.> per sequence (its response type)
    while len(ops) < count:
        pick = d.integer(1, total)
        kind = next(k for k, edge in zip(kinds, cumulative) if pick <= edge)
        if kind in BUNDLES:
            bundle = _bundle(kind, d, v, stream, subjects, export)
            export = bundle[0].get("export", export)
            consumer = bundle[0]["consumer"]
            ops.extend(bundle)
            continue
        for op in build(kind, d, v):
            if op["op"] in FOCUSABLE:
                _focus(d, op, stream, consumer)
            elif op["op"] in AIMABLE:
                _aim_publish(d, op, v, subjects)
                _aim_at_flag(d, op, v, created)
            if op["op"] in ("stream.create", "stream.update"):
                _aim_feed(d, op, stream)
            if op["op"] in ("stream.create", "kv.create"):
                created.setdefault(op["stream"], op["body"])
                stream = op["stream"]
                subjects = list(op["body"].get("subjects") or ()) or subjects
            elif op["op"] == "consumer.create":
                consumer = op["consumer"]
            ops.append(op)
    return ops[:count]
