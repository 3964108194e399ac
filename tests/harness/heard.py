"""What a client's subscriptions heard: JSON events (advisories, system events), waited for by subject.

JetStream's advisories go out on ``$JS.EVENT.ADVISORY.>`` (:data:`ADVISORY`); :func:`assert_event` checks the
head every one of them starts with.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from nats.aio.client import Client
from nats.aio.msg import Msg

from tests.harness.wait import WAIT, eventually

ADVISORY = "$JS.EVENT.ADVISORY."
AUDIT = ADVISORY + "API"
ADVISORY_TYPE = "io.nats.jetstream.advisory.v1."  # the ``type`` of each advisory, followed by its kind
EVENT_ID = re.compile(r"[0-9A-Za-z]{22}")  # an advisory's ``id``: a NUID


def assert_event(doc: dict[str, Any], kind: str, keys: list[str]) -> None:
    """An advisory of ``kind``: ``type``, ``id`` and ``timestamp`` first, then ``keys`` in this order."""
    assert list(doc) == ["type", "id", "timestamp", *keys], doc
    assert doc["type"] == ADVISORY_TYPE + kind, doc
    assert EVENT_ID.fullmatch(doc["id"]), doc


class Heard:
    """The messages given to :meth:`add` (a subscription's callback), read as JSON documents by subject.

    ``nc`` is the client that subscribed, kept for the requests a test sends through it.
    """

    def __init__(self, nc: Client | None = None) -> None:
        self.nc = nc
        self.msgs: list[Msg] = []

    async def add(self, msg: Msg) -> None:
        self.msgs.append(msg)

    def on(self, subject: str) -> list[dict[str, Any]]:
        return [json.loads(m.data) for m in self.msgs if m.subject == subject]

    async def first(self, subject: str, timeout: float = WAIT) -> dict[str, Any]:
        """The first document on ``subject``, once one came."""
        found = await eventually(
            lambda: asyncio.sleep(0, self.on(subject)), what=f"an event on {subject}", timeout=timeout
        )
        return found[0]

    async def audit_of(self, subject: str) -> dict[str, Any]:
        """The latest API audit advisory of a request on ``subject``, once one came."""

        def audits() -> list[dict[str, Any]]:
            return [doc for doc in self.on(AUDIT) if doc["subject"] == subject]

        return (await eventually(lambda: asyncio.sleep(0, audits()), what=f"the audit of {subject}"))[-1]
