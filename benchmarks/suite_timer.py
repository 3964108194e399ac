"""A pytest plugin that writes where a run's time went, for ``bench_user_suite.py``.

Loaded with ``-p suite_timer`` (``benchmarks/`` on ``PYTHONPATH``); writes a
JSON object to the file named by ``$SUITE_TIMER_OUT``: seconds from session
start to the end of collection, from there to the end of the session, the
sum of the tests' setup + call + teardown durations, and the sum of the
``waits(seconds)`` marks of the tests that ran (time-outs and ack waits a
server pays in full).  A wait on the server's own timers is not paid on
fakejs when the test runs on its virtual clock (a ``fakejs(clock="manual")``
mark), so there it does not count.
"""

from __future__ import annotations

import json
import os
import time

import pytest

_times: dict[str, float] = {"tests": 0.0, "waits": 0.0}


def pytest_sessionstart(session: pytest.Session) -> None:
    _times["start"] = time.perf_counter()


def pytest_collection_finish(session: pytest.Session) -> None:
    _times["collected"] = time.perf_counter()
    real = session.config.getoption("--fakejs-target", "fake") == "real"
    for item in session.items:
        if not real and _virtual_time(item):
            continue
        for mark in item.iter_markers("waits"):
            _times["waits"] += float(mark.args[0])


def _virtual_time(item: pytest.Item) -> bool:
    return any(mark.kwargs.get("clock") == "manual" for mark in item.iter_markers("fakejs"))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _times["tests"] += report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    out = os.environ.get("SUITE_TIMER_OUT")
    if not out or "collected" not in _times:
        return
    end = time.perf_counter()
    summary = {
        "collection": _times["collected"] - _times["start"],
        "run": end - _times["collected"],
        "tests": _times["tests"],
        "waits": _times["waits"],
    }
    with open(out, "w") as file:
        json.dump(summary, file)
