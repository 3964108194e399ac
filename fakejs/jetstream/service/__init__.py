"""An account's JetStream: the level that orchestrates streams and consumers.

:class:`~fakejs.jetstream.service.jetstream.JetStream` holds the account's
streams, creates, updates and deletes them, and keeps its usage;
:mod:`~fakejs.jetstream.service.consumers` holds the rules for creating,
updating and removing consumers and the retention their acks drive;
:mod:`~fakejs.jetstream.service.persistence` keeps the store directory in
step and reads it back on start.  Sits on :mod:`fakejs.jetstream.consumer`,
:mod:`fakejs.jetstream.stream`, :mod:`fakejs.jetstream.storage` and
:mod:`fakejs.jetstream.config`; the ``$JS.API`` layer above attaches to it
(:class:`fakejs.jetstream.JetStreamWithApi` is the two together).
"""

from fakejs.jetstream.service.jetstream import JetStream

__all__ = ["JetStream"]
