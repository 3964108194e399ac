"""A mirror: the origin's messages under the origin's sequences and timestamps.

nats-server's ``setupMirrorConsumer`` and ``processInboundMirrorMsg``: the
consumer starts after the mirror's last sequence (or at the configured
start on an empty mirror); a hole in the origin's sequences (deleted or
expired messages) becomes a hole in the mirror when the delivery sequence
shows nothing was missed, anything else recreates the consumer.  Once it
has nearly caught up, a mirror with ``mirror_direct`` also answers Direct
Get requests for its origin.
"""

from __future__ import annotations

from typing import Any

from fakejs.gocompat import ids
from fakejs.jetstream.stream import feed as feeds
from fakejs.jetstream.stream import feed_info
from fakejs.jetstream.stream import feed_requests as requests
from fakejs.jetstream.stream.direct import DirectGet
from fakejs.jetstream.stream.feed import Delivery, Durable, FedStream, Feed

DIRECT_CAUGHT_UP = 10  # pending below this lets a mirror answer Direct Get (dgetCaughtUpThresh)


def stable_ident(target: FedStream) -> str:
    """What ``createStableConsumerHash`` hashes: the target's name, account and domain."""
    js = target.js
    ident = f"{target.name} {js.account_name}"
    return f"{ident} {js.domain}" if js.domain else ident


def durable_of(spec: dict[str, Any], mirror: bool) -> Durable | None:
    """The durable sourcing consumer a mirror or source names, if any."""
    consumer = spec.get("consumer")
    if consumer is None:
        return None
    error = "JSMirrorConsumerRequiresAckFCErr" if mirror else "JSSourceConsumerRequiresAckFCErr"
    return Durable(consumer.get("name", ""), consumer.get("deliver_subject", ""), error)


class Mirror:
    """The mirror of one stream (``config.mirror``)."""

    def __init__(self, target: FedStream) -> None:
        self.target = target
        spec = target.config["mirror"]
        assert spec is not None
        self.spec: dict[str, Any] = spec
        external = spec.get("external") or {}
        deliver = f"{external['deliver']}.M" if external.get("deliver") else "$JS.M"
        self.feed = Feed(
            target.js, self, deliver, external.get("api", ""), durable_of(spec, mirror=True), target.internal_client
        )
        self.transforms = feeds.transforms_of(spec, target.js.rng)
        self.direct: DirectGet | None = None

    def start(self) -> None:
        self.feed.start(delay=False)

    def close(self, removed: bool = False) -> None:
        """Stop mirroring; ``removed`` (promoted or deleted): the origin's consumer is asked to go."""
        self.feed.close(self.spec["name"], self.consumer_name() if removed else "")
        if self.direct is not None:
            self.direct.close()
            self.direct = None

    def consumer_name(self) -> str:
        """``JS_MIRROR_<createStableConsumerHash>``, as asked for (a limits origin adds a suffix)."""
        return "JS_MIRROR_" + ids.get_hash(stable_ident(self.target))

    def info(self) -> dict[str, Any]:
        return feed_info.source_info(self.feed, self.spec, with_seq=False)

    # -- the feed's owner ---------------------------------------------------------------------

    def request(self, first: bool) -> tuple[str, dict[str, Any] | None, list[tuple[str, str]]]:
        target, spec = self.target, self.spec
        if self.feed.durable is not None:
            return requests.reset_subject(spec["name"], self.feed.durable.name), None, []
        store = target.store
        js = target.js
        metadata = {"_nats.mirror.acc": js.account_name, "_nats.mirror.stream": target.name}
        if js.domain:
            metadata["_nats.mirror.domain"] = js.domain
        config = requests.consumer_config(self.consumer_name(), dict(sorted(metadata.items())))
        last_seq = target.mirrored_last_seq
        start_seq, start_time = last_seq + 1, None
        if last_seq == 0 and store.msgs == 0 and store.first_seq == 0:
            start_seq = spec.get("opt_start_seq") or 0
            if not start_seq and spec.get("opt_start_time") is not None:
                start_time = spec["opt_start_time"].text()  # a GoTime, sent as written
        if start_time is not None:
            config = requests.with_start(config, "by_start_time", time=start_time)
        elif start_seq:
            config = requests.with_start(config, "by_start_sequence", seq=start_seq)
        filters = [src for src, _ in self.transforms]
        filter_subject = spec.get("filter_subject") or ""
        if not filter_subject and len(filters) == 1:
            filter_subject, filters = filters[0], []
        config = requests.with_filters(config, filter_subject, filters)
        body = {"stream_name": spec["name"], "config": config, "action": ""}
        return requests.create_subject(spec["name"], config), body, [(feeds.REQUIRED_LEVEL, "4")]

    def refused(self, error: dict[str, Any]) -> bool:
        return False

    def created(self, info: dict[str, Any], identity: str) -> bool:
        target = self.target
        delivered = int(info.get("delivered", {}).get("stream_seq", 0))
        if target.mirrored_last_seq < delivered:
            target.skip_mirrored(delivered + 1)
        self.feed.stream_seq = max(delivered, target.mirrored_last_seq)
        return True

    def message(self, subject: str, hdr: bytes | None, payload: bytes, delivery: Delivery) -> bool:
        feed = self.feed
        if delivery.stream_seq != feed.stream_seq + 1:
            if delivery.consumer_seq != feed.consumer_seq + 1:
                feed.retry()
                return False
            self.target.skip_mirrored(delivery.stream_seq)  # the origin's hole, kept as one
        feed.advance(delivery)
        if self.target.config["mirror_direct"] and self.direct is None and delivery.pending < DIRECT_CAUGHT_UP:
            self.direct = DirectGet(self.target.name, self.target.store, self.target.js, self.spec["name"])
            self.direct.sync(True)
        subject = feeds.transformed(subject, self.transforms)
        hdr = feeds.strip_headers(hdr)
        if not self.target.store_mirrored(subject, hdr, payload, delivery.stream_seq, delivery.ts):
            feed.stream_seq = self.target.mirrored_last_seq
            feed.retry()
            return False
        return True
