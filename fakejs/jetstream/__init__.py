"""JetStream: streams, consumers and their ``$JS.API``.

Importing the package registers the API handlers with the dispatcher.
"""

from fakejs.jetstream import consumers_api, streams_api  # noqa: F401  (register handlers)
from fakejs.jetstream.account import JetStream

__all__ = ["JetStream"]
