"""The client command contract of ``fakejs conformance run``, as a client program reads it.

The runner gives a client program its work in environment variables
(``docs/conformance-run.md``); every program here reads them through
:meth:`Settings.from_env`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Settings:
    """The contract's environment variables, read once."""

    url: str
    stream: str
    consumer: str
    mode: str
    ack: str
    group: str
    max_messages: int
    expires: float  # seconds
    heartbeat: float  # seconds
    duration: float  # seconds

    @classmethod
    def from_env(cls, env: dict[str, str]) -> Settings:
        return cls(
            url=env.get("NATS_URL", "nats://127.0.0.1:4222"),
            stream=env["FAKEJS_STREAM"],
            consumer=env.get("FAKEJS_CONSUMER", ""),
            mode=env.get("FAKEJS_MODE", "consume"),
            ack=env.get("FAKEJS_ACK", "ack"),
            group=env.get("FAKEJS_GROUP", ""),
            max_messages=int(env.get("FAKEJS_MAX_MESSAGES", "10")),
            expires=int(env.get("FAKEJS_EXPIRES_MS", "2000")) / 1000,
            heartbeat=int(env.get("FAKEJS_HEARTBEAT_MS", "500")) / 1000,
            duration=int(env.get("FAKEJS_DURATION_MS", "2500")) / 1000,
        )
