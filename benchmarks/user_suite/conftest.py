"""A user's JetStream test suite, as written against nats-py with the fakejs pytest plugin.

Every test takes a fresh server from the ``fakejs_server`` fixture (through
``fakejs_client``, a connected nats-py client); run with
``--fakejs-target=real`` the same fixture starts a real nats-server per
test.  ``benchmarks/bench_user_suite.py`` times both runs.  The main test
run does not collect this directory (``testpaths`` in pyproject.toml).
"""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture
def js(fakejs_client: Any) -> Any:
    """The JetStream context of the test's client."""
    return fakejs_client.jetstream()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "waits(seconds): the test waits this long on purpose (a time-out, an ack wait), on any server"
    )
