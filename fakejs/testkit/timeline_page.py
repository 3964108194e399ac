"""The timeline as a page: one self-contained HTML file that draws a server's events.

:func:`render` turns a timeline's document (what
:meth:`~fakejs.testkit.timeline.Timeline.document` returns: ``size``,
``dropped``, ``events``) into a page that opens from disk with no network:
its style and a small script are inline, and the script draws plain SVG.
There is a lane per client connection, per stream and per consumer (and
one for the server's own events), in the order a message travels; time on
the server clock runs along x.  Which lane an event is drawn on is decided
here (:func:`lane_keys`), once, and handed to the script with the events.

The script draws one SVG element per event (a mark, and the line that links
it: a delivery to the publish or the earlier delivery of its message, an
ack to its delivery, a redelivery to the original delivery, a pull request
to its end); one delegated listener shows an event's fields when it is
hovered or focused.  The events travel as JSON in a
``<script type="application/json">`` element with ``<``, ``>`` and ``&``
escaped, so no subject or text can end it.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable
from typing import Any

__all__ = ["lane_keys", "lanes", "render"]

SERVER_LANE = "server"


def lane_keys(event: dict[str, Any]) -> list[str]:
    """The lanes an event is drawn on: its consumer's; else its stream's and its client's; else the server's.

    The first is where its mark is (and what links to it: a publish on its stream); the others get a mark tied to it.
    """
    stream, consumer, client = event.get("stream"), event.get("consumer"), event.get("client")
    if stream is not None and consumer is not None:
        return [f"consumer:{stream}/{consumer}"]
    keys = [f"stream:{stream}"] if stream is not None else []
    if client is not None:
        keys.append(f"client:{client}")
    return keys or [SERVER_LANE]


def lanes(events: Iterable[dict[str, Any]]) -> list[tuple[str, str]]:
    """The lanes the events need, as (key, label): the server, clients by id, streams, consumers."""
    names: dict[int, str] = {}
    keys: set[str] = set()
    for event in events:
        keys.update(lane_keys(event))
        if event["kind"].startswith("client.") and event.get("name"):
            names[event["client"]] = event["name"]

    def order(key: str) -> tuple[int, Any]:
        family, _, rest = key.partition(":")
        rank = ("server", "client", "stream", "consumer").index(family)
        return (rank, int(rest) if family == "client" else rest)

    return [(key, _label(key, names)) for key in sorted(keys, key=order)]


def _label(key: str, names: dict[int, str]) -> str:
    family, _, rest = key.partition(":")
    if family == "client":
        name = names.get(int(rest))
        return f"client {rest}" + (f" · {name}" if name else "")
    if family == "consumer":
        return "consumer " + rest.replace("/", " › ", 1)
    return f"{family} {rest}".strip()


def render(document: dict[str, Any], title: str = "") -> str:
    """One self-contained HTML page showing the document's events (``title``: its heading)."""
    events: list[dict[str, Any]] = document["events"]
    drawn = lanes(events)
    position = {key: index for index, (key, _) in enumerate(drawn)}
    origin = events[0]["time_ns"] if events else 0
    data = {
        "size": document["size"],
        "dropped": document["dropped"],
        "events": events,
        "at": [[position[key] for key in lane_keys(event)] for event in events],
        # Server time as the script draws it: ns since the first event (a double holds those exactly).
        "origin": str(origin),
        "t": [event["time_ns"] - origin for event in events],
    }
    title = title or "fakejs timeline"
    replacements = {
        "@TITLE@": html.escape(title),
        "@SUMMARY@": html.escape(_summary(document)),
        "@FILTERS@": _filters(events),
        "@LANES@": "".join(
            f'<div class="lane" data-lane="{index}">{html.escape(label)}</div>'
            for index, (_, label) in enumerate(drawn)
        ),
        "@DATA@": _script_json(data),
        "@STYLE@": _STYLE,
        "@SCRIPT@": _SCRIPT,
    }
    page = _PAGE
    for marker, text in replacements.items():
        page = page.replace(marker, text)
    return page


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


def _script_json(data: Any) -> str:
    """JSON that a ``<script>`` element holds safely: no ``</script>``, ``<!--`` or entity can form."""
    text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


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
<button type="button" data-zoom="in" title="zoom in (or ctrl + wheel)">+</button>
<button type="button" data-zoom="out" title="zoom out">&minus;</button>
<button type="button" data-zoom="fit" title="the whole timeline">fit</button>
</form>
</header>
<main>
<div id="lanes">@LANES@</div>
<div id="chart"><svg id="marks" xmlns="http://www.w3.org/2000/svg" role="img"
 aria-label="events by lane over server time"></svg></div>
