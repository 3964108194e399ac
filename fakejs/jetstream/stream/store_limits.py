"""A stream's size limits as nats-server's stores apply them.

Discard-new limits refuse a message before it is stored (:func:`refusal`
names why, in the store's words); discard-old limits and
``max_msgs_per_subject`` remove the oldest messages after.  Removal goes
through the stream's own ``remove`` so that its consumers hear of it.
"""

from __future__ import annotations

from collections.abc import Callable

from fakejs.jetstream.config.stream import StreamConfig
from fakejs.jetstream.errors import api_error
from fakejs.jetstream.storage.store import MessageStore

Remove = Callable[[int], object]


def refusal(
    cfg: StreamConfig,
    store: MessageStore,
    subject: str,
    hdr: bytes | None,
    payload: bytes,
    at_subject_limit: bool,
    rollup: bool,
) -> str:
    """Discard-new: why a new message may not be stored (empty when it may)."""
    if at_subject_limit and cfg["discard_new_per_subject"] and not rollup:
        return "maximum messages per subject exceeded"
    if cfg["max_msgs"] > 0 and store.msgs >= cfg["max_msgs"] and not at_subject_limit:
        return "maximum messages exceeded"
    if cfg["max_bytes"] <= 0:
        return ""
    size = store.message_size(subject, hdr, payload)
    if store.bytes + size > cfg["max_bytes"]:
        if not at_subject_limit:
            return "maximum bytes exceeded"
        # At the subject limit the subject's oldest message goes: it must make room.
        oldest = store.next_message(0, subject)
        if oldest is None or store.size_of(oldest) < size:
            return "maximum bytes exceeded"
    return ""


def may_refuse_new(cfg: StreamConfig) -> bool:
    """Whether a discard-new config has a limit that can refuse a message without a roll-up: a count, a size,
    or a subject's count with ``discard_new_per_subject``."""
    return (
        cfg["max_msgs"] > 0
        or cfg["max_bytes"] > 0
        or (cfg["max_msgs_per_subject"] > 0 and cfg["discard_new_per_subject"])
    )


def refuse_new(
    cfg: StreamConfig, store: MessageStore, subject: str, hdr: bytes | None, payload: bytes, rollup: bool
) -> None:
    """Discard-new limits: raise the store's refusal (the PubAck's error) when the message may not be stored."""
    if cfg["discard"] != "new" or not may_refuse_new(cfg):
        return  # nothing refusal() looks at can refuse it
    max_per = cfg["max_msgs_per_subject"]
    at_subject_limit = max_per > 0 and store.count_for(subject) >= max_per
    why = refusal(cfg, store, subject, hdr, payload, at_subject_limit, rollup)
    if why:
        raise api_error("JSStreamStoreFailedF", err=why).traced_as(why, late=True)


def trim_subject(store: MessageStore, subject: str, max_per: int, remove: Remove) -> None:
    """Keep at most ``max_per`` messages on ``subject``, the newest."""
    for seq in store.index.oldest(subject, max_per):
        remove(seq)


def trim_subjects(cfg: StreamConfig, store: MessageStore, remove: Remove) -> None:
    """``max_msgs_per_subject`` over every subject (after a config update)."""
    max_per = cfg["max_msgs_per_subject"]
    if max_per <= 0:
        return
    for subject in list(store.subjects()):
        trim_subject(store, subject, max_per, remove)


def discard_old(cfg: StreamConfig, store: MessageStore, remove: Remove) -> None:
    """Discard-old limits on count and bytes: the oldest messages go."""
    if cfg["discard"] != "old":
        return
    while cfg["max_msgs"] > 0 and store.msgs > cfg["max_msgs"]:
        first = store.first()
        if first is None:
            break
        remove(first.seq)
    while cfg["max_bytes"] > 0 and store.bytes > cfg["max_bytes"]:
        first = store.first()
        if first is None:
            break
        remove(first.seq)
