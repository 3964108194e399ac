"""The timeline's page: one self-contained HTML document that embeds and draws the events."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from html.parser import HTMLParser

import nats
import pytest
from nats.aio.msg import Msg
from nats.js.api import AckPolicy, ConsumerConfig

from fakejs import ManualClock, Server
from fakejs.targets.fake import FakeJS
from fakejs.testkit.timeline_page import lane_keys, lanes, render, shaped, unshaped
from tests.harness.timeline_pages import embedded_json

pytestmark = pytest.mark.fake_only

NASTY = "s.</script><script>alert(1)</script>"


class Page(HTMLParser):
    """What a page is made of: its tags with their attributes; every element closed where it should be."""

    VOID = frozenset({"meta", "br", "input"})

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.open: list[str] = []
        self.feed(text)
        self.close()
        assert self.open == [], f"left open: {self.open}"

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        assert self.open and self.open[-1] == tag, f"</{tag}> closes <{self.open[-1] if self.open else None}>"
        self.open.pop()

    def named(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for name, attrs in self.tags if name == tag]


def lane_labels(text: str) -> list[str]:
    """The lane labels, in order: the text of each ``<div class="lane">``."""

    class Lanes(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.labels: list[str] = []
            self.inside = False

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.inside = tag == "div" and ("class", "lane") in attrs

        def handle_data(self, data: str) -> None:
            if self.inside:
                self.labels.append(data)
                self.inside = False

    parser = Lanes()
    parser.feed(text)
    return parser.labels


def assert_self_contained(text: str) -> None:
    """One HTML document that loads nothing: no src or href anywhere, no @import, no url()."""
    page = Page(text)
    assert text.startswith("<!DOCTYPE html>")
    assert [name for name, _ in page.tags].count("html") == 1
    assert [name for name, _ in page.tags].count("body") == 1
    for name, attrs in page.tags:
        assert not {"src", "href", "xlink:href", "action"} & set(attrs), (name, attrs)
    assert "@import" not in text and "url(" not in text
    assert [attrs.get("type") for name, attrs in page.tags if name == "script"] == ["application/json", None]
    assert page.named("svg") and page.named("style")


async def scenario(server: Server, clock: ManualClock) -> tuple[nats.NATS, str]:
    """A publish, a pull that ends with a 408, a nak and its redelivery; returns the client and the pull's inbox."""
    nc = await nats.connect(server.url, name="worker")
    js = nc.jetstream()
    await js.add_stream(name="S", subjects=["s.>"])
    await js.add_consumer("S", ConsumerConfig(durable_name="C", ack_policy=AckPolicy.EXPLICIT, ack_wait=30))
    await js.publish("s.1", b"one")
    await js.publish(NASTY, b"two")
    received: list[Msg] = []
    inbox = nc.new_inbox()

    async def got(msg: Msg) -> None:
        received.append(msg)

    await nc.subscribe(inbox, cb=got)
    pull = json.dumps({"batch": 4, "expires": 2 * 10**9}).encode()
    await nc.publish("$JS.API.CONSUMER.MSG.NEXT.S.C", pull, reply=inbox)
    await server.wait_for(lambda: len(received) == 2)
    await received[0].ack()
    await received[1].nak()
    await nc.flush()
    await server.wait_for(lambda: len(received) == 3)  # the nak'd message again, to the same pull
    clock.advance(2)
    await server.wait_for(lambda: server.timeline(kind="pull.end"))
    return nc, inbox


@pytest.fixture
async def recorded() -> AsyncIterator[tuple[Server, str]]:
    clock = ManualClock()
    async with Server(clock=clock, http_port=0) as server:
        nc, inbox = await scenario(server, clock)
        yield server, inbox
        await nc.close()


