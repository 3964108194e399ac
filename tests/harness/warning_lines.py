"""The ``[ERR]`` and ``[WRN]`` lines of a server: fakejs's from its logger, nats-server's from its log.

Client addresses and ids (``127.0.0.1:PORT - cid:N``) become ``ADDR``; the
start's plaintext password warning is left out.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.harness.error_lines import collecting
from tests.harness.targets import RealTarget, Target
from tests.harness.wait import eventually

LEVELS = {"ERROR": "ERR", "WARNING": "WRN"}
LOG_LINE = re.compile(r"(\[(?:ERR|WRN)\] .*)$")
CLIENT = re.compile(r"127\.0\.0\.1:\d+ - cid:\d+")


class Lines(logging.Handler):
    """fakejs's error and warning lines, as they are logged."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"[{LEVELS.get(record.levelname, record.levelname)}] {record.getMessage()}")

    def of(self, target: Target) -> list[str]:
        """``[ERR]``/``[WRN]`` lines, the client's address and id made ``ADDR``."""
        if isinstance(target, RealTarget):
            assert target.process is not None
            raw = [m.group(1) for line in target.process.log_text().splitlines() if (m := LOG_LINE.search(line))]
        else:
            raw = list(self.lines)
        return [CLIENT.sub("ADDR", line) for line in raw if "Plaintext passwords" not in line]

    async def wait_for(self, target: Target, expected: list[str], what: str = "the refusal's lines") -> None:
        """Wait until ``target``'s lines are ``expected``, failing the test if they never are."""

        async def logged() -> list[str]:
            return self.of(target)

        await eventually(logged, lambda seen: seen == expected, what=what)


def lines_fixture() -> Any:
    """A test module's ``lines`` fixture: the lines of the test's server (fakejs's caught from its logger)."""

    @pytest.fixture
    def lines() -> Iterator[Lines]:
        with collecting(Lines()) as handler:
            yield handler

    return lines
