"""``$JS.API.INFO`` and ``$JS.API.STREAM.*``: decode the request, call the stream domain, shape the reply.

Each handler receives the subject's named tokens (``stream``) and returns
the reply's fields; :mod:`fakejs.jetstream.api.dispatch` adds ``type`` and
turns a raised :class:`~fakejs.jetstream.errors.ApiError` into the error reply.
"""

from __future__ import annotations

import binascii
from typing import Any

from fakejs.gocompat import gotime
from fakejs.gocompat.gojson import Field, Struct
from fakejs.jetstream.api.request import Request
from fakejs.jetstream.api.table import Reply, Uncounted
from fakejs.jetstream.config import stream as streamconfig
from fakejs.jetstream.config import stream_rules
from fakejs.jetstream.config.stream import StreamConfig
from fakejs.jetstream.config.stream_sources import Lookup
from fakejs.jetstream.errors import api_error
from fakejs.jetstream.service import JetStream
from fakejs.jetstream.storage.store import StoredMessage
from fakejs.jetstream.stream.direct import MSG_GET_REQUEST
from fakejs.jetstream.stream.info import MAX_SUBJECT_DETAILS

NAMES_LIMIT = 1024
LIST_LIMIT = 256

PAGED = (Field("offset", "int"),)
STREAM_INFO_REQUEST = Struct(
    "JSApiStreamInfoRequest", PAGED + (Field("deleted_details", "bool"), Field("subjects_filter", "string"))
)
STREAM_NAMES_REQUEST = Struct("JSApiStreamNamesRequest", PAGED + (Field("subject", "string"),))
STREAM_LIST_REQUEST = Struct("JSApiStreamListRequest", PAGED + (Field("subject", "string"),))
STREAM_PURGE_REQUEST = Struct(
    "JSApiStreamPurgeRequest", (Field("seq", "uint64"), Field("filter", "string"), Field("keep", "uint64"))
)
MSG_DELETE_REQUEST = Struct("JSApiMsgDeleteRequest", (Field("seq", "uint64"), Field("no_erase", "bool")))


def account_info(js: JetStream, request: Request) -> Reply:
    return js.account_info()


# -- create / update / delete -------------------------------------------------------


def create_request(request: Request, stream: str) -> tuple[StreamConfig, bool]:
    """A ``STREAM.CREATE`` body: its configuration (named as the subject's stream) and ``pedantic``."""
    fields = request.decode(streamconfig.STREAM_CONFIG_REQUEST)
    pedantic = bool(fields.pop("pedantic", False))
    config = streamconfig.from_request(fields)
    if stream != config["name"]:
        raise api_error("JSStreamMismatchErr")
    return config, pedantic


def update_request(request: Request, stream: str, lookup: Lookup) -> tuple[StreamConfig, bool]:
    """A ``STREAM.UPDATE`` body: its configuration, checked as ``checkStreamCfg`` does before the name is
    compared with the subject's stream (as nats-server orders them), and ``pedantic``."""
    fields = request.decode(streamconfig.STREAM_CONFIG_REQUEST)
    pedantic = bool(fields.pop("pedantic", False))
    config = stream_rules.check(streamconfig.from_request(fields), pedantic, lookup)
    if stream != config["name"]:
        raise api_error("JSStreamMismatchErr")
    return config, pedantic


def create(js: JetStream, request: Request, stream: str) -> Reply:
    config, pedantic = create_request(request, stream)
    # A single server leaves the cluster section out of the reply.
    info = js.add_stream(config, pedantic).info(cluster=False, domain=False)
    info["did_create"] = True
    return info


def update(js: JetStream, request: Request, stream: str) -> Reply:
    config, pedantic = update_request(request, stream, js.stream_config)
    updated = js.update_stream(stream, config, pedantic)
    return updated.info(cluster=False)


def delete(js: JetStream, request: Request, stream: str) -> Reply:
    if not request.is_empty():
        raise api_error("JSNotEmptyRequestErr")
    js.delete_stream(js.lookup(stream))
    return {"success": True}


# -- info / names / list ----------------------------------------------------------------


def info(js: JetStream, request: Request, stream: str) -> Reply:
    body = request.decode_if_json(STREAM_INFO_REQUEST)
    offset = max(body.get("offset", 0), 0)
    subjects_filter = body.get("subjects_filter", "")
    target = js.lookup(stream)
    total, page = target.subjects_page(subjects_filter, offset) if subjects_filter else (0, {})
    paging = {"total": total, "offset": offset, "limit": MAX_SUBJECT_DETAILS}
    if not total:
        paging = {"total": 0, "offset": 0, "limit": 0}
    details = target.info(deleted_details=body.get("deleted_details", False), subjects=page, cluster=True)
    return {**paging, **details}


