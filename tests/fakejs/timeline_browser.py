"""The timeline page in a real browser: the scenarios its pages are written for, and headless Chromium.

Used by tests/fakejs/test_timeline_browser.py, and run as a script to remake the documentation's
screenshot and to measure the page at 10,000 events:

    python -m tests.fakejs.timeline_browser --screenshot docs/images/timeline.png
    python -m tests.fakejs.timeline_browser --busy /tmp/busy

Chromium is the system's (Debian's ``chromium`` package), driven by Playwright's Python package
(the ``test`` extra) without a browser download of its own; when either is missing, the browser
tests skip and say which.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import nats
from nats.js.api import AckPolicy, ConsumerConfig

from fakejs import ManualClock, Server
from fakejs.pytest_timeline import page_name

VIEWPORT = {"width": 1400, "height": 760}
TRACE_HEADERS = {"Trace-Id": "4bf92f35-77b3", "Order-Kind": "express <rush> & fragile"}


def chromium_path() -> str | None:
    """The system's Chromium, if there is one."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def browser_missing() -> str | None:
    """Why no browser can be had (what is missing), or None."""
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[test]')"
    if chromium_path() is None:
        return "no chromium on PATH (Debian's chromium package; .ci/run installs it when it can)"
    return None


class BrowserMissing(Exception):
    """No browser could be started: the message says what is missing."""


@asynccontextmanager
async def chromium() -> AsyncIterator[Any]:
    """Headless Chromium (a Playwright ``Browser``); :class:`BrowserMissing` when none can be had."""
    missing = browser_missing()
    if missing:
        raise BrowserMissing(missing)
    from playwright.async_api import Error, async_playwright

    async with async_playwright() as playwright:
        try:
            browser = await playwright.chromium.launch(executable_path=chromium_path())
        except Error as error:
            raise BrowserMissing(
                f"chromium at {chromium_path()} did not start: {error.message.splitlines()[0]}"
            ) from None
        try:
            yield browser
        finally:
            await browser.close()


class Opened:
    """A page opened in the browser, and the script errors it reported."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.errors: list[str] = []
        page.on("console", lambda message: self.errors.append(message.text) if message.type == "error" else None)
        page.on("pageerror", lambda error: self.errors.append(str(error)))

    async def goto(self, path: Path) -> None:
        await self.page.goto(path.resolve().as_uri())
        await self.page.wait_for_function("window.fakejsTimeline && window.fakejsTimeline.draws > 0")

    async def timings(self) -> dict[str, float]:
        timings: dict[str, float] = await self.page.evaluate("window.fakejsTimeline.timings")
        return timings


@asynccontextmanager
async def opened(browser: Any, path: Path) -> AsyncIterator[Opened]:
    """``path`` opened in a new page of ``browser``, the size of a laptop's window."""
    page = await browser.new_page(viewport=VIEWPORT)
    page.set_default_timeout(10_000)
    view = Opened(page)
    try:
        await view.goto(path)
        yield view
    finally:
        await page.close()


async def zoom_at(page: Any, x: float, y: float, least: float) -> None:
    """Ctrl + wheel over (x, y) until the page is zoomed ``least`` times or more (or as far as it zooms)."""
    await page.mouse.move(x, y)
    await page.keyboard.down("Control")
    try:
        before, zoom = 0.0, await page.evaluate("window.fakejsTimeline.zoom")
        while before < zoom < least:
            await page.mouse.wheel(0, -300)
            await page.evaluate("new Promise(requestAnimationFrame)")
            before, zoom = zoom, await page.evaluate("window.fakejsTimeline.zoom")
    finally:
        await page.keyboard.up("Control")


