"""A stream: publishing (dedup, expectations, rollups, TTLs), limits, retention, expiry, Direct Get.

``stream`` is the stream itself; its parts are ``publish`` (the header
rules a message meets), ``dedup`` (the duplicate window), ``expiry``
(``max_age`` and TTL timers) and ``direct`` (Direct Get).  Sits on
:mod:`fakejs.jetstream.storage` and :mod:`fakejs.jetstream.config`; it sees
its JetStream and its consumers through the small protocols
:class:`~fakejs.jetstream.stream.stream.StreamHost` and
:class:`~fakejs.jetstream.stream.stream.StreamConsumer`, and never imports
:mod:`fakejs.jetstream.consumer` or anything above.
"""
