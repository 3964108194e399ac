"""One ``$JS.API`` request as a handler sees it, and the ways nats-server decodes its body.

nats-server decodes request bodies in a few different ways depending on
the endpoint (strict ``json.Decoder`` over a stream of values, plain
``json.Unmarshal``, "ignored unless it looks like JSON", "must be empty");
each is a method here so handlers say which one they use.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fakejs.gocompat.gojson import GoJSONError, Struct, decode_request, loads, unmarshal
from fakejs.jetstream.apilevel import required_level
from fakejs.jetstream.errors import api_error


@dataclass
class Request:
    """A ``$JS.API`` request: its subject, reply subject, headers and body, and who sent it.

    Handlers decode the body with the method nats-server uses for their endpoint.
    """

    subject: str
    reply: str
    hdr: bytes | None
    payload: bytes
    reply_headers: bytes | None = None  # set by a handler whose reply carries headers
    # Told (subject, error) when the body fails the strict decoding: nats-server warns of it.
    on_invalid: Callable[[str, str], None] | None = None
    # The client that sent it (a session), for the audit advisory; None when the server asks itself.
    origin: object = None

    def check_level(self) -> None:
        """Refuse a request that needs a higher API level than the server's."""
        if required_level(self.hdr):
            raise api_error("JSRequiredApiLevelErr")

    def is_json_object_or_array(self) -> bool:
        body = self.payload.lstrip(b" \t\r\n")
        return body[:1] in (b"{", b"[")

    def is_empty(self) -> bool:
        """nats-server's ``isEmptyRequest``: nothing, ``{}``, or JSON for an empty object."""
        if not self.payload or self.payload == b"{}":
            return True
        body = self.payload.lstrip(b" \t\r\n")
        if body[:1] == b"{" and body[1:].lstrip(b" \t\r\n")[:1] == b'"':
            return False  # an object with a key, or not JSON at all: not empty either way, no parse
        try:
            value = loads(self.payload)
        except GoJSONError:
            return False
        return isinstance(value, dict) and not value

    def decode(self, schema: Struct) -> dict[str, Any]:
        """Decode the body as nats-server's ``json.Decoder`` does (``unmarshalRequest``), or raise the 10025 error."""
        try:
            return decode_request(schema, self.payload)
        except GoJSONError as exc:
            if self.on_invalid is not None:
                self.on_invalid(self.subject, str(exc))
            raise api_error("JSInvalidJSONErr", err=str(exc)) from None

    def decode_if_json(self, schema: Struct) -> dict[str, Any]:
        """Bodies that are not a JSON object or array are ignored (``isJSONObjectOrArray``)."""
        return self.decode(schema) if self.is_json_object_or_array() else {}

    def unmarshal(self, schema: Struct) -> dict[str, Any]:
        """Decode the body with ``json.Unmarshal`` (one value, unknown fields ignored), or raise 10025."""
        try:
            return unmarshal(schema, self.payload)
        except GoJSONError as exc:
            raise api_error("JSInvalidJSONErr", err=str(exc)) from None
