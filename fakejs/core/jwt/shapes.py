"""nats-io/jwt's claim structs as Go's ``encoding/json`` reads a JWT's claims into them.

A claim whose fields have the wrong JSON types does not decode in
nats-io/jwt (``json.Unmarshal`` reports the first mismatch), so
nats-server refuses it: a user JWT's login, a preloaded account JWT.
:func:`check_claims` checks a claims object against the struct of its
kind (:data:`USER_CLAIMS`, :data:`ACCOUNT_CLAIMS`, :data:`OPERATOR_CLAIMS`)
and raises :class:`ShapeError` with Go's text (``json: cannot unmarshal
string into Go struct field UserClaims.nats.pub of type jwt.Permission``).
``null`` fits every type, unknown fields are ignored, a field's name
matches case-blind (Go prefers the exact name).  An account's
``signing_keys`` entries are strings or ``user_scope`` objects (another
``kind`` is ``unknown signing key scope``), a user's ``src`` a list of
strings or one string.  Imports, exports, mappings and the other account
fields fakejs does not read are not checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

INT64 = (-(1 << 63), (1 << 63) - 1)
UINT8 = (0, 255)


class ShapeError(ValueError):
    """A claim field of a JSON type its Go struct field cannot take; ``str()`` is Go's error."""


@dataclass(frozen=True)
class Scalar:
    """A Go scalar: ``string``, ``bool`` or an integer type within its range."""

    go_type: str
    json_kind: str  # "string", "bool" or "number"
    bounds: tuple[int, int] | None = None


@dataclass(frozen=True)
class ListOf:
    """A Go slice (``jwt.StringList``, ``[]jwt.TimeRange``...)."""

    go_type: str
    element: Shape


@dataclass(frozen=True)
class MapOf:
    """A Go map from strings (``jwt.RevocationList``)."""

    go_type: str
    element: Shape


@dataclass(frozen=True)
class Struct:
    """A Go struct: its JSON field names and their shapes."""

    go_type: str
    fields: Mapping[str, Shape]


@dataclass(frozen=True)
class Special:
    """A type with its own ``UnmarshalJSON``: ``jwt.CIDRList``, ``jwt.SigningKeys``."""

    go_type: str


Shape = Scalar | ListOf | MapOf | Struct | Special

STRING = Scalar("string", "string")
BOOL = Scalar("bool", "bool")
INT = Scalar("int", "number", INT64)
I64 = Scalar("int64", "number", INT64)
DURATION = Scalar("time.Duration", "number", INT64)
STRINGS = ListOf("jwt.StringList", STRING)
TAGS = ListOf("jwt.TagList", STRING)
CLAIMS_DATA: dict[str, Shape] = {
    "aud": STRING, "exp": I64, "jti": STRING, "iat": I64, "iss": STRING, "name": STRING, "nbf": I64, "sub": STRING,
}  # fmt: skip
GENERIC: dict[str, Shape] = {"tags": TAGS, "type": STRING, "version": INT}
PERMISSION = Struct("jwt.Permission", {"allow": STRINGS, "deny": STRINGS})
RESPONSE = Struct("jwt.ResponsePermission", {"max": INT, "ttl": DURATION})
TIME_RANGE = Struct("jwt.TimeRange", {"start": STRING, "end": STRING})
USER_PERMISSION_LIMITS: dict[str, Shape] = {
    "pub": PERMISSION, "sub": PERMISSION, "resp": RESPONSE,
    "src": Special("jwt.CIDRList"), "times": ListOf("[]jwt.TimeRange", TIME_RANGE), "times_location": STRING,
    "subs": I64, "data": I64, "payload": I64,
    "bearer_token": BOOL, "proxy_required": BOOL, "allowed_connection_types": STRINGS,
}  # fmt: skip
USER_SCOPE = Struct(
    "jwt.UserScope",
    {
        "kind": STRING,
        "key": STRING,
        "role": STRING,
        "template": Struct("jwt.UserPermissionLimits", USER_PERMISSION_LIMITS),
        "description": STRING,
    },
)
ACCOUNT_LIMITS: dict[str, Shape] = {
    "subs": I64, "data": I64, "payload": I64,
    "imports": I64, "exports": I64, "wildcards": BOOL, "disallow_bearer": BOOL, "conn": I64, "leaf": I64,
    "mem_storage": I64, "disk_storage": I64, "streams": I64, "consumer": I64, "max_ack_pending": I64,
    "mem_max_stream_bytes": I64, "disk_max_stream_bytes": I64, "max_bytes_required": BOOL,
}  # fmt: skip
USER_CLAIMS = Struct(
    "UserClaims",
    {**CLAIMS_DATA, "nats": Struct("jwt.User", {**USER_PERMISSION_LIMITS, "issuer_account": STRING, **GENERIC})},
)
ACCOUNT_CLAIMS = Struct(
    "AccountClaims",
    {
        **CLAIMS_DATA,
        "nats": Struct(
            "jwt.Account",
            {
                "limits": Struct("jwt.OperatorLimits", ACCOUNT_LIMITS),
                "signing_keys": Special("jwt.SigningKeys"),
                "revocations": MapOf("jwt.RevocationList", I64),
                "default_permissions": Struct(
                    "jwt.Permissions", {"pub": PERMISSION, "sub": PERMISSION, "resp": RESPONSE}
                ),
                "description": STRING,
                "info_url": STRING,
                **GENERIC,
            },
        ),
    },
)
OPERATOR_CLAIMS = Struct(
    "OperatorClaims",
    {
        **CLAIMS_DATA,
        "nats": Struct(
            "jwt.Operator",
            {
                "signing_keys": STRINGS,
                "account_server_url": STRING,
                "operator_service_urls": STRINGS,
                "system_account": STRING,
                "assert_server_version": STRING,
                "strict_signing_key_usage": BOOL,
                **GENERIC,
            },
        ),
    },
)
# What nats-io/jwt reads first of every claim, to know its kind and version.
IDENTIFIER_CLAIMS = Struct("jwt.identifier", {"type": STRING, "nats": Struct("jwt.GenericFields", GENERIC)})
IDENTIFIER = "identifier"
CLAIMS_BY_KIND = {
    "user": USER_CLAIMS,
    "account": ACCOUNT_CLAIMS,
    "operator": OPERATOR_CLAIMS,
    IDENTIFIER: IDENTIFIER_CLAIMS,
}


