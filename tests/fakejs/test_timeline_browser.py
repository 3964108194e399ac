"""The timeline page in headless Chromium: what it draws for a failing test, hover, filters, zoom, 10,000 events.

The page under test is the one ``--fakejs-timeline`` writes for a real failing test (run by
pytester): a worker forgot an ack, so its order was delivered, not acked, and delivered again after
the ack wait. When Playwright's
package or the system's Chromium is missing, these tests skip and say which.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from fakejs import Server
from fakejs.pytest_timeline import page_name
from fakejs.testkit.timeline_page import render
from tests.fakejs.timeline_browser import (
    TRACE_HEADERS,
    BrowserMissing,
    busy,
    chromium,
    opened,
    write_failing_page,
    zoom_at,
)
from tests.harness.timeline_pages import INI, embedded_json

pytestmark = [pytest.mark.fake_only, pytest.mark.browser]


@pytest.fixture
async def browser() -> AsyncIterator[Any]:
    try:
        async with chromium() as launched:
            yield launched
    except BrowserMissing as missing:
        pytest.skip(str(missing))


class Written:
    """A failing test's page on disk, and the events it holds (in its order: ``data-i`` indexes them)."""

    def __init__(self, path: Path, events: list[dict[str, Any]]) -> None:
        self.path = path
        self.events = events

    def index(self, kind: str, **fields: Any) -> int:
        (found,) = [
            n
            for n, event in enumerate(self.events)
            if event["kind"] == kind and all(event.get(key) == value for key, value in fields.items())
        ]
        return found


# A worker that forgets an ack, as a test that fails on it: its order comes back after the ack wait.
FAILING_SUITE = f"""
import nats
import pytest
from nats.js.api import AckPolicy, ConsumerConfig

TRACE_HEADERS = {TRACE_HEADERS!r}

@pytest.mark.fakejs(clock="manual")
async def test_each_order_is_processed_once(fakejs_server):
    nc = await nats.connect(fakejs_server.url, name="worker")
    js = nc.jetstream()
    await js.add_stream(name="ORDERS", subjects=["orders.>"])
    config = ConsumerConfig(durable_name="worker", ack_policy=AckPolicy.EXPLICIT, ack_wait=2)
    await js.add_consumer("ORDERS", config)
    await js.publish("orders.1", b'{{"id": 1}}', headers=TRACE_HEADERS)
    await js.publish("orders.2", b'{{"id": 2}}')
    worker = await js.pull_subscribe_bind("worker", "ORDERS")
    first, second = await worker.fetch(2, timeout=5)
    await second.ack()  # the first order's ack is forgotten
    await fakejs_server.wait_for(lambda: fakejs_server.timeline(kind="ack"))  # acks are handled after the PONG
    fakejs_server.advance(2.5)  # its ack wait runs out
    await fakejs_server.wait_for(lambda: fakejs_server.timeline(kind="redeliver"))
    (again,) = await worker.fetch(1, timeout=5)
    await again.ack()
    await nc.flush()
    await fakejs_server.wait_for(lambda: len(fakejs_server.timeline(kind="ack")) == 2)
    await nc.close()
    assert again.metadata.num_delivered == 1, "order 1 was processed twice"
"""


@pytest.fixture
def forgotten(pytester: pytest.Pytester) -> Written:
    """The page ``--fakejs-timeline`` wrote for a test that failed because a worker forgot an ack."""
    pytester.makeini(INI)
    pytester.makepyfile(test_orders=FAILING_SUITE)
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", "--fakejs-timeline=timelines")
    result.assert_outcomes(failed=1)
    path = pytester.path / "timelines" / page_name("test_orders.py::test_each_order_is_processed_once")
    assert f"timeline page: {path}" in result.stdout.str()
    return Written(path, embedded_json(path.read_text())["events"])


async def shown_lanes(page: Any) -> list[str]:
    labels: list[str] = await page.eval_on_selector_all(
        ".lane", "labels => labels.filter(label => !label.hidden).map(label => label.textContent)"
    )
    return labels


async def centre(page: Any, selector: str) -> tuple[float, float]:
    """Where the element is once the page has drawn what a click or a scroll scheduled (a draw on the next frame)."""
    await next_frame(page)
    await page.locator(selector).wait_for(state="attached")
    box = await page.locator(selector).bounding_box()
    assert box is not None, selector
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


async def next_frame(page: Any) -> None:
    await page.evaluate("new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")


