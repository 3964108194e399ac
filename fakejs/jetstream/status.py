"""The one place JetStream status header blocks are built.

Every status a client can receive on the pull, push and direct-get paths is
written here, byte for byte as nats-server sends it
(``NATS/1.0 <code> <text>\\r\\n[headers]\\r\\n``).  Callers pick a function;
nothing else in fakejs spells out a status line.
"""

from __future__ import annotations

from fakejs.gocompat import gotime

PENDING_MESSAGES = "Nats-Pending-Messages"
PENDING_BYTES = "Nats-Pending-Bytes"
LAST_CONSUMER = "Nats-Last-Consumer"
LAST_STREAM = "Nats-Last-Stream"
CONSUMER_STALLED = "Nats-Consumer-Stalled"


def _block(status: str, *pairs: tuple[str, object]) -> bytes:
    lines = [f"NATS/1.0 {status}\r\n"]
    for key, value in pairs:
        lines.append(f"{key}: {value}\r\n")
    lines.append("\r\n")
    return "".join(lines).encode()


def _pending(status: str, messages: int, nbytes: int) -> bytes:
    return _block(status, (PENDING_MESSAGES, messages), (PENDING_BYTES, nbytes))


# -- pull requests ----------------------------------------------------------------------


def no_messages() -> bytes:
    return _block("404 No Messages")


def request_timeout(messages: int, nbytes: int) -> bytes:
    return _pending("408 Request Timeout", messages, nbytes)


def interest_expired(messages: int, nbytes: int) -> bytes:
    """A request through a service import whose requester stopped listening."""
    return _pending("408 Interest Expired", messages, nbytes)


def requests_pending() -> bytes:
    return _block("408 Requests Pending")


def message_size_exceeds_max_bytes(messages: int, nbytes: int) -> bytes:
    return _pending("409 Message Size Exceeds MaxBytes", messages, nbytes)


def batch_completed(messages: int, nbytes: int) -> bytes:
    return _pending("409 Batch Completed", messages, nbytes)


def exceeded_max_waiting() -> bytes:
    return _block("409 Exceeded MaxWaiting")


def exceeded_max_request_batch(limit: int) -> bytes:
    return _block(f"409 Exceeded MaxRequestBatch of {limit}")


def exceeded_max_request_expires(limit_ns: int) -> bytes:
    return _block(f"409 Exceeded MaxRequestExpires of {gotime.format_duration(limit_ns)}")


def exceeded_max_request_max_bytes(limit: int) -> bytes:
    return _block(f"409 Exceeded MaxRequestMaxBytes of {limit}")


def consumer_deleted() -> bytes:
    return _block("409 Consumer Deleted")


def leadership_change() -> bytes:
    """A clustered consumer's new leader does not hold the pulls waiting on the old one."""
    return _block("409 Leadership Change")


def consumer_is_push_based() -> bytes:
    return _block("409 Consumer is push based")


def server_shutdown(messages: int, nbytes: int) -> bytes:
    return _pending("409 Server Shutdown", messages, nbytes)


def bad_request(reason: str) -> bytes:
    return _block(f"400 Bad Request - {reason}")


def required_api_level() -> bytes:
    return _block("412 Required Api Level")


def pin_id_mismatch() -> bytes:
    return _block("423 Nats-Pin-Id mismatch")


def wrong_pin_id(messages: int, nbytes: int) -> bytes:
    return _pending("423 Nats-Wrong-Pin-Id", messages, nbytes)


def idle_heartbeat(last_consumer: int, last_stream: int, stalled: str = "") -> bytes:
    pairs: list[tuple[str, object]] = [(LAST_CONSUMER, last_consumer), (LAST_STREAM, last_stream)]
    if stalled:
        pairs.append((CONSUMER_STALLED, stalled))
    return _block("100 Idle Heartbeat", *pairs)


def flow_control_request() -> bytes:
    return _block("100 FlowControl Request")


def custom(code: int, text: str) -> bytes:
    """Any status (for fault injection): ``NATS/1.0 <code> <text>``."""
    return _block(f"{code} {text}".rstrip())


# -- direct get ---------------------------------------------------------------------------


def end_of_batch(num_pending: int, last_seq: int, up_to_seq: int | None = None) -> bytes:
    pairs: list[tuple[str, object]] = [("Nats-Num-Pending", num_pending), ("Nats-Last-Sequence", last_seq)]
    if up_to_seq is not None:
        pairs.append(("Nats-UpTo-Sequence", up_to_seq))
    return _block("204 EOB", *pairs)


def message_not_found() -> bytes:
    return _block("404 Message Not Found")


def no_results() -> bytes:
    return _block("404 No Results")


def empty_request() -> bytes:
    return _block("408 Empty Request")


def malformed_request() -> bytes:
    return _block("408 Malformed Request")


def direct_bad_request() -> bytes:
    return _block("408 Bad Request")


def too_many_results() -> bytes:
    return _block("413 Too Many Results")
