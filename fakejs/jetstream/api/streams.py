"""``$JS.API.INFO`` and ``$JS.API.STREAM.*``: thin handlers over the stream domain.

Each handler decodes its request, calls the domain objects and returns the
reply fields; :mod:`fakejs.jetstream.api.dispatch` adds ``type`` and turns a raised
:class:`~fakejs.jetstream.errors.ApiError` into the error reply.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from fakejs.core.subjects import overlap
from fakejs.gocompat import gotime
from fakejs.gocompat.gojson import Field, GoJSONError, Struct, loads
from fakejs.jetstream.api.dispatch import Request, encode, handler
from fakejs.jetstream.config import stream as streamconfig
from fakejs.jetstream.config import stream_rules
from fakejs.jetstream.errors import api_error
from fakejs.jetstream.stream.direct import MSG_GET_REQUEST

if TYPE_CHECKING:
    from fakejs.jetstream.service import JetStream

NAMES_LIMIT = 1024
LIST_LIMIT = 256
MAX_SUBJECT_DETAILS = 100_000

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


def stream_name(request: Request) -> str:
    """The stream name: the subject's last token (``streamNameFromSubject``)."""
    return request.tokens[-1]


def is_empty_request(payload: bytes) -> bool:
    """nats-server's ``isEmptyRequest``: nothing, ``{}``, or JSON for an empty object."""
    if not payload or payload == b"{}":
        return True
    try:
        value = loads(payload)
    except GoJSONError:
        return False
    return isinstance(value, dict) and not value


@handler("$JS.API.INFO", "account_info_response")
def account_info(js: JetStream, request: Request) -> dict[str, Any]:
    return js.account_info()


# -- create / update / delete -------------------------------------------------------


@handler("$JS.API.STREAM.CREATE.*", "stream_create_response")
def stream_create(js: JetStream, request: Request) -> dict[str, Any]:
    fields = request.decode(streamconfig.STREAM_CONFIG_REQUEST)
    pedantic = bool(fields.pop("pedantic", False))
    config = streamconfig.from_request(fields)
    streamconfig.set_static_metadata(config)
    name = stream_name(request)
    if name != config["name"]:
        raise api_error("JSStreamMismatchErr")
    if "\\" in name or "/" in name:
        raise api_error("JSStreamNameContainsPathSeparatorsErr")
    if config["sealed"]:
        raise api_error("JSStreamInvalidConfigF", err="stream configuration for create can not be sealed")
    if config["mirror_direct"] and config["mirror"] is None:
        raise api_error("JSStreamInvalidConfigF", err="stream has no mirror but does have mirror direct")
    checked = stream_rules.check(config, pedantic)
    if checked["num_replicas"] > 1:
        raise api_error("JSStreamReplicasNotSupportedErr")
    existing = js.streams.get(checked["name"])
    if existing is not None:
        # Creating again with the same config is a success (did_create and all).
        streamconfig.copy_static_metadata(checked, existing.config)
        if checked != existing.config:
            raise api_error("JSStreamNameExistErr")
        stream = existing
    else:
        unsupported = stream_rules.unsupported_feature(checked)
        if unsupported is not None:
            raise unsupported
        js.check_resources(checked)
        if js.subjects_overlap(checked["subjects"]):
            raise api_error("JSStreamSubjectOverlapErr")
        stream = js.create_stream(checked)
    info = stream.info(cluster=False)
    info["did_create"] = True
    return info


@handler("$JS.API.STREAM.UPDATE.*", "stream_update_response")
def stream_update(js: JetStream, request: Request) -> dict[str, Any]:
    fields = request.decode(streamconfig.STREAM_CONFIG_REQUEST)
    pedantic = bool(fields.pop("pedantic", False))
    config = stream_rules.check(streamconfig.from_request(fields), pedantic)
    name = stream_name(request)
    if name != config["name"]:
        raise api_error("JSStreamMismatchErr")
    stream = js.lookup(name)
    streamconfig.set_static_metadata(config)
    checked = stream_rules.check_update(stream.config, config, pedantic)
    unsupported = stream_rules.unsupported_feature(checked)
    if unsupported is not None:
        raise unsupported
    js.check_resources(checked, exclude=name)
    violators = consumers_over_limits(stream, checked)
    if violators:
        raise api_error("JSStreamUpdateErrF", err="change to limits violates consumers: " + ", ".join(violators))
    if js.subjects_overlap(checked["subjects"], exclude=name):
        raise api_error("JSStreamSubjectOverlapErr")
    apply_update(js, stream, checked)
    return stream.info(cluster=False)