def json_kind(value: object) -> str:
    """The JSON kind Go's errors name: ``string``, ``number``, ``bool``, ``array``, ``object``."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def canonical(value: Mapping[str, Any], fields: Mapping[str, Shape]) -> dict[str, Any]:
    """An object's members by the struct field each decodes into (exact name first, else case-blind; last wins)."""
    by_fold = {name.casefold(): name for name in fields}
    result: dict[str, Any] = {}
    for key, member in value.items():
        name = key if key in fields else by_fold.get(key.casefold())
        if name is not None:
            result[name] = member
    return result


class _Checker:
    """One claim's check: the first mismatch, with the path Go names it by."""

    def __init__(self, root: str) -> None:
        self.root = root

    def mismatch(self, value: object, path: str, go_type: str, literal: bool = False) -> ShapeError:
        """Go's ``UnmarshalTypeError``: the JSON kind (a number's text when it does not fit), where, the Go type."""
        where = f"Go struct field {self.root}.{path}" if path else "Go value"
        kind = f"number {value}" if literal else json_kind(value)
        return ShapeError(f"json: cannot unmarshal {kind} into {where} of type {go_type}")

    def check(self, value: object, shape: Shape, path: str) -> None:
        if value is None:
            return
        if isinstance(shape, Scalar):
            self._scalar(value, shape, path)
        elif isinstance(shape, ListOf | MapOf):
            self._container(value, shape, path)
        elif isinstance(shape, Struct):
            if not isinstance(value, dict):
                raise self.mismatch(value, path, shape.go_type)
            for name, member in canonical(value, shape.fields).items():
                self.check(member, shape.fields[name], f"{path}.{name}" if path else name)
        elif shape.go_type == "jwt.CIDRList":
            if not isinstance(value, str):
                self.check(value, ListOf("[]string", STRING), path)
        else:
            self._signing_keys(value, path)

    def _scalar(self, value: object, shape: Scalar, path: str) -> None:
        if json_kind(value) != shape.json_kind:
            raise self.mismatch(value, path, shape.go_type)
        if shape.bounds is not None:
            low, high = shape.bounds
            if not isinstance(value, int) or not low <= value <= high:
                raise self.mismatch(value, path, shape.go_type, literal=True)

    def _container(self, value: object, shape: ListOf | MapOf, path: str) -> None:
        if isinstance(shape, ListOf) and isinstance(value, list):
            for element in value:
                self.check(element, shape.element, path)
        elif isinstance(shape, MapOf) and isinstance(value, dict):
            for element in value.values():
                self.check(element, shape.element, path)
        else:
            raise self.mismatch(value, path, shape.go_type)

    def _signing_keys(self, value: object, path: str) -> None:
        """``SigningKeys.UnmarshalJSON``: an array of keys and scopes; other elements are passed over."""
        if not isinstance(value, list):
            raise ShapeError(f"json: cannot unmarshal {json_kind(value)} into Go value of type []interface {{}}")
        for entry in value:
            if not isinstance(entry, dict):
                continue
            if entry.get("kind") != "user_scope":
                raise ShapeError(f"unknown signing key scope {_go_value(entry.get('type'))}")
            _Checker("UserScope").check(entry, USER_SCOPE, "")


def _go_value(value: object) -> str:
    """Go's ``%q`` of an ``interface{}`` from JSON: a string quoted, nothing ``%!q(<nil>)``."""
    if value is None:
        return "%!q(<nil>)"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return f"%!q({type(value).__name__}={value})"


def check_claims(claims: Mapping[str, Any], kind: str) -> None:
    """Check the claims of a JWT of ``kind`` against its Go struct (other kinds are not checked).

    ``kind`` :data:`IDENTIFIER` checks what every claim must have right: ``type`` and ``nats``'s
    ``tags``, ``type`` and ``version``.
    """
    shape = CLAIMS_BY_KIND.get(kind)
    if shape is not None:
        _Checker(shape.go_type).check(claims, shape, "")


def _normalized(value: Any, shape: Shape) -> Any:
    if isinstance(shape, Struct) and isinstance(value, dict):
        known = canonical(value, shape.fields)
        unknown = {k: v for k, v in value.items() if k not in shape.fields and k.casefold() not in _folded(shape)}
        return {**unknown, **{name: _normalized(member, shape.fields[name]) for name, member in known.items()}}
    return value


def _folded(shape: Struct) -> frozenset[str]:
    return frozenset(name.casefold() for name in shape.fields)


def normalized(claims: dict[str, Any], kind: str) -> dict[str, Any]:
    """The claims with each member under the name of the Go field it decodes into (``"NATS"`` read as ``nats``)."""
    shape = CLAIMS_BY_KIND.get(kind)
    result = _normalized(claims, shape) if shape is not None else claims
    return result if isinstance(result, dict) else claims