def names(js: JetStream, request: Request) -> Reply:
    body = request.decode_if_json(STREAM_NAMES_REQUEST)
    streams = js.streams_matching(body.get("subject", ""))
    total = len(streams)
    offset = min(max(body.get("offset", 0), 0), total)
    found = [s.name for s in streams[offset : offset + NAMES_LIMIT]]
    return {"total": total, "offset": offset, "limit": NAMES_LIMIT, "streams": found or None}


def listing(js: JetStream, request: Request) -> Reply:
    body = request.decode_if_json(STREAM_LIST_REQUEST)
    streams = js.streams_matching(body.get("subject", ""))
    total = len(streams)
    offset = min(max(body.get("offset", 0), 0), total)
    # Listed streams carry neither cluster details nor the server's dynamic metadata.
    infos = [s.info(cluster=False, dynamic_metadata=False) for s in streams[offset : offset + LIST_LIMIT]]
    return {"total": total, "offset": offset, "limit": LIST_LIMIT, "streams": infos}


# -- purge and messages -------------------------------------------------------------------


def purge(js: JetStream, request: Request, stream: str) -> Reply:
    body: dict[str, Any] = {}
    if request.is_json_object_or_array():
        body = request.decode(STREAM_PURGE_REQUEST)
        if body.get("seq", 0) > 0 and body.get("keep", 0) > 0:
            raise api_error("JSBadRequestErr")
    target = js.lookup(stream)
    subjects, seq, keep = body.get("filter", ""), body.get("seq", 0), body.get("keep", 0)
    purged = target.purge_on_request(subjects, seq, keep)
    return {"success": True, "purged": purged}


def delete_message(js: JetStream, request: Request, stream: str) -> Reply:
    if request.is_empty():
        raise api_error("JSBadRequestErr")
    body = request.decode(MSG_DELETE_REQUEST)
    missing = js.lookup(stream).erase_message(body.get("seq", 0))
    if missing is not None:
        # Answered as an error but counted as a successful API call, as nats-server does.
        return {"error": missing.to_dict()}
    return {"success": True}


def _is_bad_get(body: dict[str, Any]) -> bool:
    """``STREAM.MSG.GET`` takes one way to find a message, and no batch."""
    if body.get("batch", 0) > 0 or body.get("max_bytes", 0) > 0 or body.get("multi_last"):
        return True
    seq = body.get("seq", 0)
    last_for = body.get("last_by_subj", "")
    next_for = body.get("next_by_subj", "")
    start_time = body.get("start_time")
    return bool(
        (seq > 0 and last_for)
        or (seq == 0 and not last_for and not next_for and start_time is None)
        or (seq > 0 and start_time is not None)
        or (start_time is not None and last_for)
        or (last_for and next_for)
    )


def get_message(js: JetStream, request: Request, stream: str) -> Reply:
    if request.is_empty():
        raise api_error("JSBadRequestErr")
    body = request.decode(MSG_GET_REQUEST)
    if _is_bad_get(body):
        raise api_error("JSBadRequestErr")
    start_time = body.get("start_time")
    msg = js.lookup(stream).find_message(
        body.get("seq", 0),
        body.get("last_by_subj", ""),
        body.get("next_by_subj", ""),
        start_time.ns if start_time is not None else None,
    )
    # A successful get is sent as a plain message: it is not counted as an API call.
    return Uncounted({"message": _message_json(msg, bool(body.get("no_hdr")))})


def _message_json(msg: StoredMessage, no_hdr: bool) -> dict[str, Any]:
    message: dict[str, Any] = {"subject": msg.subject, "seq": msg.seq}
    if msg.hdr and not no_hdr:
        message["hdrs"] = binascii.b2a_base64(msg.hdr, newline=False).decode()  # b64encode, without its call
    if msg.data:
        message["data"] = binascii.b2a_base64(msg.data, newline=False).decode()
    message["time"] = gotime.rfc3339(msg.ts)
    return message


# -- what a single server cannot do ---------------------------------------------------------


def needs_cluster(js: JetStream, request: Request, **tokens: str) -> Reply:
    raise api_error("JSClusterRequiredErr")


def snapshot(js: JetStream, request: Request, stream: str) -> Reply:
    js.lookup(stream)
    raise api_error("JSStreamSnapshotErrF", err="stream snapshots are not supported by fakejs")


def restore(js: JetStream, request: Request, stream: str) -> Reply:
    raise api_error("JSStreamRestoreErrF", err="stream restores are not supported by fakejs")
