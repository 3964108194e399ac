"""A stream: publishing (dedup, expectations, rollups, TTLs), limits, retention, expiry, Direct Get.

``stream`` is the stream itself; its parts are ``publish`` (the header
rules a message meets), ``dedup`` (the duplicate window), ``expiry``
(``max_age`` and TTL timers), ``store_limits`` (size limits as the stores
apply them), ``counter`` (message counters), ``batch`` and
``batch_checks`` (atomic batches and their commit checks), ``fast_batch``
(fast-ingest batches), ``batch_limits`` (the server's limits of both kinds), ``schedules`` and ``cron`` (message schedules),
``direct`` (Direct Get), ``transforms`` (the input transform and the
republish), ``info`` (``StreamInfo`` and one message as STREAM.INFO and
STREAM.MSG.GET show them) and ``traced`` (a traced message's ``js``
event); what feeds a stream: ``links`` (its mirror or sources, started and
stopped with it), ``mirror``, ``sources``, ``feed`` (the link to one
origin), ``feed_requests`` (the consumer request sent to an origin) and
``feed_info`` (``StreamSourceInfo``).  Sits on
:mod:`fakejs.jetstream.storage` and :mod:`fakejs.jetstream.config`; it sees
its JetStream and its consumers through the small protocols of ``host``
and ``consumer_view`` (:class:`~fakejs.jetstream.stream.stream.StreamHost`
and :class:`~fakejs.jetstream.stream.stream.StreamConsumer`), and never
imports :mod:`fakejs.jetstream.consumer` or anything above.
"""
