"""``$SYS.REQ.SERVER.<id>.KICK`` and ``...LDM``: one client disconnected, or told the server is leaving.

The body is nats-server's ``KickClientReq`` / ``LDMClientReq``,
``{"cid": <client id>}``; a body that is no such JSON document gets no
answer (nats-server logs it and stays silent).  Done, the answer is the
bare envelope ``{"server": {...}}``; otherwise its ``error`` (500) says why,
in nats-server's words.  ``KICK`` closes the connection with the reason
``Kicked``; ``LDM`` sends the client an INFO with ``"ldm": true``, when it
reads asynchronous INFOs (protocol 1, after its first PONG), as
nats-server's ``kickClient`` and ``ldmClient`` do.
"""

from __future__ import annotations

import json
from typing import Any

from fakejs.core.broker import Broker
from fakejs.core.clientio import KICKED
from fakejs.protocol.writer import info as go_info

NO_CLIENT = "no such client or leafnode id"
NO_CLIENT_ID = "no such client id"
NOT_READY = "client does not support Lame Duck Mode or is not ready to receive the notification"
UINT64_MAX = 2**64 - 1


def client_id(payload: bytes) -> tuple[int, dict[str, Any]] | None:
    """The ``cid`` asked for and the decoded body (for the server filters); None: not a request body."""
    try:
        decoded = json.loads(payload) if payload.strip() else None
    except ValueError:
        return None
    if decoded is None and payload.strip() == b"null":
        return 0, {}
    if not isinstance(decoded, dict):
        return None
    cid = decoded.get("cid", 0)
    if cid is None:
        cid = 0
    if isinstance(cid, bool) or not isinstance(cid, int) or not 0 <= cid <= UINT64_MAX:
        return None
    return cid, decoded


def kick(broker: Broker, cid: int) -> str:
    """Disconnect client ``cid``: "" when done, else nats-server's error text."""
    client = broker.clients.get(cid)
    if client is None or client.closed:
        return NO_CLIENT
    client.close(KICKED)
    return ""


def lame_duck_one(broker: Broker, cid: int) -> str:
    """Tell client ``cid`` the server is in lame duck mode: "" when told, else nats-server's error text."""
    client = broker.clients.get(cid)
    if client is None or client.closed:
        return NO_CLIENT_ID
    if client.protocol < 1 or not client.first_pong_sent:
        return NOT_READY
    fields = broker.info_fields(client, update=True)
    if "ldm" not in fields:
        at = list(fields).index("api_lvl")
        items = list(fields.items())
        fields = dict([*items[:at], ("ldm", True), *items[at:]])
    client.send(go_info(fields))
    return ""


CLIENT_REQUESTS = {"KICK": kick, "LDM": lame_duck_one}