def consumers_over_limits(stream: Any, config: dict[str, Any]) -> list[str]:
    """Consumers whose settings exceed new stream consumer limits (only checked when those change)."""
    old = stream.config["consumer_limits"] or {}
    new = config["consumer_limits"] or {}
    threshold, max_ack = new.get("inactive_threshold", 0), new.get("max_ack_pending", 0)
    changed = (threshold > 0 and threshold != old.get("inactive_threshold", 0)) or (
        max_ack > 0 and max_ack != old.get("max_ack_pending", 0)
    )
    if not changed:
        return []
    names = []
    for consumer in stream.consumers.values():
        cfg = consumer.config
        if (threshold > 0 and cfg["inactive_threshold"] > threshold) or (
            max_ack > 0 and cfg["max_ack_pending"] > max_ack
        ):
            names.append(consumer.name)
    return names


def apply_update(js: JetStream, stream: Any, config: dict[str, Any]) -> None:
    old = stream.config
    stream.config = config
    if (
        config["retention"] == "interest"
        and old["retention"] != "interest"
        and not stream.consumers
        and stream.store.msgs
    ):
        stream.purge()  # an interest stream without consumers keeps nothing
    if config["subjects"] != old["subjects"]:
        stream.detach()
        stream.attach()
    stream.direct.sync()
    stream.enforce_subject_limit()
    stream.enforce_limits()
    stream._rearm_expiry()
    js.save_config(stream)


@handler("$JS.API.STREAM.DELETE.*", "stream_delete_response")
def stream_delete(js: JetStream, request: Request) -> dict[str, Any]:
    if not is_empty_request(request.payload):
        raise api_error("JSNotEmptyRequestErr")
    stream = js.lookup(stream_name(request))
    js.delete_stream(stream)
    return {"success": True}


# -- info / names / list ----------------------------------------------------------------


@handler("$JS.API.STREAM.INFO.*", "stream_info_response")
def stream_info(js: JetStream, request: Request) -> dict[str, Any]:
    body = request.decode_if_json(STREAM_INFO_REQUEST)
    offset = max(body.get("offset", 0), 0)
    subjects_filter = body.get("subjects_filter", "")
    stream = js.lookup(stream_name(request))
    info = stream.info(deleted_details=body.get("deleted_details", False), cluster=True)
    paged = {"total": 0, "offset": 0, "limit": 0}
    if subjects_filter:
        counts = stream.store.subject_counts(subjects_filter)
        if counts:
            paged = {"total": len(counts), "offset": offset, "limit": MAX_SUBJECT_DETAILS}
            if offset == 0 and len(counts) <= MAX_SUBJECT_DETAILS:
                chosen = counts
            else:
                names = sorted(counts)[offset : offset + MAX_SUBJECT_DETAILS]
                chosen = {name: counts[name] for name in names}
            state = info["state"]
            rebuilt = {}
            for key, value in state.items():
                if key == "num_deleted" or key == "deleted" or key == "consumer_count":
                    if "subjects" not in rebuilt and chosen:
                        rebuilt["subjects"] = chosen
                rebuilt[key] = value
            info["state"] = rebuilt
    return {**paged, **info}


def _filtered_streams(js: JetStream, subject_filter: str) -> list[Any]:
    chosen = []
    for stream in js.streams.values():
        if subject_filter:
            subjects = stream.config["subjects"] or [stream.name]
            if not any(overlap(subject_filter, subject) for subject in subjects):
                continue
        chosen.append(stream)
    return sorted(chosen, key=lambda s: s.name)


@handler("$JS.API.STREAM.NAMES", "stream_names_response")
def stream_names(js: JetStream, request: Request) -> dict[str, Any]:
    body = request.decode_if_json(STREAM_NAMES_REQUEST)
    offset = max(body.get("offset", 0), 0)
    streams = _filtered_streams(js, body.get("subject", ""))
    total = len(streams)
    offset = min(offset, total)
    names = [s.name for s in streams[offset : offset + NAMES_LIMIT]]
    return {"total": total, "offset": offset, "limit": NAMES_LIMIT, "streams": names or None}


@handler("$JS.API.STREAM.LIST", "stream_list_response")
def stream_list(js: JetStream, request: Request) -> dict[str, Any]:
    body = request.decode_if_json(STREAM_LIST_REQUEST)
    offset = max(body.get("offset", 0), 0)
    streams = _filtered_streams(js, body.get("subject", ""))
    total = len(streams)
    offset = min(offset, total)
    # Listed streams carry neither cluster details nor the server's dynamic metadata.
    infos = [s.info(cluster=False, dynamic_metadata=False) for s in streams[offset : offset + LIST_LIMIT]]
    return {"total": total, "offset": offset, "limit": LIST_LIMIT, "streams": infos}


# -- purge and messages -------------------------------------------------------------------


