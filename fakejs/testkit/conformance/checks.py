"""What a new pull must satisfy, given its loop's state and the consumer's configuration.

Each check returns ``(rule id, detail)`` findings; the watch turns them into
violations with the pull's bytes as evidence.  A check reads the loop as it
was before the pull is added.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fakejs.gocompat.gotime import NS
from fakejs.testkit.conformance.loops import PullLoop, Trigger
from fakejs.testkit.conformance.rules import Settings
from fakejs.testkit.conformance.wire import PullRequest

Finding = tuple[str, str]
LONG_EXPIRES = 30.0  # ADR-37: heartbeats on by default for pulls that wait longer


def _seconds(value: float) -> str:
    return f"{value:g} s"


def limits(request: PullRequest, config: Mapping[str, Any] | None) -> list[Finding]:
    """``pull-limits``: the consumer's own bounds on a pull, and a batch with max_bytes."""
    found: list[Finding] = []
    if config is not None:
        max_batch = config.get("max_batch", 0)
        if max_batch and request.batch > max_batch:
            found.append(("pull-limits", f"batch {request.batch} over the consumer's max_batch {max_batch}"))
        max_bytes = config.get("max_bytes", 0)
        if max_bytes and request.max_bytes > max_bytes:
            found.append(("pull-limits", f"max_bytes {request.max_bytes} over the consumer's max_bytes {max_bytes}"))
        max_expires = config.get("max_expires", 0) / NS
        if max_expires and request.expires > max_expires:
            found.append(
                (
                    "pull-limits",
                    f"expires {_seconds(request.expires)} over the consumer's max_expires {_seconds(max_expires)}",
                )
            )
    if request.max_bytes and request.batch <= 1:
        found.append(("pull-limits", "max_bytes without a batch: the server sends one message and ends the pull"))
    return found


def expiry(request: PullRequest) -> list[Finding]:
    """``pull-expires``: a waiting pull ends on its own."""
    if request.no_wait or request.expires > 0:
        return []
    return [("pull-expires", "a waiting pull without expires")]


def heartbeats(request: PullRequest, consuming: bool) -> list[Finding]:
    """``heartbeat-configured``."""
    if request.heartbeat > 0 or request.no_wait:
        return []
    if request.expires > LONG_EXPIRES:
        return [("heartbeat-configured", f"expires {_seconds(request.expires)} without idle_heartbeat")]
    if consuming:
        return [("heartbeat-configured", "a consume loop's pull without idle_heartbeat")]
    return []


def buffering(request: PullRequest, loop: PullLoop, settings: Settings) -> list[Finding]:
    """``pull-buffer``, ``pull-threshold`` and the over-pull half of ``pending-reconcile``."""
    by_bytes = request.max_bytes > 0
    owed = loop.owed_bytes if by_bytes else loop.owed_messages
    asked = request.max_bytes if by_bytes else request.batch
    buffer = loop.buffer_bytes if by_bytes else loop.buffer_messages
    unit = "bytes" if by_bytes else "messages"
    if owed <= 0 or buffer <= 0 or loop.absorbed:
        return []
    found: list[Finding] = []
    if owed + asked > buffer:
        rule = "pending-reconcile" if loop.pending_status is not None else "pull-buffer"
        found.append(
            (rule, f"asked for {asked} {unit} while {owed} still owed: {owed + asked} over a buffer of {buffer}")
        )
    if owed > buffer * settings.threshold:
        found.append(
            (
                "pull-threshold",
                f"topped up while {owed} of a {buffer} {unit} buffer still owed (threshold {buffer * settings.threshold:g})",
            )
        )
    return found


def crossed(trigger: Trigger, now: float, settings: Settings) -> bool:
    """Whether a pull may have been sent before the client read ``trigger`` (only the first, and soon)."""
    return trigger.pulls_since == 0 and now - trigger.at < settings.race


def after_statuses(request: PullRequest, loop: PullLoop, now: float, settings: Settings) -> list[Finding]:
    """What the statuses sent to the loop ask of its next pulls."""
    found: list[Finding] = []
    terminal = loop.terminal
    if terminal is not None and not crossed(terminal, now, settings):
        found.append(("terminal-stops", f"pulled again after {terminal.value}"))
    backoff = loop.max_waiting
    if backoff is not None and now - backoff.at < settings.backoff:
        waited = now - backoff.at
        found.append(
            ("max-waiting-backoff", f"pulled again {_seconds(round(waited, 6))} after 409 Exceeded MaxWaiting")
        )
    unpinned = loop.unpinned
    refused = unpinned is not None and request.pin_id == unpinned.value
    if unpinned is not None and refused and request.pin_id and not crossed(unpinned, now, settings):
        found.append(("pin-dropped-on-423", f"pulled with the refused pin id {unpinned.value}"))
    pinned = loop.pinned
    echoed = pinned is not None and request.pin_id == pinned.value
    if pinned is not None and request.group and not echoed and not crossed(pinned, now, settings):
        carried = f"id {request.pin_id!r}" if request.pin_id else "no id"
        found.append(("pin-id-echoed", f"pulled with {carried} after Nats-Pin-Id {pinned.value}"))
    return found
