"""The timeline as a page: one self-contained HTML file that draws a server's events.

:func:`render` turns a timeline's document (what
:meth:`~fakejs.testkit.timeline.Timeline.document` returns: ``size``,
``dropped``, ``events``) into a page that opens from disk with no network:
its style and a small script are inline, and the script draws plain SVG.
There is a lane per client connection, per stream and per consumer (and
one for the server's own events), in the order a message travels; time on
the server clock runs along x.  A cluster's timeline (events with a
``node``) has the lanes of each node together, each labelled with its
node.  Which lane an event is drawn on is decided here (:func:`lane_keys`),
once, and handed to the script with the events.

The style and the script are package data beside this module
(``timeline_page.css``, ``timeline_page.js``), inlined into each page.  The
script draws only what is in view: a mark per event and the line that links
it (a delivery to the publish or the earlier delivery of its message, an ack
to its delivery, a redelivery to the original delivery, a pull request's bar
to its end) where the marks of a lane have room, and where they would
overlap, the lane's density, topped in amber and red by the share of
redeliveries, naks, terms and errors.  One delegated listener shows an
event's fields (its headers one per line) when it is hovered or focused.
The events travel as JSON in a ``<script type="application/json">``
element with ``<``, ``>`` and ``&`` escaped, so no subject or text can end it.
"""

from __future__ import annotations

import functools
import html
import json
import re
from collections.abc import Iterable
from importlib import resources
from typing import Any

__all__ = ["lane_keys", "lanes", "render", "shaped", "unshaped"]

SERVER_LANE = "server"
# Lane families in the order a message travels (a cluster's node lane first among its node's lanes).
FAMILIES = ("server", "node", "client", "stream", "consumer")

# A lane: the node it belongs to ("" outside a cluster), its family and its name in the family.
Lane = tuple[str, str, str]


def _lanes_of(event: dict[str, Any]) -> list[Lane]:
    node = event.get("node") or ""
    stream, consumer, client = event.get("stream"), event.get("consumer"), event.get("client")
    found: list[Lane] = []
    if stream is not None and consumer is not None:
        found.append((node, "consumer", f"{stream}/{consumer}"))
    elif stream is not None:
        found.append((node, "stream", str(stream)))
    if client is not None:  # a cluster numbers clients per node: the client's own node
        found.append((event.get("client_node") or node, "client", str(client)))
    return found or [(node, "node", node) if node else ("", "server", "")]


def _key(lane: Lane) -> str:
    node, family, name = lane
    if family in ("server", "node"):
        return f"node:{name}" if name else SERVER_LANE
    return f"{family}:{name}" + (f"@{node}" if node else "")


def lane_keys(event: dict[str, Any]) -> list[str]:
    """The lanes an event is drawn on: its consumer's, else its stream's; and its client's; else the server's.

    The first is where its mark is (and what links to it: a publish on its stream, a pull request on its
    consumer); the others get a mark tied to it.  An event of a cluster's timeline (with a ``node``) is on
    that node's lanes (``consumer:S/C@n1``; ``node:n1`` for its own events), a client on its own node's.
    """
    return [_key(lane) for lane in _lanes_of(event)]


def lanes(events: Iterable[dict[str, Any]]) -> list[tuple[str, str]]:
    """The lanes the events need, as (key, label): the server, clients by id, streams, consumers; a cluster's
    grouped by node."""
    names: dict[tuple[str, int], str] = {}
    found: dict[str, Lane] = {}
    for event in events:
        for lane in _lanes_of(event):
            found[_key(lane)] = lane
        if event["kind"].startswith("client.") and event.get("name"):
            names[(event.get("node") or "", event["client"])] = event["name"]

    def order(item: tuple[str, Lane]) -> tuple[str, int, int, str]:
        node, family, name = item[1]
        return (node, FAMILIES.index(family), int(name) if family == "client" else 0, name)

    return [(key, _label(lane, names)) for key, lane in sorted(found.items(), key=order)]


def _label(lane: Lane, names: dict[tuple[str, int], str]) -> str:
    node, family, name = lane
    if family == "node":
        return f"node {name}"
    if family == "client":
        known = names.get((node, int(name)))
        text = f"client {name}" + (f" · {known}" if known else "")
    elif family == "consumer":
        text = "consumer " + name.replace("/", " › ", 1)
    else:
        text = f"{family} {name}".strip()
    return f"{node} · {text}" if node else text


