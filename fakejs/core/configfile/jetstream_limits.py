"""``jetstream { limits { ... } }``: the server-wide JetStream limits, as ``parseJetStreamLimits`` reads them.

Only the ``batch`` block is served: ``max_inflight_per_stream``,
``max_inflight_total`` and ``timeout`` bound atomic and fast-ingest batches
alike (each kind counted on its own), ``max_msgs`` atomic batches only; nats-server
has no options of the fast batches' own.  The API limits
beside it are refused by name.  A value that is not a map ends the
``jetstream`` block, as in nats-server; a bad ``timeout`` is an error of its own.
"""

from __future__ import annotations

from fakejs.conf import Token
from fakejs.core.configfile.context import ConfigContext
from fakejs.core.configfile.values import go_type, want
from fakejs.core.options import ServerOptions
from fakejs.gocompat import gotime
from fakejs.gocompat.gotime import NS

# The API limits fakejs does not have yet.
REFUSED = ("max_ack_pending", "max_ha_assets", "max_request_batch", "duplicate_window")


def parse(token: Token, options: ServerOptions, context: ConfigContext) -> tuple[Token, str] | None:
    """Read the block into ``options``; the error that ends the ``jetstream`` block, if any."""
    if not isinstance(token.value, dict):
        return token, f"Expected a map to define JetStreamLimits, got {go_type(token.value)}"
    for key, member in token.value.items():
        lowered = key.lower()
        if lowered == "batch":
            stop = _batch(member, options, context)
            if stop is not None:
                return stop
        elif lowered in REFUSED:
            context.refuse(member, f"server-wide JetStream API limits (jetstream {{ limits {{ {key} }} }})")
        else:
            context.unknown(key, member)
    return None


def _batch(token: Token, options: ServerOptions, context: ConfigContext) -> tuple[Token, str] | None:
    if not isinstance(token.value, dict):
        return token, f"Expected a map to define batch limits, got {go_type(token.value)}"
    for key, member in token.value.items():
        lowered = key.lower()
        if lowered == "max_inflight_per_stream":
            options.jetstream_batch_inflight_per_stream = want(member, int)
        elif lowered == "max_inflight_total":
            options.jetstream_batch_inflight_total = want(member, int)
        elif lowered == "max_msgs":
            options.jetstream_batch_max_msgs = want(member, int)
        elif lowered == "timeout":
            try:
                options.jetstream_batch_timeout = gotime.parse_duration(want(member, str)) / NS
            except ValueError as exc:
                context.errors.append(str(exc))  # Go's ParseDuration error, reported without a position
        else:
            context.unknown(key, member)
    return None
