"""``--fakejs-timeline=DIR``: the timeline page of a failing test that used a fakejs server, run on small suites.

Pinned: a test that failed in setup, call or teardown while it used
``fakejs_server`` (or ``fakejs_shared_server``) gets its page in DIR, named
after its node id, and its failure report names the page; a passing test
gets one only under ``--fakejs-timeline-all``; a test without a server gets
none; the page holds the test's events (a shared server's: only this
test's); a pytest-html report links the page from the test's row; against
the real nats-server nothing is written; a cluster's page has the lanes of
every node.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pytest

# Loaded before pytester's in-process runs (see test_pytest_plugin.py).
import trustme  # noqa: F401

from fakejs.pytest_timeline import page_name
from fakejs.testkit import timeline_page
from tests.harness.targets import REAL_BINARY
from tests.harness.timeline_pages import INI, embedded_json

SUITE = """
import nats
import pytest

async def _publish(url, stream):
    nc = await nats.connect(url)
    js = nc.jetstream()
    await js.add_stream(name=stream, subjects=[stream.lower() + ".>"])
    await js.publish(stream.lower() + ".1", b"one")
    await nc.close()

async def test_fails(fakejs_server):
    await _publish(fakejs_server.url, "ORDERS")
    assert False, "on purpose"

async def test_passes(fakejs_server):
    await _publish(fakejs_server.url, "ORDERS")

def test_fails_without_a_server():
    assert False, "on purpose"

@pytest.fixture
def broken_setup(fakejs_server):
    raise RuntimeError("setup broke")

def test_setup_fails(broken_setup):
    pass

def boom():
    raise RuntimeError("broken handler")

def test_teardown_fails(fakejs_server):
    fakejs_server.call(lambda: fakejs_server.server.clock.call_later(0, boom))
    fakejs_server.wait_until(lambda: fakejs_server.server.errors)

@pytest.mark.parametrize("name", ["a/b", "a_b"])
def test_parametrized(fakejs_server, name):
    assert False, name

async def test_shared_first(fakejs_shared_server):
    await _publish(fakejs_shared_server.url, "FIRST")

async def test_shared_second(fakejs_shared_server):
    await _publish(fakejs_shared_server.url, "SECOND")
    assert False, "on purpose"
"""

FAILING = [
    "test_fails",
    "test_setup_fails",
    "test_teardown_fails",
    "test_parametrized[a/b]",
    "test_parametrized[a_b]",
    "test_shared_second",
]


def _page_path(pytester: pytest.Pytester, test: str) -> Path:
    return pytester.path / "pages" / page_name(f"test_suite.py::{test}")


def _kinds(page: Path) -> list[str]:
    return [event["kind"] for event in embedded_json(page.read_text())["events"]]


def _events(page: Path, kind: str) -> list[dict[str, object]]:
    return [event for event in embedded_json(page.read_text())["events"] if event["kind"] == kind]


def test_page_name_is_readable_stable_and_distinct_for_each_node_id() -> None:
    name = page_name("tests/orders/test_pulls.py::TestPull::test_expires[batch 2]")
    assert re.fullmatch(r"tests\.orders\.test_pulls\.py\.TestPull\.test_expires_batch_2-[0-9a-f]{8}\.html", name)
    assert name == page_name("tests/orders/test_pulls.py::TestPull::test_expires[batch 2]")
    assert page_name("t.py::test[a/b]") != page_name("t.py::test[a_b]")
    assert page_name("t.py::test", "fakejs_cluster").startswith("t.py.test.fakejs_cluster-")
    assert len(page_name("t.py::test[" + "x" * 500 + "]")) < 150


def test_failing_tests_that_used_a_server_get_their_page(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", "--fakejs-timeline=pages")
    result.assert_outcomes(passed=3, failed=5, errors=2)  # test_teardown_fails passes, then errors at teardown
    written = sorted(path.name for path in (pytester.path / "pages").iterdir())
    assert written == sorted(_page_path(pytester, test).name for test in FAILING)
    output = result.stdout.str()
    for test in FAILING:
        assert f"timeline page: {_page_path(pytester, test)}" in output
    page = _page_path(pytester, "test_fails").read_text()
    assert page.startswith("<!DOCTYPE html>") and "<title>test_suite.py::test_fails</title>" in page
    assert {"stream.create", "publish"} <= set(_kinds(_page_path(pytester, "test_fails")))
    (published,) = _events(_page_path(pytester, "test_fails"), "publish")
    assert (published["stream"], published["subject"], published["seq"]) == ("ORDERS", "orders.1", 1)
    shared = _events(_page_path(pytester, "test_shared_second"), "stream.create")
    assert [event["stream"] for event in shared] == ["SECOND"]  # not the earlier test's FIRST
    assert "0 older events dropped" in _page_path(pytester, "test_shared_second").read_text()


def test_only_the_pages_written_are_rendered(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    rendered: list[str] = []
    original = timeline_page.render

    def render(document: dict[str, Any], title: str = "") -> str:
        rendered.append(title)
        return original(document, title)

    monkeypatch.setattr(timeline_page, "render", render)
    pytester.makeini(INI)
    pytester.makepyfile(
        test_suite="""
