"""The ``tls {}`` block (top level, and inside ``websocket {}``): nats-server's keys, checks and error texts."""

from __future__ import annotations

from fakejs.conf import Token
from fakejs.core.configfile.context import ConfigContext
from fakejs.core.transport_config import TLSConfig


def tls_block(token: Token, context: ConfigContext) -> TLSConfig | None:
    """The block's settings, or ``None`` after reporting why it cannot be used."""
    context.refuse(token, "TLS")
    return None
