"""The ``$JS.API`` surface: one route table from subject patterns to handlers.

:mod:`~fakejs.jetstream.api.routes` is the table (subject pattern with
named tokens, response type, handler); :mod:`~fakejs.jetstream.api.streams`
and :mod:`~fakejs.jetstream.api.consumers` hold the handlers, which decode
the request, call the domain and encode the reply -- rules about streams
and consumers live in the domain, never here;
:mod:`~fakejs.jetstream.api.dispatch` subscribes, dispatches and replies.
The top of the JetStream layer: it attaches to a
:class:`~fakejs.jetstream.service.JetStream` (:func:`attach_api`), and
nothing below imports it.
"""

from fakejs.jetstream.api.dispatch import JetStreamApi, attach_api

__all__ = ["JetStreamApi", "attach_api"]
