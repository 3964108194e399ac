"""A stream: publishing (dedup, expectations, rollups, TTLs), limits, retention, expiry, Direct Get.

``stream`` is the stream itself; its parts are ``publish_path`` (its
publisher: a message checked, decided, stored, acknowledged), ``publish`` (the header
rules a message meets), ``entries`` (what the leader decided, for every
replica to apply: a message at its sequence and time, a purge, a delete, a skip, a committed
atomic batch, a fast batch's message),
``replica`` (the state machine a stream group applies to), ``replicated``
(a replicated stream's leader: publishes proposed to its group), ``turn``
(its publishes one at a time, taken at once when free),
``replicated_batches`` (its atomic and fast batches), ``pipeline`` (the messages its leader has in
flight, answered in order once applied) and ``replicated_effects`` (the delete
markers, expiries and fired schedules its leader proposes), ``dedup`` (the duplicate window), ``recovery`` (what
a restart rebuilds from the stored messages), ``expiry``
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
``feed_info`` (``StreamSourceInfo``), and ``replicated_feed`` (a replicated
stream's mirror or sources, run on its leader and proposed to its group).  Sits on
:mod:`fakejs.jetstream.storage`, :mod:`fakejs.jetstream.config` and (a
replicated stream) :mod:`fakejs.jetstream.replication`; it sees
its JetStream and its consumers through the small protocols of ``host``
and ``consumer_view`` (:class:`~fakejs.jetstream.stream.stream.StreamHost`
and :class:`~fakejs.jetstream.stream.stream.StreamConsumer`), and never
imports :mod:`fakejs.jetstream.consumer` or anything above.
"""
