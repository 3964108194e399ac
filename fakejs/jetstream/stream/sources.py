"""A stream's sources: messages from other streams, stored as if published.

nats-server's ``trySetupSourceConsumer`` and ``processInboundSourceMsg``:
one consumer per configured source, set up after 100-200 ms and retried on
the server clock; each message keeps its subject (or the source's subject
transform of it), loses its ``Nats-Expected-*`` and ``Nats-Batch-*`` headers
and gains ``Nats-Stream-Source: <stream> <seq> <filter> <dest> <subject> <identity>``,
then goes through the target's own publish rules (duplicate window,
limits), skipping the checks the origin already made.
"""

from __future__ import annotations

from typing import Any

from fakejs.gocompat import gotime, ids
from fakejs.jetstream.errors import ApiError
from fakejs.jetstream.stream import feed as feeds
from fakejs.jetstream.stream import feed_info
from fakejs.jetstream.stream import feed_requests as requests
from fakejs.jetstream.stream.feed import Delivery, FedStream, Feed
from fakejs.jetstream.stream.mirror import durable_of, stable_ident
from fakejs.protocol import headers as hdrs

STREAM_SOURCE = "Nats-Stream-Source"
IDENTITY_MISMATCH = 10225  # JSConsumerStreamIdentityMismatchF: the origin was recreated


def index_name(spec: dict[str, Any]) -> str:
    """``composeIName``: ``<name>[:<api hash>][:C=<consumer hash>] <filters> <destinations>`` (``>`` when empty)."""
    name = spec["name"]
    external = spec.get("external") or {}
    if external:
        name += ":" + ids.get_hash(external.get("api", ""))
    if spec.get("consumer") is not None:
        name += ":C=" + ids.get_hash(spec["consumer"].get("name", ""))
    transforms = spec.get("subject_transforms") or []
    if not transforms:
        return f"{name} {spec.get('filter_subject') or '>'} >"
    sources = "\f".join(t.get("src") or ">" for t in transforms)
    destinations = "\f".join(t.get("dest") or ">" for t in transforms)
    return f"{name} {sources} {destinations}"


class Source:
    """One configured source and its consumer."""

    def __init__(self, target: FedStream, spec: dict[str, Any]) -> None:
        self.target = target
        self.spec = spec
        self.iname = index_name(spec)
        self.identity = ""  # the origin's identity, from the consumer create answer
        self.recreated = False
        external = spec.get("external") or {}
        deliver = f"{external['deliver']}.S" if external.get("deliver") else "$JS.S"
        self.feed = Feed(
            target.js, self, deliver, external.get("api", ""), durable_of(spec, mirror=False), target.internal_client
        )
        self.transforms = feeds.transforms_of(spec, target.js.rng)

    def consumer_name(self) -> str:
        """``createSourcingConsumerHash``: a hash of the stable consumer hash (the index name joins in when the
        origin is sourced twice), so hashed twice."""
        target = self.target
        ident = ids.get_hash(stable_ident(target))
        same = [s for s in target.config["sources"] or [] if s["name"] == self.spec["name"]]
        if len(same) > 1:
            ident += f" {self.iname}"
        return "JS_SRC_" + ids.get_hash(ident)

    def info(self) -> dict[str, Any]:
        return feed_info.source_info(self.feed, self.spec, with_seq=True)

    def close(self, removed: bool = False) -> None:
        self.feed.close(self.spec["name"], self.consumer_name() if removed else "")

    # -- the feed's owner ---------------------------------------------------------------------

    def request(self, first: bool) -> tuple[str, dict[str, Any] | None, list[tuple[str, str]]]:
        target, spec = self.target, self.spec
        headers = [(feeds.REQUIRED_LEVEL, "5"), (feeds.STREAM_IDENTITY, self.identity)]
        if self.feed.durable is not None:
            return requests.reset_subject(spec["name"], self.feed.durable.name), None, headers
        js = target.js
        metadata = {"_nats.src.acc": js.account_name, "_nats.src.stream": target.name}
        if js.domain:
            metadata["_nats.src.domain"] = js.domain
        config = requests.consumer_config(self.consumer_name(), dict(sorted(metadata.items())))
        config = self._start(config, self.feed.stream_seq + 1)
        filters = [t.get("src", "") for t in spec.get("subject_transforms") or []]
        filter_subject = spec.get("filter_subject") or ""
        if not filter_subject and len(filters) == 1:
            filter_subject, filters = filters[0], []
        config = requests.with_filters(config, filter_subject, filters)
        body = {"stream_name": spec["name"], "config": config, "action": ""}
        return requests.create_subject(spec["name"], config), body, headers

    def _start(self, config: dict[str, Any], seq: int) -> dict[str, Any]:
        """Where the consumer starts: the next sequence, else the configured start, else after the target's last."""
        spec, store = self.spec, self.target.store
        if seq > 1:
            return requests.with_start(config, "by_start_sequence", seq=seq)
        if spec.get("opt_start_seq"):
            return requests.with_start(config, "by_start_sequence", seq=spec["opt_start_seq"])
        last_time = gotime.rfc3339(store.last_ts) if store.last_ts else None
        start = spec.get("opt_start_time")  # a GoTime
        if start is not None:
            if last_time is not None and start.ns < store.last_ts:
                return requests.with_start(config, "by_start_time", time=last_time)
            return requests.with_start(config, "by_start_time", time=start.text())
        if store.first_seq > 1 and last_time is not None and not self.recreated:
            return requests.with_start(config, "by_start_time", time=last_time)
        return config

    def refused(self, error: dict[str, Any]) -> bool:
        """The origin was recreated: start it over from its beginning, without a failure counted."""
        if error.get("err_code") != IDENTITY_MISMATCH:
            return False
        self.feed.stream_seq = self.feed.consumer_seq = self.feed.stored_seq = 0
        self.identity, self.recreated = "", True
        return True

    def created(self, info: dict[str, Any], identity: str) -> bool:
        feed = self.feed
        if self.recreated or (identity and self.identity and identity != self.identity):
            feed.stream_seq = 0
        self.identity, self.recreated = identity, False
        delivered = int(info.get("delivered", {}).get("stream_seq", 0))
        feed.stream_seq = max(feed.stream_seq, delivered)
        return True

    def message(self, subject: str, hdr: bytes | None, payload: bytes, delivery: Delivery) -> bool:
        feed = self.feed
        if delivery.consumer_seq != feed.consumer_seq + 1:
            if delivery.consumer_seq > feed.consumer_seq:
                feed.retry()
            return False
        before = (feed.stream_seq, feed.consumer_seq)
        feed.advance(delivery)
        hdr = feeds.strip_headers(hdr, STREAM_SOURCE)
        hdr = hdrs.add(hdr, STREAM_SOURCE, self._header(subject, delivery))
        try:
            stored = self.target.store_sourced(feeds.transformed(subject, self.transforms), hdr, payload)
        except ApiError:
            feed.stream_seq, feed.consumer_seq = before
            feed.retry()
            return False
        if stored:
            feed.stored_seq = delivery.stream_seq
        return True

    def _header(self, subject: str, delivery: Delivery) -> str:
        """``genSourceHeader``: the origin, its sequence, the index name's filters, the subject, the identity."""
        parts = self.iname.split(" ")
        text = f"{parts[0]} {delivery.stream_seq} {parts[1]} {parts[2]} {subject}"
        return f"{text} {self.identity}" if self.identity else text