async def test_the_page_of_a_forgotten_ack_draws_its_lanes_and_the_redelivery(
    browser: Any, forgotten: Written, tmp_path: Path
) -> None:
    first = forgotten.index("deliver", stream_seq=1, delivery_count=1)
    again = forgotten.index("deliver", stream_seq=1, delivery_count=2)
    due = forgotten.index("redeliver", stream_seq=1, cause="ack_wait")
    client = forgotten.events[forgotten.index("client.connect")]["client"]
    async with opened(browser, forgotten.path) as view:
        page = view.page
        assert await shown_lanes(page) == [
            "server",
            f"client {client} · worker",
            "stream ORDERS",
            "consumer ORDERS › worker",
        ]
        assert await page.locator("path.mark.deliver").count() == 3
        assert await page.locator(f'path.mark.deliver.again[data-i="{again}"]').count() == 1
        assert await page.locator(f'path.mark.deliver[data-i="{first}"]:not(.again)').count() == 1
        assert await page.locator(f'path.mark.redeliver[data-i="{due}"]').count() == 1
        # the second delivery is linked to the first, and so is the redelivery that made it
        assert await page.locator(f'path.link.again[data-i="{again}"][data-to="{first}"]').count() == 1
        assert await page.locator(f'path.link.redeliver[data-i="{due}"][data-to="{first}"]').count() == 1
        x_first, y_first = await centre(page, f'path.mark[data-i="{first}"]')
        x_due, _ = await centre(page, f'path.mark[data-i="{due}"]')
        x_again, y_again = await centre(page, f'path.mark[data-i="{again}"]')
        assert x_first < x_due < x_again and y_first == y_again  # on the consumer's lane, in time order
        publish = forgotten.index("publish", seq=1)
        assert await page.locator(f'path.mark.publish[data-i="{publish}"]').count() == 2  # stream and client
        assert await page.locator("text.label", has_text="#1").count() == 1
        shot = tmp_path / "forgotten-ack.png"
        await page.screenshot(path=str(shot))
        assert shot.read_bytes().startswith(b"\x89PNG")
        assert view.errors == []


async def test_hovering_a_delivery_shows_its_headers_one_per_line(browser: Any, forgotten: Written) -> None:
    first = forgotten.index("deliver", stream_seq=1, delivery_count=1)
    plain = forgotten.index("deliver", stream_seq=2)
    async with opened(browser, forgotten.path) as view:
        page = view.page
        await page.locator(f'path.mark[data-i="{first}"]').hover()
        lines = await page.locator("#details .header-line").all_text_contents()
        assert lines == [f"{name}: {value}" for name, value in TRACE_HEADERS.items()]
        assert await page.locator("#details rush").count() == 0  # "<rush>" is text, not an element
        assert "delivery_count" in await page.locator("#details").inner_text()
        assert await page.locator("#details .header-line").first.evaluate("line => line.childElementCount") == 0
        await page.locator(f'path.mark[data-i="{plain}"]').hover()
        assert await page.locator("#details .header-line").count() == 0
        assert await page.locator("#details .none").inner_text() == "(none)"
        assert view.errors == []


async def test_filters_hide_the_lanes_left_without_events(browser: Any, forgotten: Written) -> None:
    client = forgotten.events[forgotten.index("client.connect")]["client"]
    async with opened(browser, forgotten.path) as view:
        page = view.page
        await page.select_option('select[data-filter="consumer"]', "worker")
        # the consumer's events, and its pull requests on the lane of the client that sent them too
        assert await shown_lanes(page) == ["server", f"client {client} · worker", "consumer ORDERS › worker"]
        lanes = set(await page.eval_on_selector_all("path.mark[data-lane]", "marks => marks.map(m => m.dataset.lane)"))
        assert lanes == {"1", "3"}
        await page.select_option('select[data-filter="consumer"]', "")
        await page.select_option('select[data-filter="client"]', str(client))
        shown = ["server", f"client {client} · worker", "stream ORDERS", "consumer ORDERS › worker"]
        assert await shown_lanes(page) == shown
        assert await page.locator("path.mark.deliver").count() == 0
        assert view.errors == []


