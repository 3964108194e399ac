"""Fixtures of the test kit's tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.fakejs.clients import Link


@pytest.fixture
async def link() -> AsyncIterator[Link]:
    handle = Link()
    try:
        yield handle
    finally:
        await handle.close()
