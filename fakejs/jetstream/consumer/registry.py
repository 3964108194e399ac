"""A stream's consumers seen as the :class:`~fakejs.jetstream.consumer.consumer.Consumer` objects they are.

A stream holds its consumers as
:class:`~fakejs.jetstream.stream.consumer_view.StreamConsumer` (the stream
package may not import this one); the JetStream service puts only
:class:`~fakejs.jetstream.consumer.consumer.Consumer` objects there, so the
service and monitoring read them back through :func:`consumers_of`.  Cheap to
import: the consumer itself is named for the type checker only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from fakejs.jetstream.consumer.consumer import Consumer
    from fakejs.jetstream.stream.stream import Stream


def consumers_of(stream: Stream) -> dict[str, Consumer]:
    """The consumers of ``stream``, by name (the stream's own table, not a copy)."""
    return cast("dict[str, Consumer]", stream.consumers)