def render(document: dict[str, Any], title: str = "") -> str:
    """One self-contained HTML page showing the document's events (``title``: its heading)."""
    events: list[dict[str, Any]] = document["events"]
    drawn = lanes(events)
    position = {key: index for index, (key, _) in enumerate(drawn)}
    origin = events[0]["time_ns"] if events else 0
    data = {
        "size": document["size"],
        "dropped": document["dropped"],
        **shaped(events),
        "at": [[position[key] for key in lane_keys(event)] for event in events],
        # Server time as the script draws it: ns since the first event (a double holds those exactly).
        "origin": str(origin),
        "t": [event["time_ns"] - origin for event in events],
    }
    title = title or "fakejs timeline"
    style, script = _assets()
    replacements = {
        "TITLE": html.escape(title),
        "SUMMARY": html.escape(_summary(document)),
        "FILTERS": _filters(events),
        "LANES": "".join(
            f'<div class="lane" data-lane="{index}">{html.escape(label)}</div>'
            for index, (_, label) in enumerate(drawn)
        ),
        "DATA": _script_json(data),
        "STYLE": style,
        "SCRIPT": script,
    }
    # One pass: a marker inside an inserted text (a subject such as "@SCRIPT@") stays as it is.
    return _MARKER.sub(lambda found: replacements[found.group(1)], _PAGE)


@functools.cache
def _assets() -> tuple[str, str]:
    """The page's style and script: package data files beside this module, read once."""
    folder = resources.files(__package__ or "fakejs.testkit")
    return (folder / "timeline_page.css").read_text("utf-8"), (folder / "timeline_page.js").read_text("utf-8")


def _summary(document: dict[str, Any]) -> str:
    events = document["events"]
    shown = f"{len(events)} event{'' if len(events) == 1 else 's'}"
    if events:
        length = (events[-1]["time_ns"] - events[0]["time_ns"]) / 1e6
        shown += f" over {length:.3f} ms of server time, from {events[0]['time_ns']} ns on the server clock (+0 ms)"
    return (
        f"{shown}. The ring keeps the newest {document['size']} events; "
        f"{document['dropped']} older event{'' if document['dropped'] == 1 else 's'} dropped."
    )


def _filters(events: list[dict[str, Any]]) -> str:
    """A select box per filter (stream, consumer, client), its options the values the events hold."""
    boxes = []
    for name in ("stream", "consumer", "client"):
        values = sorted({event[name] for event in events if event.get(name) is not None})
        options = "".join(f'<option value="{html.escape(str(v))}">{html.escape(str(v))}</option>' for v in values)
        boxes.append(
            f'<label>{name} <select data-filter="{name}"><option value="">(all)</option>{options}</select></label>'
        )
    return "".join(boxes)


def shaped(events: list[dict[str, Any]]) -> dict[str, list[list[Any]]]:
    """The events as the page carries them: each event's field names once per shape (``shapes``), and per
    event (``rows``) the index of its shape then its values, in that shape's order (half the bytes of
    repeating every name in every event)."""
    shapes: dict[tuple[str, ...], int] = {}
    rows = [[shapes.setdefault(tuple(event), len(shapes)), *event.values()] for event in events]
    return {"shapes": [list(names) for names in shapes], "rows": rows}


def unshaped(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The events back from a page's ``shapes`` and ``rows`` (what the page's script does when it loads)."""
    shapes = data["shapes"]
    return [dict(zip(shapes[row[0]], row[1:], strict=True)) for row in data["rows"]]


def _script_json(data: Any) -> str:
    """JSON that a ``<script>`` element holds safely: no ``</script>``, ``<!--`` or entity can form."""
    text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


_MARKER = re.compile(r"@(TITLE|SUMMARY|FILTERS|LANES|DATA|STYLE|SCRIPT)@")

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy"
 content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>@TITLE@</title>
<style>@STYLE@</style>
</head>
<body>
<header>
<h1>@TITLE@</h1>
<p id="summary">@SUMMARY@</p>
<form id="controls">@FILTERS@
<span><button type="button" data-zoom="in" title="zoom in (or ctrl + wheel over the chart)">+</button>
<button type="button" data-zoom="out" title="zoom out">&minus;</button>
<button type="button" data-zoom="fit" title="the whole timeline">fit</button>
<span id="zoomed"></span></span>
</form>
<div id="legend"></div>
</header>
<main>
<div id="lanes"><div id="lane-list">@LANES@</div></div>
<div id="view"><div id="extent"><svg id="marks" xmlns="http://www.w3.org/2000/svg" role="img"
 aria-label="events by lane over server time"></svg></div></div>
<aside id="details"><p>Hover over or focus an event to see its fields; over a shaded column, what it holds.</p></aside>
</main>
<script type="application/json" id="timeline-data">@DATA@</script>
<script>@SCRIPT@</script>
</body>
</html>
"""
