"""Authorization callouts on both targets: a service answering the requests, and raw logins the service decides."""

from __future__ import annotations

import json
from typing import Any

from fakejs.testkit.jwt import AUTH_CALLOUT_SUBJECT, CalloutService
from tests.harness.raw import RawClient
from tests.harness.targets import Target
from tests.harness.wait import WAIT


async def answer_callouts(nc: Any, service: CalloutService, headers: list[Any] | None = None) -> None:
    """Subscribe ``nc`` to the callout subject, ``service`` answering each request (its headers kept in ``headers``)."""

    async def on_request(msg: Any) -> None:
        if headers is not None:
            headers.append(msg.headers)
        await msg.respond(service.answer(msg.data, msg.headers))

    await nc.subscribe(AUTH_CALLOUT_SUBJECT, cb=on_request)
    await nc.flush()


async def sentinel_login(target: Target, jwt: str, password: str) -> RawClient:
    """A raw client showing ``jwt`` (a bearer's: no signature) and ``bob``'s ``password``."""
    client = await RawClient.connect(target.host, target.port)
    connect = {"verbose": False, "pedantic": False, "jwt": jwt, "user": "bob", "pass": password}
    await client.send(b"CONNECT " + json.dumps({**connect, "protocol": 1, "headers": True}).encode() + b"\r\n")
    return client


async def user_info(client: RawClient) -> dict[str, Any]:
    """``$SYS.REQ.USER.INFO``'s ``data`` for ``client``, asked raw."""
    await client.send(b"SUB _INBOX.me 1\r\nPUB $SYS.REQ.USER.INFO _INBOX.me 0\r\n\r\n")
    data = await client.read_until(b"}}\r\n", timeout=WAIT)
    body = data[data.rindex(b"\r\n", 0, len(data) - 2) + 2 : -2]
    info: dict[str, Any] = json.loads(body)["data"]
    return info
