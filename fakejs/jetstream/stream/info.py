"""What STREAM.INFO, STREAM.MSG.GET and MSG.DELETE say about a stream: ``StreamState``, ``StreamInfo``, one message.

Pure renderings of a stream's config, store and host; the stream calls
them (:meth:`~fakejs.jetstream.stream.stream.Stream.info`) so that the
API handlers never assemble the reply themselves.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fakejs.gocompat import gotime
from fakejs.jetstream.config import stream as streamconfig
from fakejs.jetstream.config.stream import StreamConfig
from fakejs.jetstream.errors import ApiError, api_error
from fakejs.jetstream.storage.message import StoredMessage
from fakejs.jetstream.storage.store import MessageStore

MAX_SUBJECT_DETAILS = 100_000  # subjects one STREAM.INFO reply lists


def subjects_page(store: MessageStore, subjects_filter: str, offset: int) -> tuple[int, dict[str, int]]:
    """Subjects matching the filter: how many, and the page of them (with counts) from ``offset``."""
    counts = store.subject_counts(subjects_filter)
    if offset == 0 and len(counts) <= MAX_SUBJECT_DETAILS:
        return len(counts), counts
    names = sorted(counts)[offset : offset + MAX_SUBJECT_DETAILS]
    return len(counts), {name: counts[name] for name in names}


def state(
    store: MessageStore, consumer_count: int, deleted_details: bool, subjects: Mapping[str, int] | None
) -> dict[str, Any]:
    """``StreamState`` (``subjects``: a page of per-subject counts)."""
    out: dict[str, Any] = {
        "messages": store.msgs,
        "bytes": store.bytes,
        "first_seq": store.first_seq,
        "first_ts": gotime.rfc3339(store.first_ts),
        "last_seq": store.last_seq,
        "last_ts": gotime.rfc3339(store.last_ts),
    }
    if store.num_subjects:
        out["num_subjects"] = store.num_subjects
    if subjects:
        out["subjects"] = dict(subjects)
    num_deleted = store.num_deleted
    if num_deleted:
        out["num_deleted"] = num_deleted
        if deleted_details:
            out["deleted"] = store.deleted()
    elif deleted_details and store.storage == "file" and store.first_seq == 0 and store.last_seq == 0:
        # nats-server's file store counts the never-used sequence 0 of a
        # fresh stream as deleted when asked for details.
        out["num_deleted"], out["deleted"] = 1, [0]
    out["consumer_count"] = consumer_count
    return out


def stream_info(
    config: StreamConfig,
    created_ns: int,
    state: dict[str, Any],
    *,
    now_ns: int,
    dynamic_metadata: bool,
    domain: str = "",
    cluster: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """``StreamInfo``: config, creation time, state, domain, cluster and the time of the answer."""
    out: dict[str, Any] = {
        "config": streamconfig.to_json(config, dynamic_metadata),
        "created": gotime.rfc3339(created_ns),
        "state": state,
    }
    if domain:
        out["domain"] = domain
    if cluster is not None:
        out["cluster"] = cluster
    out["ts"] = gotime.rfc3339(now_ns)
    return out


def alternates(streams: Iterable[tuple[str, str, str]], stream: str, domain: str) -> list[dict[str, str]] | None:
    """``streamAlternates``: ``stream`` and its mirrors, from (name, origin mirrored, cluster) of every stream
    of the account, with the domain when there is one; none when it has no mirror.  nats-server lists them
    in no set order; here in the order given."""
    found = []
    for name, mirrored, cluster in streams:
        if name == stream or mirrored == stream:
            alternate = {"name": name}
            if domain:
                alternate["domain"] = domain
            alternate["cluster"] = cluster
            found.append(alternate)
    return found if len(found) > 1 else None


def with_alternates(info: dict[str, Any], found: list[dict[str, str]] | None) -> dict[str, Any]:
    """STREAM.INFO with ``alternates`` after the mirror or sources, before ``ts``, as nats-server writes it."""
    if found:
        info["alternates"] = found
        info["ts"] = info.pop("ts")
    return info


def find_message(
    store: MessageStore, seq: int, last_by_subject: str, next_by_subject: str, start_ns: int | None
) -> StoredMessage:
    """``STREAM.MSG.GET``: by sequence, first after a time, next or last on a subject."""
    if start_ns is not None:
        seq = store.seq_from_time(start_ns)
    if seq > 0 and not next_by_subject:
        msg = store.get(seq)
    elif next_by_subject:
        msg = store.next_message(seq, next_by_subject)
    else:
        msg = store.last_message(last_by_subject)
    if msg is None:
        raise api_error("JSNoMessageFoundErr")
    return msg


def missing_message(store: MessageStore, seq: int) -> ApiError:
    """Why ``STREAM.MSG.DELETE`` found no message at ``seq`` (the file store names the reason)."""
    if store.storage == "file":
        if seq == 0 or seq < store.first_seq:
            return api_error("JSStreamMsgDeleteFailedF", err="no message found")
        if seq > store.last_seq:
            return api_error("JSStreamMsgDeleteFailedF", err="stream store EOF")
    return api_error("JSSequenceNotFoundErrF", seq=seq)
