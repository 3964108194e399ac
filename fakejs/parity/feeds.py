"""Waiting for what happens after a reply: mirrors, sources and fired schedules.

A stream fed by a mirror or sources copies messages after the publish was
acknowledged, on both servers, and a schedule with ``@at`` in the past fires
right after it is stored.  Once a sequence has such a stream, or sends a
schedule, every operation is followed by :func:`settle`: both servers list
their streams (``$JS.API.STREAM.LIST``), in lockstep so their API counters
stay equal, until on each server every mirror and source reports ``lag`` 0
and has been active, and two consecutive listings 50 ms apart are equal --
or a deadline passes (a mirror of a stream that does not exist never gets
there; both servers then show it the same way).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from nats.aio.client import Client

from fakejs.parity.normalize import payload_view

SETTLE_LIMIT = 3.0  # seconds
SETTLE_INTERVAL = 0.05


def feeds_later(op: dict[str, Any]) -> bool:
    """Whether ``op`` may change state after its reply (a fed stream is made, or a schedule sent)."""
    if op["op"] in ("stream.create", "stream.update"):
        body = op.get("body") or {}
        return bool(body.get("mirror") or body.get("sources"))
    return bool(op["op"] == "schedule")


async def _listing(nc: Client) -> Any:
    try:
        msg = await nc.request("$JS.API.STREAM.LIST", b"{}", timeout=2.0)
    except Exception as exc:  # noqa: BLE001 - a failed listing is a state like any other
        return {"failure": type(exc).__name__}
    return payload_view(msg.data)


def _links(listing: Any) -> list[dict[str, Any]]:
    """Every mirror and source info block in a STREAM.LIST reply."""
    if not isinstance(listing, dict):
        return []
    links: list[dict[str, Any]] = []
    for stream in listing.get("streams") or []:
        if isinstance(stream.get("mirror"), dict):
            links.append(stream["mirror"])
        links.extend(source for source in stream.get("sources") or [] if isinstance(source, dict))
    return links


def caught_up(listing: Any) -> bool:
    """Every link has no lag, and has been active (or reports an error)."""
    return all(link.get("lag") == 0 and (link.get("active", -1) >= 0 or "error" in link) for link in _links(listing))


async def settle(clients: list[Client], limit: float = SETTLE_LIMIT) -> None:
    """Poll both servers in lockstep until each is caught up and stable, or ``limit`` seconds pass."""
    deadline = time.monotonic() + limit
    previous: list[Any] = [None] * len(clients)
    while True:
        listings = await asyncio.gather(*(_listing(nc) for nc in clients))
        settled = [now == before and caught_up(now) for now, before in zip(listings, previous)]
        previous = list(listings)
        if all(settled) or time.monotonic() > deadline:
            return
        await asyncio.sleep(SETTLE_INTERVAL)
