"""A view inside a running server, for assertions and debugging.

Tests read server state directly instead of inferring it from replies:
streams and their messages, each consumer's delivery position, pending acks
with their delivery counts, waiting pulls and pinned ids, connected clients
and their subscriptions, installed faults.  :func:`server_state` returns
all of it as plain JSON-ready data (the same document the control API's
``state`` operation serves), and :class:`Transcript` keeps one
connection's protocol bytes in both directions when the server runs with
``transcripts=True``.
"""

from __future__ import annotations

import base64
from typing import Any

from fakejs.core.clock import Clock
from fakejs.gocompat import gotime
from fakejs.testkit.clock import ManualClock
from fakejs.testkit.host import ServerActions
from fakejs.testkit.transcript import Transcript

__all__ = ["Transcript", "clock_state", "consumer_state", "server_state", "stream_messages"]


def clock_state(clock: Clock) -> dict[str, Any]:
    """The clock's kind and time (with a manual clock, its next deadline and autojump threshold)."""
    manual = isinstance(clock, ManualClock)
    doc: dict[str, Any] = {"manual": manual, "now": clock.monotonic(), "time_ns": clock.time_ns()}
    if isinstance(clock, ManualClock):
        doc["next_deadline"] = clock.next_deadline()
        doc["autojump"] = clock.autojump_threshold
    return doc


def consumer_state(consumer: Any) -> dict[str, Any]:
    """Where a consumer stands, beyond what CONSUMER.INFO tells a client."""
    now = consumer.clock.monotonic()
    doc: dict[str, Any] = {
        "name": consumer.name,
        "stream": consumer.stream.name,
        "push": consumer.is_push,
        "active": consumer.active,
        "paused": consumer.is_paused(),
        "next_stream_seq": consumer.next_stream_sequence,
        "next_consumer_seq": consumer.next_consumer_sequence,
        "ack_floor": {"stream_seq": consumer.ack_floor_stream, "consumer_seq": consumer.ack_floor_consumer},
        "num_pending": max(consumer.num_pending, 0),
        "pending_acks": [
            {
                "stream_seq": seq,
                "consumer_seq": entry[0],
                "deliveries": consumer.delivery_count(seq),
                "delivered": gotime.rfc3339(entry[1]),
            }
            for seq, entry in sorted(consumer.pending.items())
        ],
        "redeliveries_queued": list(consumer.redelivery_queue),
        "waiting": [
            {
                "reply": request.reply,
                "batch_left": request.batch_left,
                "bytes_left": request.bytes_left,
                "expires_in": None if request.expires is None else round(request.expires - now, 6),
                "no_wait": request.no_wait,
                "group": (request.group or {}).get("group", ""),
            }
            for request in consumer.waiting
        ],
    }
    if consumer.priority is not None:
        doc["pinned_id"] = consumer.priority.pin_id
    if consumer.is_push:
        doc["flow_control"] = {
            "pending_bytes": consumer.flow_pending_bytes,
            "window": consumer.flow_window,
            "stalled_on": consumer.flow_request_reply,
        }
    return doc


def stream_messages(stream: Any, limit: int | None = None) -> list[dict[str, Any]]:
    """Stored messages, oldest first (payloads and headers base64, as STREAM.MSG.GET gives them)."""
    out = []
    for msg in stream.store:
        entry: dict[str, Any] = {"seq": msg.seq, "subject": msg.subject, "time": gotime.rfc3339(msg.ts)}
        if msg.hdr:
            entry["hdrs"] = base64.b64encode(msg.hdr).decode()
        entry["data"] = base64.b64encode(msg.data).decode()
        out.append(entry)
        if limit is not None and len(out) >= limit:
            break
    return out


def server_state(server: ServerActions, messages: int = 100) -> dict[str, Any]:
    """Everything at once: clients, subscriptions, streams (with up to ``messages`` each), consumers, leaf links, faults."""
    broker = server.broker
    clients = []
    for session in broker.clients.values():
        clients.append(
            {
                "cid": session.cid,
                "name": session.name,
                "subscriptions": sorted(
                    sub.subject + (" " + sub.queue if sub.queue else "") for sub in session.subs.values()
                ),
            }
        )
    streams = []
    js = server.jetstream
    if js is not None:
        for stream in js.streams.values():
            streams.append(
                {
                    "name": stream.name,
                    "state": stream.state(),
                    "messages": stream_messages(stream, messages),
                    "consumers": [consumer_state(c) for c in stream.consumers.values()],
                }
            )
    return {
        "server_name": broker.name,
        "clock": clock_state(server.clock),
        "clients": sorted(clients, key=lambda c: c["cid"]),
        "streams": streams,
        "leafs": leaf_links(server),
        "faults": [f.describe() for f in server.faults.installed()],
    }


def leaf_links(server: ServerActions) -> list[dict[str, Any]]:
    """The leaf connections up: each one's id, the server at the other end, this server's side, the account bound."""
    leafs = server.broker.leafs
    if leafs is None:
        return []
    return [
        {"lid": link.lid, "remote": link.remote_name, "side": link.side, "account": link.account}
        for link in leafs.links
        if link.up
    ]
