"""A consumer as its stream sees it (the stream imports no consumer)."""

from __future__ import annotations

from typing import Protocol

from fakejs.jetstream.config.consumer import ConsumerConfig
from fakejs.jetstream.storage.store import StoredMessage


class StreamConsumer(Protocol):
    """A consumer as its stream sees it: told about stored, removed and purged messages."""

    @property
    def name(self) -> str: ...

    @property
    def config(self) -> ConsumerConfig: ...

    @property
    def created_ns(self) -> int: ...

    def signaled(self, subject: str) -> bool:
        """Whether the consumer is signalled for messages on ``subject`` (interest retention)."""
        ...

    def message_stored(self, msg: StoredMessage) -> None: ...

    def message_removed(self, seq: int, subject: str = "") -> None: ...

    def purged(self, start: int, last_seq: int, wider: bool) -> None: ...

    def is_equal_or_subset_match(self, subject: str) -> bool: ...

    def is_filtered_match(self, subject: str) -> bool: ...

    def delete(self, cause: str = "api") -> None:
        """Stop for good (``cause``, for the timeline: ``api``, ``control``, ``inactive``, ``stream_delete``)."""
        ...
