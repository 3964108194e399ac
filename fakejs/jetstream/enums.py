"""JetStream enumerations as nats-server reads them from JSON.

Each enum type in nats-server has its own ``UnmarshalJSON`` with its own
error text (``can not unmarshal "\\"bad\\""``, ``unknown priority policy:
"x"``...); the functions here take the decoded JSON value and return the
canonical string, or raise :class:`~fakejs.gocompat.gojson.GoJSONError` with that
text.  ``null`` is not special for these types: Go hands it to the
unmarshaller, which refuses it like any other unknown value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fakejs.gocompat.gojson import GoJSONError
from fakejs.gocompat.jsonvalue import plain_value, raw_text
from fakejs.protocol.writer import go_quote


def raw_json(value: Any) -> str:
    """The JSON text of a value as written (Go's ``UnmarshalJSON`` gets the raw bytes)."""
    return raw_text(value)


# A decoder of one enumeration: the decoded JSON value in, the canonical string out.
Decoder = Callable[[Any], str]


def _strict(choices: dict[str, str], *, fold: bool = False, message: str = "can not unmarshal {q}") -> Decoder:
    def decode(value: Any) -> str:
        text = raw_json(value)
        key = text.lower() if fold else text
        if key in choices:
            return choices[key]
        raise GoJSONError(message.format(q=go_quote(text), raw=text))

    return decode


retention: Decoder = _strict({'"limits"': "limits", '"interest"': "interest", '"workqueue"': "workqueue"})
discard: Decoder = _strict({'"old"': "old", '"new"': "new"}, fold=True)
storage: Decoder = _strict({'"memory"': "memory", '"file"': "file"})
persist_mode: Decoder = _strict({'"default"': "default", '""': "default", '"async"': "async"})
ack_policy: Decoder = _strict(
    {'"none"': "none", '"all"': "all", '"explicit"': "explicit", '"flow_control"': "flow_control"}
)
replay_policy: Decoder = _strict({'"instant"': "instant", '"original"': "original"})
deliver_policy: Decoder = _strict(
    {
        '"all"': "all",
        '"undefined"': "all",
        '"last"': "last",
        '"last_per_subject"': "last_per_subject",
        '"new"': "new",
        '"by_start_sequence"': "by_start_sequence",
        '"by_start_time"': "by_start_time",
    }
)
priority_policy: Decoder = _strict(
    {'"none"': "none", '"overflow"': "overflow", '"pinned_client"': "pinned_client", '"prioritized"': "prioritized"},
    message="unknown priority policy: {raw}",
)
consumer_action: Decoder = _strict(
    {'"create"': "create", '"update"': "update", '""': ""},
    message="unknown consumer action: {raw}",
)


def compression(value: Any) -> str:
    """``StoreCompression`` decodes a plain string first, then checks it."""
    value = plain_value(value)
    if value is not None and not isinstance(value, str):
        kind = "number" if isinstance(value, (int, float)) and not isinstance(value, bool) else type(value).__name__
        kind = {"bool": "bool", "list": "array", "dict": "object"}.get(kind, kind)
        raise GoJSONError(f"json: cannot unmarshal {kind} into Go value of type string")
    if value == "s2":
        return "s2"
    if value == "none":
        return "none"
    raise GoJSONError("unknown compression algorithm")