@handler("$JS.API.STREAM.PURGE.*", "stream_purge_response")
def stream_purge(js: JetStream, request: Request) -> dict[str, Any]:
    body = {}
    if request.is_json_object_or_array():
        body = request.decode(STREAM_PURGE_REQUEST)
        if body.get("seq", 0) > 0 and body.get("keep", 0) > 0:
            raise api_error("JSBadRequestErr")
    stream = js.lookup(stream_name(request))
    if stream.config["sealed"]:
        raise api_error("JSStreamSealedErr")
    if stream.config["deny_purge"]:
        raise api_error("JSStreamPurgeFailedF", err="stream purge not permitted")
    purged = stream.purge(body.get("filter", ""), body.get("seq", 0), body.get("keep", 0))
    return {"success": True, "purged": purged}


@handler("$JS.API.STREAM.MSG.DELETE.*", "stream_msg_delete_response")
def msg_delete(js: JetStream, request: Request) -> dict[str, Any]:
    if is_empty_request(request.payload):
        raise api_error("JSBadRequestErr")
    body = request.decode(MSG_DELETE_REQUEST)
    stream = js.lookup(request.token(5))
    if stream.config["sealed"]:
        raise api_error("JSStreamSealedErr")
    if stream.config["deny_delete"]:
        raise api_error("JSStreamMsgDeleteFailedF", err="message delete not permitted")
    seq = body.get("seq", 0)
    if stream.remove_message(seq) is None:
        # Answered as an error but counted as a successful API call, as nats-server does.
        return {"error": missing_message_error(stream, seq).to_dict()}
    return {"success": True}


def missing_message_error(stream: Any, seq: int) -> Any:
    """The file store names why a sequence is missing; the memory store does not."""
    store = stream.store
    if store.storage == "file":
        if seq == 0 or seq < store.first_seq:
            return api_error("JSStreamMsgDeleteFailedF", err="no message found")
        if seq > store.last_seq:
            return api_error("JSStreamMsgDeleteFailedF", err="stream store EOF")
    return api_error("JSSequenceNotFoundErrF", seq=seq)


@handler("$JS.API.STREAM.MSG.GET.*", "stream_msg_get_response")
def msg_get(js: JetStream, request: Request) -> dict[str, Any] | None:
    if is_empty_request(request.payload):
        raise api_error("JSBadRequestErr")
    body = request.decode(MSG_GET_REQUEST)
    if body.get("batch", 0) > 0 or body.get("max_bytes", 0) > 0 or body.get("multi_last"):
        raise api_error("JSBadRequestErr")
    seq = body.get("seq", 0)
    last_for = body.get("last_by_subj", "")
    next_for = body.get("next_by_subj", "")
    start_time = body.get("start_time")
    if (
        (seq > 0 and last_for)
        or (seq == 0 and not last_for and not next_for and start_time is None)
        or (seq > 0 and start_time is not None)
        or (start_time is not None and last_for)
        or (last_for and next_for)
    ):
        raise api_error("JSBadRequestErr")
    stream = js.lookup(request.token(5))
    store = stream.store
    if start_time is not None:
        seq = store.seq_from_time(start_time.ns)
    if seq > 0 and not next_for:
        msg = store.get(seq)
    elif next_for:
        msg = store.next_message(seq, next_for)
    else:
        msg = store.last_message(last_for)
    if msg is None:
        raise api_error("JSNoMessageFoundErr")
    message: dict[str, Any] = {"subject": msg.subject, "seq": msg.seq}
    if msg.hdr and not body.get("no_hdr"):
        message["hdrs"] = base64.b64encode(msg.hdr).decode()
    if msg.data:
        message["data"] = base64.b64encode(msg.data).decode()
    message["time"] = gotime.rfc3339(msg.ts)
    # A successful get is sent as a plain message: it is not counted as an API call.
    if request.reply:
        js.reply(
            request.reply, encode({"type": "io.nats.jetstream.api.v1.stream_msg_get_response", "message": message})
        )
    return None


# -- clustering-only operations on a single server --------------------------------------------


def _needs_cluster(js: JetStream, request: Request) -> dict[str, Any]:
    raise api_error("JSClusterRequiredErr")


for _pattern, _type in (
    ("$JS.API.STREAM.LEADER.STEPDOWN.*", "stream_leader_stepdown_response"),
    ("$JS.API.STREAM.PEER.REMOVE.*", "stream_remove_peer_response"),
    ("$JS.API.STREAM.PEER.EVACUATE.*", "stream_evacuate_peer_response"),
    ("$JS.API.STREAM.CANCEL_MOVE.*", "stream_cancel_move_response"),
):
    handler(_pattern, _type)(_needs_cluster)


@handler("$JS.API.STREAM.SNAPSHOT.*", "stream_snapshot_response")
def stream_snapshot(js: JetStream, request: Request) -> dict[str, Any]:
    js.lookup(stream_name(request))
    raise api_error("JSStreamSnapshotErrF", err="stream snapshots are not supported by fakejs")


@handler("$JS.API.STREAM.RESTORE.*", "stream_restore_response")
def stream_restore(js: JetStream, request: Request) -> dict[str, Any]:
    raise api_error("JSStreamRestoreErrF", err="stream restores are not supported by fakejs")
