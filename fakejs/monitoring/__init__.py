"""nats-server's monitoring documents: ``/healthz``, ``/varz``, ``/connz``, ``/subsz``, ``/jsz``.

Each document is built from the core and JetStream objects it reports on,
shaped field for field like nats-server's.  May import :mod:`fakejs.jetstream`,
:mod:`fakejs.core` and :mod:`fakejs.gocompat`; the HTTP listener that serves
them lives in :mod:`fakejs.server`.
"""
