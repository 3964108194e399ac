"""The ``$JS.API`` surface: one route table from subject patterns to handlers.

``routes`` is the table (subject pattern with named tokens, response type,
handler), built from ``table``'s ``Route`` and ``RouteTable``; ``streams``,
``consumers`` and ``leaders`` (leader step-downs, peer removal) hold the
handlers, which decode the request (``request``), call the domain and
encode the reply -- rules about streams and consumers live in the domain,
never here; ``dispatch`` subscribes, dispatches and replies,
``queue_limits`` holds nats-server's API queue limits, ``disabled``
answers accounts without JetStream, and ``replicated`` is the front end of
a JetStream replicated across a cluster's servers (each request answered
by the server that leads it), with ``replicated_consumers`` for its
consumer requests, ``replicated_leaders`` for its step-downs, ``replicated_moves``
for its evacuations and move cancels,
``replicated_audit`` for the audit advisory of what it answers and
``late_answers`` for the answers its new leaders give to requests they did not hear.
The top of the JetStream layer: it attaches to a
:class:`~fakejs.jetstream.service.JetStream` (:func:`attach_api`), and
nothing below imports it.
"""

from fakejs.jetstream.api.dispatch import JetStreamApi, attach_api

__all__ = ["JetStreamApi", "attach_api"]