async def test_the_page_embeds_every_event_and_loads_nothing(recorded: tuple[Server, str]) -> None:
    server, inbox = recorded
    text = server.timeline_page("a pull that timed out")
    assert_self_contained(text)
    data = embedded_json(text)
    assert data["events"] == server.timeline()
    assert (data["size"], data["dropped"]) == (10_000, 0)
    assert [len(at) for at in data["at"]] == [len(lane_keys(event)) for event in data["events"]]
    origin = int(data["origin"])
    assert [origin + t for t in data["t"]] == [event["time_ns"] for event in data["events"]]
    assert data["t"][-1] == 2 * 10**9  # the 408, two seconds of the manual clock after the rest
    kinds = [event["kind"] for event in data["events"]]
    assert {"publish", "pull.request", "deliver", "ack", "nak", "redeliver", "pull.end", "clock.advance"} <= set(kinds)
    assert [(e["code"], e["text"]) for e in data["events"] if e["kind"] == "pull.end"] == [(408, "Request Timeout")]
    delivered = [(e["stream_seq"], e["delivery_count"], e["target"]) for e in data["events"] if e["kind"] == "deliver"]
    assert delivered == [(1, 1, inbox), (2, 1, inbox), (2, 2, inbox)]
    assert "<title>a pull that timed out</title>" in text
    assert "over 2000.000 ms of server time" in text
    assert "The ring keeps the newest 10000 events; 0 older events dropped." in text


async def test_the_page_names_each_shape_of_event_once(recorded: tuple[Server, str]) -> None:
    server, _ = recorded
    events = server.timeline()
    text = server.timeline_page()
    embedded = text.split('id="timeline-data">', 1)[1].split("</script>", 1)[0]
    data = json.loads(embedded)
    assert "events" not in data and len(data["rows"]) == len(events)
    assert len(data["shapes"]) == len({tuple(event) for event in events}) < len(events)
    assert [data["shapes"][row[0]] for row in data["rows"]] == [list(event) for event in events]
    assert [row[1:] for row in data["rows"]] == [list(event.values()) for event in events]
    assert embedded.count('"stream_seq"') == sum("stream_seq" in shape for shape in data["shapes"])  # once a shape
    assert unshaped(shaped(events)) == events


async def test_a_subject_cannot_end_the_script_it_is_embedded_in(recorded: tuple[Server, str]) -> None:
    server, _ = recorded
    text = server.timeline_page()
    assert NASTY not in text and "alert(1)" in text  # escaped, not cut
    assert text.count("</script>") == 2
    assert NASTY in [event.get("subject") for event in embedded_json(text)["events"]]
    assert_self_contained(text)


async def test_the_page_has_a_lane_for_the_client_the_stream_and_the_consumer(recorded: tuple[Server, str]) -> None:
    server, _ = recorded
    client = server.timeline(kind="client.connect")[0]["client"]
    text = server.timeline_page()
    labels = lane_labels(text)
    assert labels == ["server", f"client {client} · worker", "stream S", "consumer S › C"]
    data = embedded_json(text)
    by_kind = {event["kind"]: at for event, at in zip(data["events"], data["at"], strict=True)}
    assert [labels[lane] for lane in by_kind["publish"]] == ["stream S", f"client {client} · worker"]
    assert [labels[lane] for lane in by_kind["deliver"]] == ["consumer S › C"]
    assert [labels[lane] for lane in by_kind["clock.advance"]] == ["server"]
    selects = Page(text).named("select")
    assert [attrs["data-filter"] for attrs in selects] == ["stream", "consumer", "client"]


async def test_filters_choose_the_events_the_page_shows(recorded: tuple[Server, str]) -> None:
    server, _ = recorded
    data = embedded_json(server.timeline_page(consumer="C", kind="pull"))
    assert [event["kind"] for event in data["events"]] == ["pull.request", "pull.end"]
    assert lane_labels(server.timeline_page(kind="client")) == [f"client {server.timeline()[0]['client']} · worker"]


def test_an_empty_timeline_is_a_page_too() -> None:
    text = render({"size": 5, "dropped": 7, "events": []}, "")
    assert_self_contained(text)
    assert "<title>fakejs timeline</title>" in text
    assert "0 events. The ring keeps the newest 5 events; 7 older events dropped." in text
    assert lane_labels(text) == [] and embedded_json(text)["events"] == []


