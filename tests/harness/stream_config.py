"""Stream create and update requests, and the replies nats-server gives them: echoes normalised, errors whole."""

from __future__ import annotations

from typing import Any

from tests.harness.js import api, normalize
from tests.harness.streams import EMPTY_STATE

CREATE = "io.nats.jetstream.api.v1.stream_create_response"
UPDATE = "io.nats.jetstream.api.v1.stream_update_response"


def created(cfg: dict[str, Any], state: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """A whole normalised successful create reply."""
    return {
        "type": CREATE,
        "config": cfg,
        "created": "<ts>",
        "state": state or EMPTY_STATE,
        **extra,
        "ts": "<ts>",
        "did_create": True,
    }


def updated(cfg: dict[str, Any], state: dict[str, Any] | None = None) -> dict[str, Any]:
    """A whole normalised successful update reply."""
    return {"type": UPDATE, "config": cfg, "created": "<ts>", "state": state or EMPTY_STATE, "ts": "<ts>"}


def error(code: int, err_code: int, description: str, kind: str = CREATE) -> dict[str, Any]:
    return {"type": kind, "error": {"code": code, "err_code": err_code, "description": description}}


def invalid(description: str, kind: str = CREATE) -> dict[str, Any]:
    """The catch-all invalid stream config error (10052)."""
    return error(500, 10052, description, kind)


async def create(nc, body: Any, name: str | None = None) -> dict:
    if name is None:
        name = body["name"]
    return normalize(await api(nc, f"$JS.API.STREAM.CREATE.{name}", body))


async def update(nc, body: Any, name: str | None = None) -> dict:
    if name is None:
        name = body["name"]
    return normalize(await api(nc, f"$JS.API.STREAM.UPDATE.{name}", body))
