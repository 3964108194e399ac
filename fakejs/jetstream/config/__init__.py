"""Stream and consumer configurations: their typed fields, JSON, defaults, validation and update rules.

``stream`` and ``consumer`` hold :class:`~fakejs.jetstream.config.stream.StreamConfig`
and :class:`~fakejs.jetstream.config.consumer.ConsumerConfig` (typed dicts, plain
dicts at run time) with their request schemas and JSON forms; ``stream_rules``
and ``consumer_rules`` hold nats-server's rules over them, ``stream_sources``
the checks of ``mirror`` and ``sources``, ``stream_transforms`` those of
``subject_transform`` and ``republish``.  Pure functions;
imports only :mod:`fakejs.jetstream.errors`, :mod:`fakejs.jetstream.enums`,
:mod:`fakejs.core` (subjects, options) and :mod:`fakejs.gocompat`.
"""
