"""The JSON bodies a client may send: ``CONNECT`` options and ``INFO``.

nats-server decodes both with Go's ``encoding/json`` into fixed structs and
closes the connection (without ``-ERR``) when decoding fails, so a wrong
type (``{"verbose":"yes"}``) is as fatal as broken JSON.  The tables below
name the fields and their Go types so :mod:`fakejs.gocompat.gojson` can apply the
same rules.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from fakejs.gocompat.gojson import Field, GoJSONError, Struct, unmarshal
from fakejs.gocompat.jsonvalue import plain_value

SUBJECT_PERMISSION = Struct("SubjectPermission", (Field("allow", "[]string"), Field("deny", "[]string")))

CLIENT_OPTS = Struct(
    "ClientOpts",
    (
        Field("echo", "bool"),
        Field("verbose", "bool"),
        Field("pedantic", "bool"),
        Field("tls_required", "bool"),
        Field("nkey", "string"),
        Field("jwt", "string"),
        Field("sig", "string"),
        Field("auth_token", "string"),
        Field("user", "string"),
        Field("pass", "string"),
        Field("name", "string"),
        Field("lang", "string"),
        Field("version", "string"),
        Field("protocol", "int"),
        Field("account", "string"),
        Field("new_account", "bool"),
        Field("headers", "bool"),
        Field("no_responders", "bool"),
        Field("import", SUBJECT_PERMISSION),
        Field("export", SUBJECT_PERMISSION),
        Field("remote_account", "string"),
        Field("proxy_sig", "string"),
    ),
)

# What a connection starts with before any CONNECT (nats-server's defaults).
DEFAULT_CLIENT_OPTS: dict[str, Any] = {"verbose": True, "pedantic": True, "echo": True}


def _go_bytes(value: Any) -> Any:
    """Go decodes a ``[]byte`` field from a base64 string."""
    value = plain_value(value)
    if not isinstance(value, str):
        raise GoJSONError(f"json: cannot unmarshal {type(value).__name__} into Go value of type []uint8")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise GoJSONError("illegal base64 data") from None


INFO = Struct(
    "Info",
    (
        Field("server_id", "string"),
        Field("server_name", "string"),
        Field("version", "string"),
        Field("proto", "int"),
        Field("git_commit", "string"),
        Field("go", "string"),
        Field("host", "string"),
        Field("port", "int"),
        Field("headers", "bool"),
        Field("auth_required", "bool"),
        Field("tls_required", "bool"),
        Field("tls_verify", "bool"),
        Field("tls_available", "bool"),
        Field("max_payload", "int32"),
        Field("jetstream", "bool"),
        Field("ip", "string"),
        Field("client_id", "uint64"),
        Field("client_ip", "string"),
        Field("nonce", "string"),
        Field("cluster", "string"),
        Field("cluster_dynamic", "bool"),
        Field("domain", "string"),
        Field("connect_urls", "[]string"),
        Field("ws_connect_urls", "[]string"),
        Field("ldm", "bool"),
        Field("compression", "string"),
        Field("connect_info", "bool"),
        Field("remote_account", "string"),
        Field("acc_is_sys", "bool"),
        Field("api_lvl", "int"),
        Field("import", SUBJECT_PERMISSION),
        Field("export", SUBJECT_PERMISSION),
        Field("lnoc", "bool"),
        Field("lnocu", "bool"),
        Field("info_on_connect", "bool"),
        Field("route_pool_size", "int"),
        Field("route_pool_idx", "int"),
        Field("route_account", "string"),
        Field("route_acc_add_reqid", "string"),
        Field("gossip_mode", "uint8"),
        Field("gateway", "string"),
        Field("gateway_urls", "[]string"),
        Field("gateway_url", "string"),
        Field("gateway_cmd", "uint8"),
        Field("gateway_cmd_payload", "any", decoder=_go_bytes),
        Field("gateway_nrp", "bool"),
        Field("gateway_iom", "bool"),
        Field("leafnode_urls", "[]string"),
        Field("xkey", "string"),
    ),
)


def decode_connect(arg: bytes) -> dict[str, Any]:
    """Decode a CONNECT argument; raises :class:`GoJSONError` when Go would fail."""
    return unmarshal(CLIENT_OPTS, arg)


def decode_info(arg: bytes) -> dict[str, Any]:
    """Decode an INFO a client sent; raises :class:`GoJSONError` when Go would fail."""
    return unmarshal(INFO, arg)
