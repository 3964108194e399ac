"""Stream and consumer configurations: their typed fields, JSON, defaults, validation and update rules.

``stream`` and ``consumer`` hold :class:`~fakejs.jetstream.config.stream.StreamConfig`
and :class:`~fakejs.jetstream.config.consumer.ConsumerConfig` (typed dicts, plain
dicts at run time), each declared once as a table of fields from which
their request schemas, zero values and JSON forms derive (``fields``:
:class:`~fakejs.jetstream.config.fields.ConfigTable`); ``stream_rules``
and ``consumer_rules`` hold nats-server's rules over them, ``stream_sources``
the checks of ``mirror`` and ``sources``, ``stream_transforms`` those of
``subject_transform`` and ``republish``.  Pure functions;
imports only :mod:`fakejs.jetstream.errors`, :mod:`fakejs.jetstream.enums`,
:mod:`fakejs.core` (subjects, options) and :mod:`fakejs.gocompat`.
"""
