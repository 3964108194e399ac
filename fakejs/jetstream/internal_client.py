"""The server's own clients that send JetStream API requests.

nats-server makes some ``$JS.API`` requests itself: a stream with a mirror
or sources asks the origin for its consumer through the stream's own
internal client (``kind: JetStream``, numbered when needed, started with
the stream), and asks it to delete that consumer through the account's
internal client (``kind: Account``, started with the server).  The audit
advisory of such a request names that client.
"""

from __future__ import annotations

from typing import Any

from fakejs.gocompat import gotime

STREAM_KIND = "JetStream"  # nats-server's JETSTREAM client kind
ACCOUNT_KIND = "Account"  # nats-server's ACCOUNT client kind


class InternalClient:
    """One internal client of the server (nats-server's ``client`` of kind JETSTREAM or ACCOUNT).

    A plain class: a dataclass costs its import, and every JetStream start imports this module.
    """

    __slots__ = ("account", "cid", "kind", "started_ns")

    def __init__(self, kind: str, cid: int, started_ns: int, account: str) -> None:
        self.kind = kind
        self.cid = cid
        self.started_ns = started_ns
        self.account = account

    def client_info(self, server: str) -> dict[str, Any]:
        """The ``ClientInfo`` an audit shows for it: start, id, account, server and kind."""
        return {
            "start": gotime.rfc3339(self.started_ns),
            "id": self.cid,
            "acc": self.account,
            "server": server,
            "kind": self.kind,
        }
