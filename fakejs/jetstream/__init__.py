"""JetStream: streams, consumers and their ``$JS.API``, for one account.

``config`` (stream and consumer configurations: defaults, validation,
update rules), ``storage`` (message store, file journals), ``stream``
(publishing, limits, retention, Direct Get), ``consumer`` (a consumer
composed of its parts: waiting pulls, acks, push flow, lifecycle, priority
groups), ``service`` (an account's JetStream: its streams and the API
wiring) and ``api`` (the route table: handlers decode, call the domain,
encode).  ``errors``, ``status`` and ``advisories`` hold every error,
status line and advisory text.  May import :mod:`fakejs.core`,
:mod:`fakejs.protocol` and :mod:`fakejs.gocompat`; inside, ``api`` sits
on ``service``, which sits on ``consumer`` over ``stream`` over ``storage``
and ``config``.
"""

from fakejs.jetstream.api import consumers as consumers_api  # noqa: F401  (register handlers)
from fakejs.jetstream.api import streams as streams_api
from fakejs.jetstream.service import JetStream

__all__ = ["JetStream"]
