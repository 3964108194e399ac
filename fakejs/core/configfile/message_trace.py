"""An account's ``msg_trace`` (or ``trace_dest``): where sampled ``traceparent`` messages are traced.

nats-server's ``parseAccountMsgTrace``: a subject, or ``{ dest, sampling }``
with sampling an integer or a percentage (``"50%"``) in 1..100.  A
destination without sampling traces every message with the sampled flag;
sampling without a destination is ignored, with a warning.
"""

from __future__ import annotations

from fakejs.conf import Token
from fakejs.core.configfile.context import ConfigContext
from fakejs.core.configfile.values import go_type
from fakejs.core.subjects import is_valid_literal_subject

__all__ = ["MessageTraceSettings", "parse_message_trace"]

# (destination, sampling percentage)
MessageTraceSettings = tuple[str, int]


def _destination(token: Token, key: str, context: ConfigContext) -> str | None:
    value = token.value
    if not isinstance(value, str):
        context.error(token, f'Field "{key}" should be a string, got {go_type(value)}')
        return None
    if not is_valid_literal_subject(value):
        context.error(token, f'Trace destination "{value}" is not valid')
        return None
    return value


def _sampling(token: Token, key: str, context: ConfigContext) -> int | None:
    value = token.value
    if isinstance(value, str):
        try:
            value = int(value.removesuffix("%"))
        except ValueError:
            context.error(token, f'Invalid trace destination sampling value "{token.value}"')
            return None
    elif isinstance(value, bool) or not isinstance(value, int):
        context.error(
            token,
            f'Trace destination sampling field "{key}" should be an integer or a percentage, got {go_type(value)}',
        )
        return None
    if value <= 0 or value > 100:
        # nats-server's text, its spelling included.
        context.error(token, f"Ttrace destination sampling value {value} is invalid, needs to be [1..100]")
        return None
    return value


def _fields(token: Token, key: str, context: ConfigContext) -> tuple[str, int] | None:
    dest, sampling = "", 0
    assert isinstance(token.value, dict)
    for name, item in token.value.items():
        field = name.lower()
        if field == "dest":
            found = _destination(item, name, context)
            if found is None:
                return None
            dest = found
        elif field == "sampling":
            number = _sampling(item, name, context)
            if number is None:
                return None
            sampling = number
        elif not item.used_variable:
            context.error(item, f'Unknown field "{name}" parsing account message trace map/struct "{key}"')
            return None
    return dest, sampling


def parse_message_trace(token: Token, key: str, context: ConfigContext) -> MessageTraceSettings:
    """The account's trace destination and sampling (``("", 0)`` when none or in error)."""
    value = token.value
    if isinstance(value, str):
        dest = _destination(token, key, context)
        return (dest, 100) if dest else ("", 0)
    if not isinstance(value, dict):
        context.error(
            token, f'Expected account message trace "{key}" to be a string or a map/struct, got {go_type(value)}'
        )
        return "", 0
    found = _fields(token, key, context)
    if found is None:
        return "", 0
    dest, sampling = found
    if dest and not sampling:
        return dest, 100
    if sampling and not dest:
        context.warning(token, "Trace destination sampling ignored since no destination was set")
        return "", 0
    return dest, sampling
