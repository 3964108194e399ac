"""JetStream: streams, consumers and their ``$JS.API``.

Importing the package registers the API handlers with the dispatcher.
"""

from fakejs.jetstream import streams_api  # noqa: F401  (registers handlers)
from fakejs.jetstream.account import JetStream

__all__ = ["JetStream"]