def test_a_marker_of_the_template_in_a_subject_or_title_stays_as_it_is() -> None:
    events = [
        {"index": 0, "kind": "stream.create", "time_ns": 0, "stream": "@SCRIPT@"},
        {"index": 1, "kind": "client.connect", "time_ns": 1, "client": 2, "name": "@STYLE@ @DATA@", "account": "$G"},
    ]
    text = render({"size": 10, "dropped": 0, "events": events}, "@LANES@")
    assert embedded_json(text)["events"] == events
    assert lane_labels(text) == ["client 2 · @STYLE@ @DATA@", "stream @SCRIPT@"]
    assert "<title>@LANES@</title>" in text and text.count("</script>") == 2
    assert_self_contained(text)


def test_lanes_and_titles_are_escaped() -> None:
    events = [
        {"index": 0, "kind": "client.connect", "time_ns": 0, "client": 3, "name": "<b>me</b>", "account": "$G"},
        {"index": 1, "kind": "stream.create", "time_ns": 5, "stream": "S&T"},
    ]
    text = render({"size": 10, "dropped": 0, "events": events}, "<i>t</i>")
    assert "<b>" not in text and "<i>" not in text
    assert lane_labels(text) == ["client 3 · <b>me</b>", "stream S&T"]
    assert lanes(events) == [("client:3", "client 3 · <b>me</b>"), ("stream:S&T", "stream S&T")]
    assert embedded_json(text)["events"] == events


async def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str, bytes]:
    def call() -> tuple[int, str, bytes]:
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=5) as response:
                return response.status, response.headers["Content-Type"], response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers["Content-Type"], exc.read()

    return await asyncio.to_thread(call)


async def test_the_control_api_serves_the_page_over_http(recorded: tuple[Server, str]) -> None:
    server, _ = recorded
    status, content_type, body = await get(f"{server.http_url}/fakejs/timeline.html")
    assert (status, content_type) == (200, "text/html; charset=utf-8")
    assert_self_contained(body.decode())
    assert embedded_json(body.decode())["events"] == server.timeline()
    status, _, body = await get(f"{server.http_url}/fakejs/timeline.html?consumer=C&kind=pull")
    assert status == 200
    assert [event["kind"] for event in embedded_json(body.decode())["events"]] == ["pull.request", "pull.end"]
    for query, word in [("?colour=red", "colour"), ("?client=one", "client"), ("?kind=nope", "unknown event kind")]:
        status, content_type, body = await get(f"{server.http_url}/fakejs/timeline.html{query}")
        assert (status, content_type) == (400, "application/json")
        assert word in json.loads(body)["error"]


async def test_the_page_is_not_on_the_wire(recorded: tuple[Server, str]) -> None:
    server, _ = recorded
    nc = await nats.connect(server.url)
    reply = await nc.request("$FAKEJS.TIMELINE.HTML", b"", timeout=5)
    assert json.loads(reply.data) == {"error": "unknown control operation timeline/html"}
    await nc.close()


async def test_a_guarded_control_api_refuses_the_page_without_credentials() -> None:
    async with Server(http_port=0, control_token="s3cret") as server:
        status, _, _ = await get(f"{server.http_url}/fakejs/timeline.html")
        assert status == 401
        status, content_type, _ = await get(
            f"{server.http_url}/fakejs/timeline.html", {"Authorization": "Bearer s3cret"}
        )
        assert (status, content_type) == (200, "text/html; charset=utf-8")


async def test_the_fixtures_handle_gives_the_page() -> None:
    handle = FakeJS().start()
    try:
        nc = await nats.connect(handle.url)
        await nc.jetstream().add_stream(name="S", subjects=["s"])
        text = handle.timeline_page("handle", stream="S")
        assert [event["kind"] for event in embedded_json(text)["events"]] == ["stream.create"]
        assert lane_labels(text) == ["stream S"]
        await nc.close()
    finally:
        handle.stop()