def write_failing_page(server: Server, directory: Path, nodeid: str) -> Path:
    """The page a failing test leaves behind: its server's timeline, named and titled as ``--fakejs-timeline`` does."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / page_name(nodeid)
    path.write_text(server.timeline_page(nodeid), encoding="utf-8")
    return path


async def forgotten_ack(server: Server, clock: ManualClock) -> nats.NATS:
    """A worker fetches two orders, acks one and forgets the other, which comes back after its ack wait.

    The first order carries headers. Returns the worker's connection (still open).
    """
    nc = await nats.connect(server.url, name="worker")
    js = nc.jetstream()
    await js.add_stream(name="ORDERS", subjects=["orders.>"])
    config = ConsumerConfig(durable_name="worker", ack_policy=AckPolicy.EXPLICIT, ack_wait=2)
    await js.add_consumer("ORDERS", config)
    await js.publish("orders.1", b'{"id": 1}', headers=TRACE_HEADERS)
    await js.publish("orders.2", b'{"id": 2}')
    worker = await js.pull_subscribe_bind("worker", "ORDERS")
    first, second = await worker.fetch(2, timeout=5)
    await second.ack()
    await server.wait_for(lambda: server.timeline(kind="ack"))  # acks are handled after the PONG
    clock.advance(2.5)  # the ack wait of the first order runs out
    await server.wait_for(lambda: server.timeline(kind="redeliver"))
    (again,) = await worker.fetch(1, timeout=5)
    assert again.metadata.num_delivered == 2 and again.headers == first.headers
    await again.ack()
    await nc.flush()
    await server.wait_for(lambda: len(server.timeline(kind="ack")) == 2)
    return nc


async def busy(server: Server, messages: int = 2_200, seed: int = 7) -> list[nats.NATS]:
    """Enough traffic to fill the default ring (10,000 events) and let older events go.

    A producer publishes in bursts (some messages with headers), two workers fetch in batches on their
    own consumers and ack most, nak some, term a few and leave a few unacked on a consumer with a short
    ack wait, which the server redelivers. Returns the connections (still open).
    """
    rng = random.Random(seed)
    producer = await nats.connect(server.url, name="producer")
    workers = [await nats.connect(server.url, name=f"worker-{n}") for n in (1, 2)]
    js = producer.jetstream()
    await js.add_stream(name="ORDERS", subjects=["orders.>"])
    await js.add_stream(name="AUDIT", subjects=["audit.>"])
    await js.add_consumer("ORDERS", ConsumerConfig(durable_name="billing", ack_policy=AckPolicy.EXPLICIT, ack_wait=30))
    await js.add_consumer(
        "ORDERS", ConsumerConfig(durable_name="shipping", ack_policy=AckPolicy.EXPLICIT, ack_wait=0.2)
    )
    subs = [
        await workers[0].jetstream().pull_subscribe_bind("billing", "ORDERS"),
        await workers[1].jetstream().pull_subscribe_bind("shipping", "ORDERS"),
    ]
    unacked = 0
    for burst in range(0, messages, 50):
        for n in range(burst, min(burst + 50, messages)):
            headers = {"Trace-Id": f"t-{n}"} if n % 3 == 0 else None
            await js.publish(f"orders.{n % 7}", b"x" * rng.randrange(10, 200), headers=headers)
            if n % 10 == 0:
                await js.publish("audit.orders", b"a")
        for sub in subs:
            while True:
                try:
                    batch = await sub.fetch(10, timeout=0.1)
                except nats.errors.TimeoutError:
                    break
                for msg in batch:
                    roll = rng.random()
                    if roll < 0.03:
                        await msg.nak()
                    elif roll < 0.04:
                        await msg.term()
                    elif roll < 0.05 and sub is subs[1] and msg.metadata.num_delivered == 1:
                        unacked += 1  # left for the ack wait to bring back
                    else:
                        await msg.ack()
                if len(batch) < 10:
                    break
    for nc in [producer, *workers]:
        await nc.flush()
    return [producer, *workers]


async def remake_screenshot(path: Path) -> None:
    """The documentation's screenshot: the forgotten ack's page, the second delivery's fields shown."""
    clock = ManualClock()
    with TemporaryDirectory() as directory:
        async with Server(clock=clock) as server:
            nc = await forgotten_ack(server, clock)
            page = write_failing_page(
                server, Path(directory), "tests/test_orders.py::test_each_order_is_processed_once"
            )
            await nc.close()
        async with chromium() as browser, opened(browser, page) as view:
            await view.page.locator("path.mark.deliver.again").hover()
            await view.page.screenshot(path=str(path), clip={"x": 0, "y": 0, "width": 1400, "height": 480})
            assert not view.errors, view.errors
    print(f"{path}: {path.stat().st_size} bytes")


async def measure(directory: Path) -> None:
    """The page of a busy server (the ring full) and of the forgotten ack: sizes, render times, screenshots."""
    directory.mkdir(parents=True, exist_ok=True)
    async with Server() as server:
        connections = await busy(server)
        big = write_failing_page(server, directory, "busy")
        for nc in connections:
            await nc.close()
        print(f"busy: {len(server.recorded)} events kept, {server.recorded.dropped} dropped")
    clock = ManualClock()
    async with Server(clock=clock) as server:
        nc = await forgotten_ack(server, clock)
        small = write_failing_page(server, directory, "small")
        await nc.close()
    async with chromium() as browser:
        for path in (small, big):
            for run in range(3):
                async with opened(browser, path) as view:
                    timings = await view.timings()
                    shown = {key: round(value, 1) for key, value in timings.items()}
                    print(f"{path.name}: {path.stat().st_size} bytes, run {run}: {json.dumps(shown)}", view.errors)
                    if run == 0:
                        await view.page.screenshot(path=str(directory / f"{path.stem}-fit.png"))
                        for zoom in (8, 64):
                            await zoom_at(view.page, 700, 300, zoom)
                            await view.page.screenshot(path=str(directory / f"{path.stem}-zoom{zoom}.png"))


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--screenshot", type=Path, help="remake the documentation's screenshot there")
    parser.add_argument("--busy", type=Path, help="write, time and screenshot the pages in this folder")
    args = parser.parse_args(argv)
    if args.screenshot:
        asyncio.run(remake_screenshot(args.screenshot))
    if args.busy:
        asyncio.run(measure(args.busy))


if __name__ == "__main__":
    main(sys.argv[1:])