def _origin_of(header: bytes) -> tuple[str, str, int, str]:
    """``streamAndSeq``: the origin's name, the index name, its sequence and identity ("" where unknown)."""
    fields = header.decode(errors="replace").split(" ")
    if len(fields) < 2 or len(fields) == 3:
        return "", "", 0, ""
    seq = int(fields[1]) if fields[1].isdigit() else 0
    if len(fields) == 2:
        return fields[0], "", seq, ""  # an older header: any source of that stream
    identity = fields[5] if len(fields) >= 6 else ""
    return fields[0], f"{fields[0]} {fields[2]} {fields[3]}", seq, identity


def resume_points(target: FedStream, sources: list[Source]) -> None:
    """``startingSequenceForSources``: each source resumes after the last origin sequence stored.

    The target's messages are read back from the last one until every
    source has been found in a ``Nats-Stream-Source`` header (a restart, or a
    source added again by an update, takes nothing twice); one never found
    starts as configured.
    """
    store = target.store
    wanted = {source.iname: source for source in sources}
    seq = store.last_seq
    while wanted and seq >= max(store.first_seq, 1):
        msg = store.get(seq)
        seq -= 1
        header = hdrs.get(msg.hdr, STREAM_SOURCE) if msg is not None and msg.hdr else None
        if not header:
            continue
        name, iname, origin_seq, identity = _origin_of(header)
        found = [wanted[iname]] if iname in wanted else []
        if not iname:
            found = [s for s in wanted.values() if name in (s.spec["name"], s.iname.split(" ")[0])]
        for source in found:
            del wanted[source.iname]
            if origin_seq:
                source.feed.stream_seq, source.feed.consumer_seq = origin_seq, 0
                source.feed.stored_seq = origin_seq
                source.identity = identity


class Sources:
    """All the sources of a stream, by index name, kept across config updates."""

    def __init__(self, target: FedStream) -> None:
        self.target = target
        self.by_name: dict[str, Source] = {}

    def sync(self) -> None:
        """Follow the config: new sources start, removed ones stop, kept ones keep their place."""
        wanted = {index_name(spec): spec for spec in self.target.config["sources"] or []}
        for iname in list(self.by_name):
            if iname not in wanted:
                self.by_name.pop(iname).close(removed=True)
        added: list[Source] = []
        for iname, spec in wanted.items():
            source = self.by_name.get(iname)
            if source is None:
                source = self.by_name[iname] = Source(self.target, spec)
                added.append(source)
            source.spec = spec
        if added:
            resume_points(self.target, added)
        for source in added:
            source.feed.start(delay=True)
        order = list(wanted)
        self.by_name = {iname: self.by_name[iname] for iname in order}

    def close(self, removed: bool = False) -> None:
        """Stop every source; ``removed`` (dropped by an update, or the stream deleted): their consumers go too."""
        for source in self.by_name.values():
            source.close(removed)
        self.by_name = {}

    def info(self) -> list[dict[str, Any]]:
        return [source.info() for source in self.by_name.values()]
