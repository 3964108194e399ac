"""Routes: a ``$JS.API`` subject pattern with named tokens, its response type, its handler and how it is served.

A pattern such as ``$JS.API.CONSUMER.CREATE.{stream}.{consumer}.{filter...}``
is matched like a subscription (``{name}`` is one token, ``{name...}`` the
rest of the subject) and binds the named tokens, which the handler receives
as keyword arguments.  :class:`RouteTable` finds the route for a subject
and knows the subject prefixes its rows decline.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from fakejs.core.subjects import SubscriptionIndex
from fakejs.jetstream.api.request import Request
from fakejs.jetstream.service import JetStream

RESPONSE_TYPE_PREFIX = "io.nats.jetstream.api.v1."

ServedBy = Literal["api", "stream", "consumer"]
# Whether a cluster carries the request out as a proposal of its meta layer: never, always,
# or only for a stream with more than one replica (a purge).
Proposed = Literal["", "always", "replicated"]


@dataclass(frozen=True)
class Uncounted:
    """A successful reply nats-server sends as a plain message: not counted, no audit advisory."""

    fields: dict[str, Any]


Reply = dict[str, Any] | Uncounted
Handler = Callable[..., Reply]

_PART = re.compile(r"\{[^}]*\}|[^.{}]+")  # a named token (which may hold dots) or a literal one


def _parts(pattern: str) -> list[str]:
    """The pattern's tokens (a ``{name...}`` token holds dots of its own)."""
    return _PART.findall(pattern)


def _token(part: str) -> tuple[str, bool] | None:
    """``{name}`` -> (name, False); ``{name...}`` -> (name, True); a literal -> None."""
    if not (part.startswith("{") and part.endswith("}")):
        return None
    name = part[1:-1]
    return (name[:-3], True) if name.endswith("...") else (name, False)


@dataclass(frozen=True, eq=False)
class Route:
    """One row of the route table: everything the dispatcher needs to know about one endpoint.

    The fields are described with the table, in :mod:`~fakejs.jetstream.api.routes`.
    A handler gets the subject's named tokens as keyword arguments -- or,
    for a request an asset hands over, the asset itself (``consumer=...``).
    """

    pattern: str  # the subject with named tokens
    response_type: str  # the reply's ``type`` without RESPONSE_TYPE_PREFIX
    handler: Handler | None
    served_by: ServedBy = "api"  # or the asset receiving it on its own subscription
    asset_request: str = ""  # what the asset hands over to ``handler``
    declined_prefix: str = ""  # left to the asset (``jsDirectGetPre``, ``jsRequestNextPre``)
    level_first: bool = True  # ``Nats-Required-Api-Level`` checked before the handler runs
    error_extras: Mapping[str, Any] = field(default_factory=dict)  # an error reply's fields after ``error``
    info_queue: bool = False  # nats-server's info queue rather than its request queue
    offline_answer: bool = False  # "offline" for an asset whose server shut down in order
    proposed: Proposed = ""  # carried out as a cluster proposal: its audit leaves the request out
    subject: str = field(init=False)  # the pattern as a subscription subject
    # The named tokens: (position, name, takes the rest of the subject), worked out once.
    named: tuple[tuple[int, str, bool], ...] = field(init=False, repr=False)
    queue = ""  # routes live in a subscription index, which reads subject and queue

    def __post_init__(self) -> None:
        parts = []
        named_tokens = []
        for position, part in enumerate(_parts(self.pattern)):
            named = _token(part)
            parts.append(part if named is None else (">" if named[1] else "*"))
            if named is not None:
                named_tokens.append((position, *named))
        object.__setattr__(self, "subject", ".".join(parts))
        object.__setattr__(self, "named", tuple(named_tokens))
        object.__setattr__(self, "error_extras", MappingProxyType(dict(self.error_extras)))

    @property
    def response(self) -> str:
        """The reply's ``type`` field."""
        return RESPONSE_TYPE_PREFIX + self.response_type

    def bind(self, subject: str) -> dict[str, str]:
        """The named tokens of a subject this route matches."""
        tokens = subject.split(".")
        bound = {}
        for i, name, rest in self.named:  # a loop, not a comprehension: one call fewer per request
            bound[name] = ".".join(tokens[i:]) if rest else tokens[i]
        return bound

    def call(self, js: JetStream, request: Request) -> Reply:
        """Run the handler with the request subject's named tokens."""
        assert self.handler is not None, f"{self.pattern} is answered by its {self.served_by}"
        return self.handler(js, request, **self.bind(request.subject))

    def call_for(self, js: JetStream, request: Request, asset: Any) -> dict[str, Any]:
        """Run the handler for a request the serving asset handed over (the asset instead of tokens)."""
        assert self.handler is not None and self.served_by != "api", self.pattern
        body = self.handler(js, request, **{self.served_by: asset})
        return body.fields if isinstance(body, Uncounted) else body


class RouteTable:
    """Subject patterns to routes (a subscription index over them)."""

    def __init__(self, routes: Iterable[Route]) -> None:
        self.routes = tuple(routes)
        self._index = SubscriptionIndex()
        for route in self.routes:
            self._index.insert(route)
        # The subject prefixes left to the streams and consumers serving them (see declines).
        self.declined_prefixes = tuple(
            dict.fromkeys(route.declined_prefix for route in self.routes if route.declined_prefix)
        )

    def declines(self, subject: str) -> bool:
        """Whether the subject is left to the stream or consumer serving it (even where no row matches it)."""
        return subject.startswith(self.declined_prefixes)

    def find(self, subject: str) -> Route | None:
        """The one route matching the subject (None: no row, or overlapping rows)."""
        result = self._index.match(subject)
        return result.psubs[0] if len(result.psubs) == 1 else None