<aside id="details"><p>Hover over or focus an event to see its fields.</p></aside>
</main>
<script type="application/json" id="timeline-data">@DATA@</script>
<script>@SCRIPT@</script>
</body>
</html>
"""

_STYLE = """
body { font: 13px/1.4 system-ui, sans-serif; margin: 0; color: #222; }
header { padding: 8px 12px; border-bottom: 1px solid #ccc; }
h1 { font-size: 16px; margin: 0 0 4px; }
#summary { margin: 0 0 6px; color: #555; }
#controls label { margin-right: 10px; }
main { display: flex; align-items: flex-start; }
#lanes { flex: none; width: 190px; padding-top: 24px; }
.lane { height: 36px; box-sizing: border-box; padding: 4px 6px; overflow: hidden; white-space: nowrap;
  text-overflow: ellipsis; border-top: 1px solid #eee; }
.lane[hidden] { display: none; }
#chart { flex: 1; overflow-x: auto; min-width: 0; }
#details { flex: none; width: 260px; padding: 6px 10px; border-left: 1px solid #ccc; position: sticky; top: 0;
  max-height: 100vh; overflow: auto; }
#details table { border-collapse: collapse; }
#details td { padding: 1px 6px 1px 0; vertical-align: top; word-break: break-all; }
#details td:first-child { color: #666; white-space: nowrap; }
svg path { stroke-width: 1.2; stroke-opacity: 0.7; }
svg path:hover, svg path:focus { stroke-width: 3; stroke-opacity: 1; outline: none; }
.band { fill: #fafafa; } .band.odd { fill: #f1f4f8; }
.tick { stroke: #ddd; } .ticktext, .label { font-size: 10px; fill: #555; }
.publish { fill: #2b6cb0; stroke: #2b6cb0; } .publish-error { fill: #c53030; stroke: #c53030; }
.deliver { fill: #2f855a; stroke: #68a37f; } .deliver.again { fill: #dd6b20; stroke: #dd6b20; }
.pull-request { fill: #fff; stroke: #4a5568; } .pull-filled { fill: #2f855a; stroke: #2f855a; }
.pull-end { fill: #c53030; stroke: #c53030; } .pull-end.c408 { fill: #d69e2e; stroke: #d69e2e; }
.pull-heartbeat { fill: #a0aec0; stroke: #a0aec0; }
.ack { fill: #276749; stroke: #9ac0a8; } .nak { fill: #dd6b20; stroke: #dd6b20; }
.term { fill: #9b2c2c; stroke: #9b2c2c; } .progress { fill: #718096; stroke: #a0aec0; }
.redeliver { fill: #dd6b20; stroke: #dd6b20; stroke-dasharray: 4 2; }
.fault { fill: #805ad5; stroke: #805ad5; stroke-dasharray: 5 3; }
.clock-advance { fill: #718096; stroke: #718096; stroke-dasharray: 2 3; }
.conformance-violation { fill: #c53030; stroke: #c53030; }
.other { fill: #a0aec0; stroke: #718096; }
"""

# One delegated listener for details; marks are built with createElementNS and textContent only.
# x follows the server clock, but consecutive events are at least a gap apart (one that grows as one
# zooms in), so that events at the same instant (a manual clock's) stand side by side, in order.
_SCRIPT = """
(function () {
"use strict";
var data = JSON.parse(document.getElementById("timeline-data").textContent);
var events = data.events, at = data.at, time = data.t, NS = "http://www.w3.org/2000/svg";
var H = 36, AXIS = 24, PAD = 24, LABELS = 400, WIDEST = 1e6;  // px: what a browser still draws
var svg = document.getElementById("marks"), chart = document.getElementById("chart");
var laneLabels = document.querySelectorAll(".lane"), details = document.getElementById("details");
var filters = {stream: "", consumer: "", client: ""};
var span = Math.max(time.length ? time[time.length - 1] : 0, 1e6);
var zoomed = 1, slot = {}, pullOf = {}, endOf = {}, link = {};
var MARKERS = {"fault": 1, "clock.advance": 1};
var STATUS = {"pull.end": 1, "pull.filled": 1, "pull.heartbeat": 1};
var ACKS = {"ack": 1, "nak": 1, "term": 1, "progress": 1};

(function match() {  // which pull each status and delivery belongs to, and what each event links to
  var open = {}, used = {}, byCseq = {}, bySeq = {}, firstBySeq = {}, published = {};
  events.forEach(function (e, i) {
    var lane = at[i][0], pull = lane + " " + (e.reply || e.target), seq = lane + " " + e.stream_seq;
    if (e.kind === "publish") { published[e.stream + " " + e.seq] = i; }
    if (e.kind === "pull.request") {
      var taken = used[lane] || (used[lane] = []), s = 0;
      while (taken[s]) { s++; }
      taken[s] = true; slot[i] = s; (open[pull] || (open[pull] = [])).push(i);
    } else if (STATUS[e.kind] || e.kind === "deliver") {
      var waiting = open[pull];
      if (waiting && waiting.length) {
        pullOf[i] = waiting[0];
        if (e.kind === "pull.end" || e.kind === "pull.filled") {
          endOf[waiting[0]] = i; used[lane][slot[waiting[0]]] = false; waiting.shift();
        }
      }
    }
    if (e.kind === "deliver") {
      link[i] = e.delivery_count > 1 ? bySeq[seq] : published[e.stream + " " + e.stream_seq];
      bySeq[seq] = i; byCseq[lane + " " + e.consumer_seq] = i;
      if (!(seq in firstBySeq)) { firstBySeq[seq] = i; }
    } else if (ACKS[e.kind]) { link[i] = byCseq[lane + " " + e.consumer_seq]; }
    else if (e.kind === "redeliver") { link[i] = firstBySeq[seq]; }
  });
})();

function shown(e) {
  if (MARKERS[e.kind]) { return true; }
  return (!filters.stream || e.stream === filters.stream) && (!filters.consumer || e.consumer === filters.consumer) &&
    (!filters.client || String(e.client) === filters.client);
}
function el(name, attrs, parent) {
  var node = document.createElementNS(NS, name);
  Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); });
  parent.appendChild(node);
  return node;
}
function shape(kind, px, py) {
  var r = ACKS[kind] ? 3 : 4;
  if (kind === "deliver") { return "M" + px + " " + (py - r) + "l" + r + " " + r + "l" + -r + " " + r + "l" + -r + " " + -r + "z"; }
  if (STATUS[kind]) { return "M" + (px - r) + " " + (py - r) + "h" + 2 * r + "v" + 2 * r + "h" + -2 * r + "z"; }
  return "M" + (px - r) + " " + py + "a" + r + " " + r + " 0 1 0 " + 2 * r + " 0a" + r + " " + r + " 0 1 0 " + -2 * r + " 0";
}
function axis(visible) {  // x of each visible event, and of any time (between two events: in proportion)
  var room = Math.max(chart.clientWidth - 2 * PAD, 200), scale = room / span * zoomed;
  var gap = Math.min(8, room / Math.max(visible.length, 1)) * zoomed, xs = {}, knots = [], cur = PAD, last = null;
  visible.forEach(function (i) {
    if (last !== null) { cur += Math.max((time[i] - last) * scale, gap); }
    if (last !== time[i]) { knots.push([time[i], cur, cur]); } else { knots[knots.length - 1][2] = cur; }
    xs[i] = cur; last = time[i];
  });
  function x(t) {
    var lo = 0, hi = knots.length;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (knots[mid][0] < t) { lo = mid + 1; } else { hi = mid; } }
    if (lo < knots.length && knots[lo][0] === t) { return knots[lo][1]; }
    if (lo === 0) { return PAD + (t - (knots.length ? knots[0][0] : 0)) * scale; }
    var a = knots[lo - 1], b = knots[lo];
    return b ? a[2] + (t - a[0]) / (b[0] - a[0]) * (b[1] - a[2]) : a[2] + (t - a[0]) * scale;
  }
  return {xs: xs, x: x, scale: scale, width: Math.ceil(cur + PAD + 40)};
}
function draw() {
  var visible = [], lanesUsed = {}, laneY = {}, n = 0, pos = {};
  events.forEach(function (e, i) {
    if (shown(e)) { visible.push(i); at[i].forEach(function (l) { lanesUsed[l] = true; }); }
  });
  laneLabels.forEach(function (label, l) {
    label.hidden = !lanesUsed[l];
    if (lanesUsed[l]) { laneY[l] = AXIS + H * n++; }
  });
  var ax = axis(visible), x = ax.x, width = ax.width, height = AXIS + H * n;
  svg.textContent = "";
  svg.setAttribute("width", width); svg.setAttribute("height", height);
  Object.keys(laneY).forEach(function (l, k) {
    el("rect", {"class": "band" + (k % 2 ? " odd" : ""), x: 0, y: laneY[l], width: width, height: H}, svg);
  });
  var step = Math.pow(10, Math.ceil(Math.log10(120 / ax.scale))), digits = Math.max(0, Math.ceil(-Math.log10(step / 1e6)));
  if (step * ax.scale > 240) { step /= 2; digits += 1; }
  for (var t = 0, last = -Infinity; t <= span; t += step) {
    if (x(t) - last < 80) { continue; }
    last = x(t);
    el("path", {"class": "tick", d: "M" + last + " " + (AXIS - 4) + "V" + height}, svg);
    el("text", {"class": "ticktext", x: last + 2, y: 12}, svg).textContent = "+" + (t / 1e6).toFixed(digits) + " ms";
  }
  visible.forEach(function (i) {  // where each event's mark is: its lane, and a pull's own row within a consumer's
    var e = events[i], y = laneY[at[i][0]] + 9, p = e.kind === "pull.request" ? i : pullOf[i];
    if (p !== undefined) { y += 6 + 5 * (slot[p] % 4); }
    pos[i] = [ax.xs[i], y];
  });
  visible.forEach(function (i) {
    var e = events[i], px = pos[i][0], py = pos[i][1], d, cls = e.kind.replace(/[^a-z]+/g, "-");
    if (MARKERS[e.kind]) {
      d = "M" + px + " " + AXIS + "V" + height + "M" + (px - 4) + " " + (AXIS - 6) + "h8l-4 6z";
    } else {
      d = shape(e.kind, px, py);
      at[i].slice(1).forEach(function (l) { d += shape(e.kind, px, laneY[l] + 9) + "M" + px + " " + py + "V" + (laneY[l] + 9); });
      if (e.kind === "pull.request") {
        var end = pos[endOf[i]] ? pos[endOf[i]][0] : x(endOf[i] !== undefined ? time[endOf[i]] : Math.min(time[i] + (e.expires || 0), span));
        d += "M" + (px + 4) + " " + py + "H" + Math.max(end, px + 4);
      }
      if (e.kind === "deliver" && pullOf[i] !== undefined) { d += "M" + px + " " + (laneY[at[i][0]] + 9) + "V" + py; }
      if (pos[link[i]]) { d += "M" + px + " " + py + "L" + pos[link[i]][0] + " " + pos[link[i]][1]; }
      if (e.kind === "pull.end") { cls += " c" + e.code; }
      if (e.kind === "deliver" && e.delivery_count > 1) { cls += " again"; }
    }
    el("path", {d: d, "class": cls, "data-i": i, tabindex: 0}, svg);
    var text = e.kind === "publish" ? "#" + e.seq : e.kind === "pull.end" ? String(e.code) : "";
    if (text && visible.length <= LABELS) { el("text", {"class": "label", x: px + 5, y: py - 5}, svg).textContent = text; }
  });
}
function zoom(factor, around) {
  var before = Number(svg.getAttribute("width")), most = WIDEST / Math.max(chart.clientWidth, 200) / 2;
  zoomed = Math.min(Math.max(zoomed * factor, 0.5), most);
  draw();
  chart.scrollLeft = (chart.scrollLeft + around) * Number(svg.getAttribute("width")) / before - around;
}
function show(target) {
  var i = target && target.getAttribute && target.getAttribute("data-i");
  if (i === null || i === undefined) { return; }
  var e = events[i], table = document.createElement("table");
  var rows = [["time", "+" + (time[i] / 1e6).toFixed(6) + " ms"]];
  Object.keys(e).forEach(function (key) {
    var value = key === "time_ns" ? String(BigInt(data.origin) + BigInt(time[i])) : e[key];
    rows.push([key, typeof value === "string" ? value : JSON.stringify(value)]);
  });
  rows.forEach(function (pair) {
    var row = table.insertRow();
    row.insertCell().textContent = pair[0];
    row.insertCell().textContent = pair[1];
  });
  details.textContent = "";
  details.appendChild(table);
}
svg.addEventListener("mouseover", function (ev) { show(ev.target); });
svg.addEventListener("focusin", function (ev) { show(ev.target); });
chart.addEventListener("wheel", function (ev) {
  if (!ev.ctrlKey) { return; }
  ev.preventDefault();
  zoom(ev.deltaY < 0 ? 1.25 : 0.8, ev.clientX - chart.getBoundingClientRect().left);
}, {passive: false});
document.getElementById("controls").addEventListener("click", function (ev) {
  var how = ev.target.getAttribute("data-zoom");
  if (how === "fit") { zoomed = 1; draw(); chart.scrollLeft = 0; }
  else if (how) { zoom(how === "in" ? 1.5 : 1 / 1.5, chart.clientWidth / 2); }
});
document.getElementById("controls").addEventListener("change", function (ev) {
  filters[ev.target.getAttribute("data-filter")] = ev.target.value;
  draw();
});
draw();
})();
"""
