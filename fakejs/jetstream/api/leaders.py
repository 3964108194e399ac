"""``$JS.API.STREAM.LEADER.STEPDOWN``, ``$JS.API.CONSUMER.LEADER.STEPDOWN``, ``STREAM.PEER.REMOVE``,
``CONSUMER.PEER.REMOVE``.

On a single server they need a cluster (``JetStream clustering support
required``).  In a cluster the stream's (or consumer's) leader steps down
and another running replica takes over -- the ``placement.preferred``
server when the request names one of the replicas; the reply is
``{"success": true}`` (a single replica "steps down" to itself).  A
preferred server that already leads, or that the cluster does not know,
is nats-server's 10005 (``preferred server "n2" is already leader``,
``... not known``).  A
consumer's new leader answers the pulls waiting on the old one with ``409
Leadership Change``; a stream's step-down leaves them alone.  A peer
removal names a server (or its peer id) of the stream's group: another
running server takes its place (``peer not a member`` 10040, ``peer remap
failed`` 10075 when no server is free), as nats-server checks it; a
consumer's, another server of its stream's that the consumer is not on.
"""

from __future__ import annotations

from fakejs.gocompat.gojson import Field, Struct
from fakejs.jetstream.api.request import Request
from fakejs.jetstream.api.table import Reply
from fakejs.jetstream.errors import api_error
from fakejs.jetstream.service import JetStream
from fakejs.jetstream.service.clustered import ClusterAssets
from fakejs.jetstream.service.meta import Group
from fakejs.jetstream.service.replicated_leaders import STEPDOWN_REQUEST

PEER_REMOVE_REQUEST = Struct("JSApiStreamRemovePeerRequest", (Field("peer", "string"),))


def _preferred(request: Request) -> str:
    body = request.decode_if_json(STEPDOWN_REQUEST)
    placement = body.get("placement") or {}
    return str(placement.get("preferred") or "")


def _clustered(js: JetStream) -> ClusterAssets:
    if js.clustered is None:
        raise api_error("JSClusterRequiredErr")
    return js.clustered


def _step_down(clustered: ClusterAssets, group: Group | None, request: Request) -> Reply:
    """Move the group's leader (to the preferred server if the request names one)."""
    if group is not None:
        preferred = _preferred(request)
        problem = clustered.preferred_problem(group, preferred)
        if problem:
            raise api_error("JSClusterNoPeersErrF", err=problem)
        clustered.step_down(group, preferred)
    return {"success": True}


def stream_stepdown(js: JetStream, request: Request, stream: str) -> Reply:
    clustered = _clustered(js)
    js.lookup(stream)
    return _step_down(clustered, clustered.stream_group(stream), request)


def consumer_stepdown(js: JetStream, request: Request, stream: str, consumer: str) -> Reply:
    clustered = _clustered(js)
    js.lookup_consumer(stream, consumer)
    return _step_down(clustered, clustered.consumer_group(stream, consumer), request)


def _peer_named(request: Request) -> str:
    """The server a ``PEER.REMOVE`` names (10003 for an empty request or name)."""
    if request.is_empty():
        raise api_error("JSBadRequestErr")
    peer = str(request.decode(PEER_REMOVE_REQUEST).get("peer") or "")
    if not peer:
        raise api_error("JSBadRequestErr")
    return peer


def consumer_remove_peer(js: JetStream, request: Request, stream: str, consumer: str) -> Reply:
    """``CONSUMER.PEER.REMOVE``: a named server leaves the consumer's group, another of its stream's takes its
    place."""
    clustered = _clustered(js)
    request.check_level()  # after the cluster's check, as for a stream's peer removal
    peer = _peer_named(request)
    js.lookup_consumer(stream, consumer)
    clustered.remove_consumer_peer(stream, consumer, peer)
    return {"success": True}


def stream_remove_peer(js: JetStream, request: Request, stream: str) -> Reply:
    """``STREAM.PEER.REMOVE``: a named server leaves the stream's group, another running one takes its place."""
    clustered = _clustered(js)
    peer = _peer_named(request)
    js.lookup(stream)
    group = clustered.stream_group(stream)
    if group is not None:
        clustered.remove_peer(group, peer)
    return {"success": True}
