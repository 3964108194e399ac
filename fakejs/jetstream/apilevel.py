"""The ``Nats-Required-Api-Level`` check every JetStream request goes through.

Used by the API dispatcher and by the requests a stream or consumer answers
itself (Direct Get, ``CONSUMER.MSG.NEXT``, ``CONSUMER.RESET``).
"""

from __future__ import annotations

from fakejs.core.options import API_LEVEL
from fakejs.protocol import headers as hdrs

REQUIRED_API_LEVEL = "Nats-Required-Api-Level"


def required_level(hdr: bytes | None) -> bool:
    """Whether the request asks for a higher API level than the server has."""
    value = hdrs.get(hdr, REQUIRED_API_LEVEL)
    if not value:
        return False
    try:
        return int(value) > API_LEVEL
    except ValueError:
        return True