async def test_zoom_spreads_the_marks_around_the_cursor_and_fit_brings_them_back(
    browser: Any, forgotten: Written
) -> None:
    first = forgotten.index("deliver", stream_seq=1, delivery_count=1)
    acked = forgotten.index("ack", stream_seq=2)
    due = forgotten.index("redeliver", stream_seq=1)
    async with opened(browser, forgotten.path) as view:
        page = view.page

        async def spread() -> float:  # of two marks that stay in view when zoomed around its middle
            return (await centre(page, f'path.mark[data-i="{due}"]'))[0] - (
                await centre(page, f'path.mark[data-i="{acked}"]')
            )[0]

        fitted = await spread()
        await page.click('button[data-zoom="in"]')
        assert await spread() == pytest.approx(fitted * 1.5, abs=1)
        await page.click('button[data-zoom="fit"]')
        assert await spread() == pytest.approx(fitted, abs=0.5)
        x, y = await centre(page, f'path.mark[data-i="{first}"]')
        await zoom_at(page, x, y, 2)  # ctrl + wheel over the first delivery: it stays under the cursor
        assert (await centre(page, f'path.mark[data-i="{first}"]'))[0] == pytest.approx(x, abs=1.5)
        assert await page.evaluate("window.fakejsTimeline.zoom") >= 2
        await page.click('button[data-zoom="fit"]')
        assert await page.evaluate("document.getElementById('view').scrollLeft") == 0
        assert view.errors == []


def many_lanes(streams: int) -> dict[str, Any]:
    events = [
        {"index": n, "kind": "publish", "time_ns": 1000 * n, "client": 1, "stream": f"S{n % streams:02}"}
        | {"subject": "s", "size": 1, "seq": n // streams + 1, "duplicate": False, "headers": None}
        for n in range(streams * 3)
    ]
    return {"size": 10_000, "dropped": 0, "events": events}


async def test_lanes_scroll_with_their_labels(browser: Any, tmp_path: Path) -> None:
    path = tmp_path / "many.html"
    path.write_text(render(many_lanes(40), "forty streams"))
    async with opened(browser, path) as view:
        page = view.page
        assert len(await shown_lanes(page)) == 41
        assert await page.evaluate("document.getElementById('view').scrollHeight > innerHeight")
        await page.evaluate("document.getElementById('view').scrollTop = 500")
        await next_frame(page)
        lanes = await page.evaluate("document.getElementById('lanes').scrollTop")
        assert lanes == await page.evaluate("document.getElementById('view').scrollTop") > 0
        label = await page.locator('.lane[data-lane="20"]').bounding_box()
        band = await page.locator('rect.band[data-lane="20"]').bounding_box()
        assert label is not None and band is not None
        assert label["y"] == pytest.approx(band["y"], abs=1.5)
        assert view.errors == []


@pytest.mark.slow
async def test_a_page_of_ten_thousand_events_opens_and_draws_without_script_errors(
    browser: Any, tmp_path: Path
) -> None:
    async with Server() as server:
        connections = await busy(server)
        path = write_failing_page(server, tmp_path, "busy")
        assert (len(server.recorded), server.recorded.size) == (10_000, 10_000) and server.recorded.dropped > 0
        for nc in connections:
            await nc.close()
    async with opened(browser, path) as view:
        page = view.page
        assert await page.locator("rect.density").count() > 50  # the whole run: mostly columns of many events
        assert await page.locator("rect.density.warning").count() > 0  # the naks and redeliveries among them
        column = page.locator("rect.density").nth(20)
        await column.hover()
        assert " events on " in await page.locator("#details h2").inner_text()
        await page.screenshot(path=str(tmp_path / "busy-fit.png"))
        await column.click()  # a column zooms in on itself
        assert await page.evaluate("window.fakejsTimeline.zoom") == 4
        await page.click('button[data-zoom="fit"]')
        busiest = await page.eval_on_selector_all(  # the tallest column: where the events are thickest
            "rect.density",
            """columns => columns.map(c => c.getBoundingClientRect())
                .reduce((a, b) => (b.height > a.height ? b : a))""",
        )
        # Zoomed in on it far enough, there is room for each event again (how far depends on the run's pace)
        for least in (400, 2_000, 8_000):
            await zoom_at(page, busiest["x"] + busiest["width"] / 2, busiest["y"] + busiest["height"] / 2, least)
            if await page.locator("path.mark").count() > 20:
                break
        assert await page.locator("path.mark").count() > 20
        draws = await page.evaluate("window.fakejsTimeline.draws")
        await page.evaluate("document.getElementById('view').scrollLeft += 700")
        await next_frame(page)
        assert await page.evaluate("window.fakejsTimeline.draws") > draws  # scrolling draws what comes into view
        await page.screenshot(path=str(tmp_path / "busy-zoomed.png"))
        assert view.errors == []
