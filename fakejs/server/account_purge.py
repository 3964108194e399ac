"""``$JS.API.ACCOUNT.PURGE.<account>``: the system account deletes an account's JetStream content.

As nats-server's ``jsLeaderAccountPurgeRequest`` on a server without a
cluster: only clients of the system account are answered (the subscription
lives there); a name with a path separator is 10051 ``account name can not
contain path separators``; otherwise every stream of the account (with its
consumers) is deleted, the server logs ``Purge request for account <name>
(streams: <n>, hasAccount: <true|false>)`` and the answer is
``{"type": "io.nats.jetstream.api.v1.account_purge_response",
"initiated": true}`` -- also for an account that does not exist.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fakejs.core.accounts import Account
from fakejs.core.router import Subscription
from fakejs.gocompat.gojson import dumps
from fakejs.jetstream.errors import api_error

if TYPE_CHECKING:
    from fakejs.core.broker import Broker
    from fakejs.jetstream import JetStreamWithApi

SUBJECT = "$JS.API.ACCOUNT.PURGE.*"
RESPONSE_TYPE = "io.nats.jetstream.api.v1.account_purge_response"


def serve_account_purge(
    broker: Broker, system: Account, jetstreams: Callable[[str], JetStreamWithApi | None]
) -> Subscription:
    """Answer account purges in ``system``; ``jetstreams`` finds an account's JetStream by name."""

    def on_request(subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: Any) -> None:
        name = subject.split(".")[4]
        doc: dict[str, Any] = {"type": RESPONSE_TYPE}
        if "/" in name or "\\" in name:
            error = api_error("JSStreamGeneralErrorF", err="account name can not contain path separators")
            doc["error"] = error.to_dict()
        else:
            js = jetstreams(name)
            streams = list(js.streams.values()) if js is not None else []
            has_account = broker.accounts.get(name) is not None
            broker.log.info(
                "Purge request for account %s (streams: %d, hasAccount: %s)",
                name,
                len(streams),
                "true" if has_account else "false",
            )
            for stream in streams:
                assert js is not None
                js.delete_stream(stream, "account_purge")
            doc["initiated"] = True
        if reply:
            system.router.publish(reply, "", None, dumps(doc).encode())

    return system.router.subscribe_internal(SUBJECT, on_request)
