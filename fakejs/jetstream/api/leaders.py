"""``$JS.API.STREAM.LEADER.STEPDOWN``, ``$JS.API.CONSUMER.LEADER.STEPDOWN``, ``STREAM.PEER.REMOVE``,
``CONSUMER.PEER.REMOVE`` on a single server.

They need a cluster: a single server answers ``JetStream clustering support
required`` (10010), before it looks at the request or the asset, as
nats-server does.  A cluster's JetStream (replicated across its servers)
serves them in :mod:`fakejs.jetstream.api.replicated_leaders` and
:mod:`fakejs.jetstream.api.replicated_moves`, which decode a peer removal's
body with :data:`PEER_REMOVE_REQUEST`.
"""

from __future__ import annotations

from fakejs.gocompat.gojson import Field, Struct
from fakejs.jetstream.api.request import Request
from fakejs.jetstream.api.table import Reply
from fakejs.jetstream.errors import api_error
from fakejs.jetstream.service import JetStream

PEER_REMOVE_REQUEST = Struct("JSApiStreamRemovePeerRequest", (Field("peer", "string"),))


def stream_stepdown(js: JetStream, request: Request, stream: str) -> Reply:
    raise api_error("JSClusterRequiredErr")


def consumer_stepdown(js: JetStream, request: Request, stream: str, consumer: str) -> Reply:
    raise api_error("JSClusterRequiredErr")


def consumer_remove_peer(js: JetStream, request: Request, stream: str, consumer: str) -> Reply:
    raise api_error("JSClusterRequiredErr")


def stream_remove_peer(js: JetStream, request: Request, stream: str) -> Reply:
    raise api_error("JSClusterRequiredErr")
