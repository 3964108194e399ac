"""A nats-py consumer run under ``fakejs conformance run`` (see the client command contract).

Configured by the contract's environment variables (``NATS_URL``,
``FAKEJS_STREAM``, ``FAKEJS_CONSUMER``, ``FAKEJS_MODE``, ``FAKEJS_ACK``,
``FAKEJS_GROUP``, ``FAKEJS_MAX_MESSAGES``, ``FAKEJS_EXPIRES_MS``,
``FAKEJS_HEARTBEAT_MS``, ``FAKEJS_DURATION_MS``); prints one JSON line,
``{"received": N, "errors": [...]}``, and exits 0.

nats-py has no consume loop: ``consume`` mode is the usage its documentation
shows, a ``while`` loop of ``PullSubscription.fetch()`` that goes on after
``nats.errors.TimeoutError`` (an empty pull, not an error).  What nats-py
cannot do, and this program therefore does not do:

- priority groups: ``fetch()`` takes no group, so ``FAKEJS_GROUP`` is
  reported on stderr and the pulls carry none;
- a pull-based ordered consumer: ``ordered`` mode uses nats-py's ordered
  consumer, ``js.subscribe(..., ordered_consumer=True)``, which is push based
  (flow control and idle heartbeats on a deliver subject).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, for tests.conformance

import nats
import nats.errors
from nats.aio.msg import Msg
from nats.js import JetStreamContext, api

from tests.conformance.contract import Settings

ERRORS_KEPT = 100  # error texts listed in the JSON line; later ones are counted in a last entry
ERROR_PAUSE = 0.1  # seconds between a fetch that raised (not a timeout) and the next one


class Outcome:
    """What the JSON line reports: messages handled and the errors the library raised."""

    def __init__(self) -> None:
        self.received = 0
        self.errors: list[str] = []
        self.dropped = 0

    def error(self, exc: BaseException | str) -> None:
        text = exc if isinstance(exc, str) else f"{type(exc).__name__}: {exc}".rstrip(": ")
        if len(self.errors) < ERRORS_KEPT:
            self.errors.append(text)
        else:
            self.dropped += 1

    def line(self) -> str:
        errors = self.errors + ([f"... {self.dropped} more errors"] if self.dropped else [])
        return json.dumps({"received": self.received, "errors": errors})


async def handle(msg: Msg, ack: str) -> None:
    """Answer one message as ``FAKEJS_ACK`` asks."""
    if ack == "ack":
        await msg.ack()
    elif ack == "sync":
        await msg.ack_sync()
    elif ack == "term":
        await msg.term()


async def consume(js: JetStreamContext, settings: Settings, outcome: Outcome) -> None:
    """A ``while`` loop of ``fetch()`` until the duration is over (the last fetch may run past it)."""
    if settings.group:
        print(f"nats-py fetch() has no priority group: pulling without {settings.group!r}", file=sys.stderr)
    psub = await js.pull_subscribe("", durable=settings.consumer, stream=settings.stream)
    end = time.monotonic() + settings.duration
    while time.monotonic() < end:
        try:
            msgs = await psub.fetch(
                batch=settings.max_messages,
                timeout=settings.expires,
                heartbeat=settings.heartbeat or None,
            )
        except nats.errors.TimeoutError:
            continue  # nothing arrived before expires: pull again
        except Exception as exc:  # the contract records whatever the library raises
            outcome.error(exc)
            await asyncio.sleep(ERROR_PAUSE)
            continue
        for msg in msgs:
            outcome.received += 1
            try:
                await handle(msg, settings.ack)
            except Exception as exc:
                outcome.error(exc)
    await psub.unsubscribe()


async def ordered(js: JetStreamContext, settings: Settings, outcome: Outcome) -> None:
    """nats-py's ordered consumer (push based) on every subject of the stream, for the duration."""
    info = await js.stream_info(settings.stream)
    subjects = list(info.config.subjects or [])
    config = api.ConsumerConfig(filter_subjects=subjects) if len(subjects) > 1 else None

    async def on_message(msg: Msg) -> None:
        outcome.received += 1
        try:
            await handle(msg, settings.ack)
        except Exception as exc:
            outcome.error(exc)

    sub = await js.subscribe(
        subjects[0] if len(subjects) == 1 else "",
        stream=settings.stream,
        config=config,
        cb=on_message,
        ordered_consumer=True,
        idle_heartbeat=settings.heartbeat or None,
    )
    await asyncio.sleep(settings.duration)
    await sub.unsubscribe()


async def run(settings: Settings) -> Outcome:
    outcome = Outcome()

    async def on_error(exc: Exception) -> None:
        outcome.error(exc)

    nc = await nats.connect(settings.url, name="conformance-client", error_cb=on_error)
    try:
        js = nc.jetstream()
        if settings.mode == "ordered":
            await ordered(js, settings, outcome)
        else:
            await consume(js, settings, outcome)
    except Exception as exc:
        outcome.error(exc)
    finally:
        await nc.close()
    return outcome


def main(env: dict[str, Any] | None = None) -> int:
    settings = Settings.from_env(dict(os.environ) if env is None else env)
    outcome = asyncio.run(run(settings))
    print(outcome.line(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
