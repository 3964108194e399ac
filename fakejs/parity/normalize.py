"""Making two servers' replies comparable: only what must differ is replaced.

Two servers never agree on wall-clock timestamps, on their own ids and
names, on the timestamp token of an ack subject, or on the inbox a client
made up.  Those values are replaced with placeholders (``"<ts>"``,
``"<server>"``, ``"<inbox>"``); everything else -- field order aside, since
replies are compared as decoded JSON -- must be equal.  Anything wider
(ignoring a counter, a field that "usually" differs) would hide exactly the
differences a parity campaign exists to find.

Replies are also turned into JSON-able values (bytes become text, tuples
lists), so a divergence can be written to a report and read back.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

# Keys whose values are timestamps (RFC 3339) in JetStream replies.
TIME_KEYS = frozenset(
    {
        "created",
        "ts",
        "first_ts",
        "last_ts",
        "time",
        "last_active",
        "pinned_ts",
        "pause_until",
        "opt_start_time",
        "leader_since",
        "active",
    }
)
# Keys whose values name the server (leader, peer ids).
SERVER_KEYS = frozenset({"leader", "server", "server_id", "server_name", "peer"})
# Message headers whose values are timestamps.
TIME_HEADERS = frozenset({"Nats-Time-Stamp"})
ZERO_TIME = "0001-01-01T00:00:00Z"
_SOURCING_NAME = re.compile(r"JS_SRC_[0-9A-Za-z]{8}-[0-9A-Za-z]{8}")
_RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")


def normalize(value: Any) -> Any:
    """Replace timestamps with ``"<ts>"`` (zero time kept as is) and server names with ``"<server>"``.

    Two more things depend on when or how a server looked, not on what it
    did: a mirror's or source's ``active`` (nanoseconds since it last heard
    from its origin, -1 never) is kept as its sign, and the ``sources`` info
    list of STREAM.INFO (built from a Go map, so in no particular order) is
    sorted.  The configured ``sources`` keep their order.  A sourcing
    consumer's ``deliver_subject`` ends in a random token the server makes up
    (``$JS.M.<inbox>``), and so does the last token of a copied message's
    ``Nats-Stream-Source`` header (the origin's identity, ``<ident>``), and
    the name of a sourcing consumer the origin creates: nats-server appends a
    random suffix to the stable ``JS_SRC_<hash>`` (``-<suffix>``).
    """
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key in TIME_KEYS and isinstance(item, str) and _RFC3339.match(item):
                out[key] = item if item == ZERO_TIME else "<ts>"
            elif key in SERVER_KEYS and isinstance(item, str):
                out[key] = "<server>"
            elif key == "hdrs" and isinstance(item, str):
                out[key] = _stored_headers(item)
            elif key == "deliver_subject" and value.get("sourcing") is True and isinstance(item, str):
                out[key] = item.rsplit(".", 1)[0] + ".<inbox>"
            elif key == "name" and isinstance(item, str) and _SOURCING_NAME.fullmatch(item):
                out[key] = item.rsplit("-", 1)[0] + "-<suffix>"
            elif key == "active" and isinstance(item, int) and not isinstance(item, bool):
                out[key] = (item > 0) - (item < 0)
            elif key == "sources" and _link_infos(item):
                out[key] = sorted((normalize(info) for info in item), key=lambda info: json.dumps(info, sort_keys=True))
            else:
                out[key] = normalize(item)
        return out
    if isinstance(value, list):
        return [normalize(item) for item in value]
    return value


def _link_infos(value: Any) -> bool:
    """Whether ``value`` is a list of source info blocks (they report ``lag``; configured sources do not)."""
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) and "lag" in v for v in value)


def normalize_headers(headers: dict[str, str] | None) -> dict[str, str] | None:
    """Message headers with timestamp values, the origin's identity in ``Nats-Stream-Source`` and pin ids replaced.

    A pinned client's ``Nats-Pin-Id`` is a unique id each server makes up
    (a NUID, 22 characters): only its shape is compared.
    """
    if not headers:
        return None
    out = {key: ("<ts>" if key in TIME_HEADERS else value) for key, value in headers.items()}
    pin = out.get(PIN_HEADER)
    if pin is not None and _NUID.fullmatch(pin):
        out[PIN_HEADER] = "<pin>"
    if SOURCE_HEADER in out:
        out[SOURCE_HEADER] = _source_header(out[SOURCE_HEADER])
    return out


SOURCE_HEADER = "Nats-Stream-Source"
PIN_HEADER = "Nats-Pin-Id"
_NUID = re.compile(r"[0-9A-Za-z]{22}")
_SOURCE_LINE = re.compile(rb"(\r\nNats-Stream-Source: (?:\S+ ){5})\S+\r\n")


def _source_header(value: str) -> str:
    """``<stream> <seq> <filter> <dest> <subject> <identity>``: the identity is a token the origin made up."""
    parts = value.split(" ")
    if len(parts) == 6:
        parts[5] = "<ident>"
    return " ".join(parts)


def _stored_headers(hdrs: str) -> str:
    """A stored message's base64 header block (STREAM.MSG.GET) with the origin's identity replaced."""
    try:
        block = base64.b64decode(hdrs, validate=True)
    except ValueError:
        return hdrs
    if b"Nats-Stream-Source" not in block:
        return hdrs
    return base64.b64encode(_SOURCE_LINE.sub(rb"\1<ident>\r\n", block)).decode()


def ack_subject_shape(reply: str | None) -> str | None:
    """An ack reply subject with its timestamp token replaced (the only part that differs).

    ``$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<dseq>.<ts>.<pending>``
    (9 tokens), or the 12-token form with domain and account hash in front.
    """
    if reply and reply.startswith("$JS.ACK."):
        tokens = reply.split(".")
        if len(tokens) == 9:
            tokens[7] = "<ts>"
        elif len(tokens) >= 11:
            tokens[9] = "<ts>"
        return ".".join(tokens)
    return reply


def text(data: bytes) -> str:
    """Bytes as JSON-able text; anything not UTF-8 stays visible as escapes."""
    return data.decode("utf-8", "backslashreplace")


def payload_view(data: bytes) -> Any:
    """A reply payload: decoded and normalised JSON when it is JSON, else its text."""
    if not data:
        return ""
    try:
        return normalize(json.loads(data))
    except ValueError:
        return text(data)


def jsonable(value: Any) -> Any:
    """``value`` with tuples as lists and bytes as text, so it survives JSON unchanged."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, bytes):
        return text(value)
    return value


def status_code(reply: Any) -> int | None:
    """The status a client would act on: a JetStream error code, a status header, 503 for no responders.

    ``200`` for an ordinary reply, ``None`` when nothing came back at all
    (a timeout, or a skipped operation).
    """
    if not isinstance(reply, dict):
        return None
    if "failure" in reply:
        return 503 if reply["failure"] == "NoRespondersError" else None
    if "items" in reply:  # a multi-message reply: the status that ended it
        items = reply["items"]
        for item in reversed(items):
            if isinstance(item, dict) and item.get("headers") and "Status" in item["headers"]:
                return int(item["headers"]["Status"]) if item["headers"]["Status"].isdigit() else None
        return 200 if items and items[-1] != "silence" else None
    if reply.get("skipped"):
        return None
    headers = reply.get("headers") or {}
    if "Status" in headers:
        value = headers["Status"]
        return int(value) if value.isdigit() else None
    data = reply.get("data")
    if isinstance(data, dict) and isinstance(data.get("error"), dict):
        code = data["error"].get("code")
        return int(code) if isinstance(code, int) else None
    return 200


def first_difference(fake: Any, real: Any, path: str = "") -> str:
    """The path of the first value two replies disagree on (list positions shown as ``[]``).

    Divergences are grouped by it, next to API subject and status code:
    ``data.state.first_seq`` and ``data.error.err_code`` on the same API are
    different bugs.
    """
    if fake == real:
        return ""
    if isinstance(fake, dict) and isinstance(real, dict):
        for key in dict.fromkeys([*fake, *real]):
            where = f"{path}.{key}" if path else str(key)
            if key not in fake or key not in real:
                return where
            found = first_difference(fake[key], real[key], where)
            if found:
                return found
        return path or "(reply)"
    if isinstance(fake, list) and isinstance(real, list) and len(fake) == len(real):
        for x, y in zip(fake, real):
            found = first_difference(x, y, f"{path}[]")
            if found:
                return found
    return path or "(reply)"
