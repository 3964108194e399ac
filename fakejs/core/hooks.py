"""Named hook points: where the server lets a test's faults change an event.

Domain code (client sessions, consumers, the JetStream API) calls
:meth:`Hooks.fire` at these points; a :class:`Hooks` implementation
(:class:`fakejs.testkit.faults.Faults`) decides whether a fault matches and
what change the caller must make.  Without faults the server runs with
:class:`NoHooks`, and every point costs one truth test.  Core defines the
points and the interface so that it never imports the test kit.
"""

from __future__ import annotations

from typing import Any, Protocol

# Hook point -> (what it is, the event changes a fault may make there).
HOOK_POINTS: dict[str, tuple[str, frozenset[str]]] = {
    "client.connect": ("a client's CONNECT was accepted", frozenset({"disconnect", "drop"})),
    "client.ping": ("a client's PING arrived", frozenset({"ignore"})),
    "pull.request": ("a pull request reached a consumer", frozenset({"reply_status", "ignore"})),
    "consumer.deliver": ("a message is about to be delivered", frozenset({"drop", "delay"})),
    "consumer.heartbeat": ("an idle heartbeat is about to be sent", frozenset({"drop"})),
    "api.request": ("a $JS.API request arrived", frozenset({"fail_api", "ignore"})),
    "api.reply": ("a $JS.API reply is about to be sent", frozenset({"rewrite"})),
    "leaf.connect": ("a leaf connection's handshake is done, before it comes up", frozenset({"drop"})),
}

# Keys a fault may match on, per hook point (values are exact or shell-style patterns).
MATCH_KEYS: dict[str, frozenset[str]] = {
    "client.connect": frozenset({"cid", "name"}),
    "client.ping": frozenset({"cid", "name"}),
    "pull.request": frozenset({"stream", "consumer"}),
    "consumer.deliver": frozenset({"stream", "consumer", "subject"}),
    "consumer.heartbeat": frozenset({"stream", "consumer"}),
    "api.request": frozenset({"subject"}),
    "api.reply": frozenset({"subject"}),
    "leaf.connect": frozenset({"remote", "side"}),
}


class HookHit(Protocol):
    """A fault firing at a hook point: the event change (``change``, ``args``) the caller must make."""

    @property
    def change(self) -> str: ...

    @property
    def args(self) -> dict[str, Any]: ...


class Hooks(Protocol):
    """What domain code calls at a hook point."""

    def __bool__(self) -> bool:
        """False while nothing is installed, so a hook costs one truth test."""
        ...

    def fire(self, point: str, **context: Any) -> HookHit | None:
        """The change a matching fault asks for at ``point``, or None."""
        ...

    def settle(self) -> None:
        """Run now the actions that faults fired during the current event."""
        ...


class NoHooks:
    """The hooks of a server without a test kit: nothing ever fires."""

    def __bool__(self) -> bool:
        return False

    def fire(self, point: str, **context: Any) -> HookHit | None:
        return None

    def settle(self) -> None:
        return None


class WireTap(Protocol):
    """What a client session reports of its traffic when the test kit watches clients.

    The conformance watch (:mod:`fakejs.testkit.conformance`) judges a client
    by what it publishes and subscribes and by what it is sent.  Sessions call
    these after the server has accepted the operation (``owner`` is the
    session); without a watch the broker's tap is ``None``, and each point
    costs one test against ``None``.
    """

    def __bool__(self) -> bool: ...

    def published(self, owner: Any, subject: str, reply: str, headers: bytes | None, payload: bytes) -> None:
        """A client published (``PUB``/``HPUB``)."""

    def subscribed(self, owner: Any, subject: str) -> None:
        """A client subscribed."""

    def delivered(
        self, owner: Any, pattern: str, subject: str, reply: str, headers: bytes | None, payload: bytes
    ) -> None:
        """A message went to a client on its subscription ``pattern``."""

    def closed(self, owner: Any) -> None:
        """A client's connection closed."""
