"""Servers of both kinds started from the same configuration text.

The real server gets the text as its ``-c`` file (after the harness's own
``listen`` and ``jetstream`` lines); fakejs gets what ``fakejs -c FILE``
makes of it, laid over the same harness options, and fails the test if it
would refuse the text.  :func:`configured_servers` hands a test a
``start(config)`` that does this for the test's target kind, each server on
its own store directory, all stopped at the end.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from fakejs import ServerOptions
from fakejs.core.configfile.load import load_text
from tests.harness.targets import (
    REAL_BINARY,
    REAL_MISSING_REASON,
    FakeTarget,
    RealTarget,
    Settings,
    Target,
    stop_target,
)

Start = Callable[[str], Awaitable[Target]]


def configure(text: str, options: ServerOptions) -> None:
    """What ``fakejs -c FILE`` makes of the text, laid over ``options``."""
    loaded = load_text(text, base=options)
    assert not loaded.problem_text(), loaded.problem_text()


class ConfiguredFake(FakeTarget):
    def __init__(self, config: str, store_dir: str, settings: Settings | None = None) -> None:
        super().__init__(settings or Settings(), store_dir)
        self.config = config

    def options(self) -> ServerOptions:
        options = super().options()
        configure(self.config, options)
        return options


class ConfiguredReal(RealTarget):
    def __init__(self, config: str, store_dir: str, settings: Settings | None = None) -> None:
        super().__init__(settings or Settings(), store_dir)
        self.config = config

    def config_text(self) -> str:
        return super().config_text() + self.config


@asynccontextmanager
async def configured_servers(
    target_kind: str, tmp_path: Path, settings: Settings | None = None
) -> AsyncIterator[Start]:
    """``start(config)`` for servers of ``target_kind`` (the real one skipped when its binary is missing)."""
    if target_kind == "real" and REAL_BINARY is None:
        pytest.skip(REAL_MISSING_REASON)
    started: list[Target] = []

    async def start(config: str) -> Target:
        store = tmp_path / f"store{len(started)}"
        store.mkdir()
        kind = ConfiguredFake if target_kind == "fake" else ConfiguredReal
        target: Target = kind(config, str(store), settings)
        await target.start()
        started.append(target)
        return target

    try:
        yield start
    finally:
        for target in started:
            await stop_target(target)


def configured_fixture() -> Any:
    """A test module's fixture giving :func:`configured_servers`'s ``start(config)`` for the test's kind of server."""

    @pytest.fixture
    async def start(target_kind: str, tmp_path: Path) -> AsyncIterator[Start]:
        async with configured_servers(target_kind, tmp_path) as start_config:
            yield start_config

    return start
