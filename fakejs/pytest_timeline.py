"""The pytest plugin's timeline pages: ``--fakejs-timeline=DIR`` and ``--fakejs-timeline-all``.

A test that used a fakejs server (``fakejs_server``, ``fakejs_shared_server``,
or ``fakejs_cluster``: one page across its nodes) and failed, in
setup, call or teardown, gets its server's timeline page
(:mod:`fakejs.testkit.timeline_page`) written to ``DIR/<file name>.html``;
under ``--fakejs-timeline-all`` every such test does.  The file name is the
node id made safe for any file system, then a digest of the node id (stable,
readable, and two parametrized ids never share one); the page's title is the
node id.  The report of a failing phase names the page in its ``fakejs``
section, and with pytest-html writing a report (``--html``) the page's link
joins the test's row (``report.extras``).

Whether a test failed is known phase by phase, from the reports, while the
page can only be read from a server that still runs.  So a fixture that
started a server registers it when it is ready (:func:`watch`) and captures
what its page shows at teardown, before the server stops (:func:`capture`);
the teardown report, which comes last, renders and writes the pages when a
phase failed (:func:`report_lines`), so a passing test pays for no page.  A shared server's page holds only the test's
events: the fixture resets the server, its timeline with it, before each
test.  Against the real nats-server there is no timeline: nothing is
registered, and nothing written.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

__all__ = ["add_options", "capture", "check_options", "page_name", "report_lines", "watch"]

OPTION = "--fakejs-timeline"
OPTION_ALL = "--fakejs-timeline-all"
LINK_NAME = "fakejs timeline"
# What a page's file name keeps of the node id: what every file system and shell takes as it is.
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
# The longest part of a file name taken from the node id (its digest follows).
READABLE_LENGTH = 120


@dataclass
class _Pages:
    """The fakejs servers one test used: by fixture name, the page's path and, once captured, its title and events."""

    paths: dict[str, Path] = field(default_factory=dict)
    captured: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    failed: bool = False


_PAGES = pytest.StashKey[_Pages]()


def add_options(group: pytest.OptionGroup) -> None:
    group.addoption(
        OPTION,
        metavar="DIR",
        default=None,
        help="write the timeline page of each failing test that used a fakejs server to DIR (a file named after the test id)",
    )
    group.addoption(
        OPTION_ALL,
        action="store_true",
        default=False,
        help=f"with {OPTION}=DIR, write the page of every test that used a fakejs server",
    )


def check_options(config: pytest.Config) -> None:
    if config.getoption(OPTION_ALL) and not config.getoption(OPTION):
        raise pytest.UsageError(f"{OPTION_ALL} needs {OPTION}=DIR: the directory the pages go to")


def page_name(nodeid: str, fixture: str = "") -> str:
    """A page's file name: the node id made safe (the module's ``/`` and the ``::`` as ``.``), then a digest of it."""
    module, _, names = nodeid.partition("::")
    dotted = ".".join(filter(None, (module.replace("/", "."), names.replace("::", "."))))
    readable = _UNSAFE.sub("_", dotted).strip("._")
    named = f"{nodeid} {fixture}" if fixture else nodeid
    digest = hashlib.sha256(named.encode()).hexdigest()[:8]
    suffix = f".{fixture}" if fixture else ""
    return f"{readable[:READABLE_LENGTH]}{suffix}-{digest}.html"


def _directory(config: pytest.Config) -> Path | None:
    given = config.getoption(OPTION)
    return config.invocation_params.dir / os.path.expanduser(given) if given else None


def watch(request: pytest.FixtureRequest, handle: Any) -> None:
    """Keep the page of the server (or cluster) ``handle`` for this test, if pages are asked for and it has one."""
    directory = _directory(request.config)
    if directory is None or handle.kind != "fake" or getattr(handle, "timeline_page", None) is None:
        return
    pages = request.node.stash.setdefault(_PAGES, _Pages())
    fixtures = [*pages.paths, request.fixturename]  # a test with several servers names each page after its fixture
    nodeid = request.node.nodeid
    pages.paths = {name: directory / page_name(nodeid, name if len(fixtures) > 1 else "") for name in fixtures}


def capture(request: pytest.FixtureRequest, handle: Any) -> None:
    """Read what the page of a watched server shows while it still runs (at the fixture's teardown, before it stops)."""
    pages = request.node.stash.get(_PAGES, None)
    if pages is None or request.fixturename not in pages.paths:
        return
    title = request.node.nodeid if len(pages.paths) == 1 else f"{request.node.nodeid} ({request.fixturename})"
    pages.captured[request.fixturename] = (title, handle.timeline_document())


def report_lines(item: pytest.Item, report: pytest.TestReport) -> list[str]:
    """What a phase's report says of the test's pages; the teardown report writes them when they are due.

    A failing phase's report names the pages (and, with pytest-html, links
    them: once per test, as pytest-html gathers the links of every phase).
    """
    pages = item.stash.get(_PAGES, None)
    if pages is None:
        return []
    lines: list[str] = []
    if report.failed:
        lines = [f"timeline page: {path}" for path in pages.paths.values()]
        if not pages.failed:
            _link(item.config, report, pages)
        pages.failed = True
    if report.when == "teardown":
        everything = bool(item.config.getoption(OPTION_ALL))
        if pages.failed or everything:
            _write(pages)
        if everything and not pages.failed:
            _link(item.config, report, pages)
    return lines


def _write(pages: _Pages) -> None:
    # The page's template comes with the first page written
    from fakejs.testkit.timeline_page import render

    for fixture, (title, document) in pages.captured.items():
        path = pages.paths[fixture]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(document, title), encoding="utf-8")


def _link(config: pytest.Config, report: pytest.TestReport, pages: _Pages) -> None:
    """With pytest-html writing a report, a link to each page in the test's row (relative to the report)."""
    report_path = config.getoption("htmlpath", None)
    if not report_path:
        return
    # Only a run that writes a pytest-html report loads its extras
    from pytest_html import extras

    report_directory = (config.invocation_params.dir / os.path.expanduser(os.path.expandvars(report_path))).parent
    links = list(getattr(report, "extras", []))
    for fixture, path in pages.paths.items():
        name = LINK_NAME if len(pages.paths) == 1 else f"{LINK_NAME} ({fixture})"
        links.append(extras.url(Path(os.path.relpath(path, report_directory)).as_posix(), name=name))
    report.extras = links  # type: ignore[attr-defined]