async def test_passes(fakejs_server):
    pass

async def test_passes_too(fakejs_server):
    pass

async def test_fails(fakejs_server):
    assert False
"""
    )
    result = pytester.runpytest_inprocess("-q", "-p", "no:cacheprovider", "--fakejs-timeline=pages")
    result.assert_outcomes(passed=2, failed=1)
    assert rendered == ["test_suite.py::test_fails"]  # a passing test's events are kept until teardown, not drawn


def test_every_test_that_used_a_server_gets_its_page_under_timeline_all(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(
        test_suite="""
import nats

async def test_passes(fakejs_server):
    nc = await nats.connect(fakejs_server.url)
    await nc.jetstream().add_stream(name="S", subjects=["s"])
    await nc.close()

def test_without_a_server():
    pass
"""
    )
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", "--fakejs-timeline=pages", "--fakejs-timeline-all")
    result.assert_outcomes(passed=2)
    assert [path.name for path in (pytester.path / "pages").iterdir()] == [_page_path(pytester, "test_passes").name]
    assert "stream.create" in _kinds(_page_path(pytester, "test_passes"))


def test_timeline_all_needs_the_directory(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite="def test_nothing():\n    pass\n")
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", "--fakejs-timeline-all")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--fakejs-timeline-all needs --fakejs-timeline=DIR*"])


def test_a_pytest_html_report_links_the_page(pytester: pytest.Pytester) -> None:
    pytest.importorskip("pytest_html")
    pytester.makeini(INI)
    pytester.makepyfile(
        test_suite="""
def test_fails(fakejs_server):
    assert False, "on purpose"

def test_passes(fakejs_server):
    pass
"""
    )
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", "--fakejs-timeline=pages", "--html=report/index.html")
    result.assert_outcomes(passed=1, failed=1)
    report = html.unescape(html.unescape((pytester.path / "report" / "index.html").read_text()))
    link = (
        f'href=\\"../pages/{page_name("test_suite.py::test_fails")}\\" class=\\"col-links__extra url\\">fakejs timeline'
    )
    assert link in report
    assert report.count(">fakejs timeline</a>") == 1  # the failing test's row only
    assert (pytester.path / "pages" / page_name("test_suite.py::test_fails")).is_file()


CLUSTER_SUITE = """
import nats
import pytest

@pytest.mark.fakejs_cluster(size=2)
async def test_fails(fakejs_cluster):
    nc = await nats.connect(fakejs_cluster.url(1), name="app")
    await nc.flush()
    await nc.close()
    assert False, "on purpose"
"""


def test_a_cluster_s_page_has_the_lanes_of_every_node(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(test_suite=CLUSTER_SUITE)
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", "--fakejs-timeline=pages")
    result.assert_outcomes(failed=1)
    page = _page_path(pytester, "test_fails").read_text()
    assert "<title>test_suite.py::test_fails</title>" in page
    assert "n2 · client" in page and "app" in page  # the client's lane, labelled with its node
    result.stdout.fnmatch_lines([f"*timeline page: {_page_path(pytester, 'test_fails')}*"])


@pytest.mark.skipif(REAL_BINARY is None, reason="nats-server not installed")
def test_the_real_target_writes_nothing(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(
        test_suite="""
def test_fails(fakejs_server):
    assert False, "on purpose"

def test_shared_fails(fakejs_shared_server):
    assert False, "on purpose"
"""
    )
    result = pytester.runpytest(
        "-q", "-p", "no:cacheprovider", "--fakejs-target=real", "--fakejs-timeline=pages", "--fakejs-timeline-all"
    )
    result.assert_outcomes(failed=2)
    assert not (pytester.path / "pages").exists()
    assert "timeline page" not in result.stdout.str()
