// The timeline page's script (inlined into the page by fakejs.testkit.timeline_page.render).
//
// The events arrive as JSON (each event's field names once per shape, its values in a row) with the lanes
// each is drawn on (at) and its time in ns since the first event (t).  x follows the server clock, but consecutive events are at least a gap apart, so that
// events at the same instant (a manual clock's) stand side by side, in order; at "fit" the whole
// timeline fills the view.  The SVG is the size of the view and shows only what is in it: where marks
// of a lane would overlap (more than one event in a few pixels) the lane shows their density instead: a
// column as tall as they are many, topped in amber and red by the share of those worth seeing at any zoom
// (redeliveries and naks; terms, refusals and errors).  Marks are built with createElementNS and
// textContent only; one delegated listener shows an event's fields, or a column's summary, on hover or focus.
(function () {
"use strict";
var started = performance.now();
var data = JSON.parse(document.getElementById("timeline-data").textContent);
var parsed = performance.now();
var events = data.rows.map(function (row) {  // each row: its shape (field names) then the values
  var names = data.shapes[row[0]], event = {};
  for (var f = 0; f < names.length; f++) { event[names[f]] = row[f + 1]; }
  return event;
});
var at = data.at, time = data.t, count = events.length;
var NS = "http://www.w3.org/2000/svg";
var H = 36, AXIS = 24, PAD = 24, BUCKET = 8, ROOM_FOR_LABEL = 6, MAX_BARS = 400, MAX_LINKS = 40, WIDEST = 1.6e7;
var view = document.getElementById("view"), extent = document.getElementById("extent");
var svg = document.getElementById("marks"), lanesBox = document.getElementById("lanes");
var laneLabels = Array.prototype.slice.call(lanesBox.querySelectorAll(".lane"));
var details = document.getElementById("details"), zoomText = document.getElementById("zoomed");
var filters = {stream: "", consumer: "", client: ""};
var MARKERS = {"fault": 1, "clock.advance": 1};
var STATUS = {"pull.end": 1, "pull.filled": 1, "pull.heartbeat": 1};
var ACKS = {"ack": 1, "nak": 1, "term": 1, "progress": 1};
var LIFE = {"client": 1, "stream": 1, "consumer": 1};
var WARNING = {"redeliver": 1, "nak": 1}, ERROR = {"term": 1, "publish.error": 1, "conformance.violation": 1};

var slot = new Int32Array(count), pullOf = new Int32Array(count).fill(-1), endOf = new Int32Array(count).fill(-1);
var link = new Int32Array(count).fill(-1), classes = new Array(count), notable = new Uint8Array(count);  // 1 amber, 2 red

(function match() {  // which pull each status and delivery belongs to, what each event links to, how it looks
  var open = {}, used = {}, byCseq = {}, bySeq = {}, firstBySeq = {}, published = {};
  for (var i = 0; i < count; i++) {
    var e = events[i], lane = at[i][0], pull = lane + " " + (e.reply || e.target), seq = lane + " " + e.stream_seq;
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
    var target = -1;
    if (e.kind === "deliver") {
      target = e.delivery_count > 1 ? bySeq[seq] : published[e.stream + " " + e.stream_seq];
      bySeq[seq] = i; byCseq[lane + " " + e.consumer_seq] = i;
      if (!(seq in firstBySeq)) { firstBySeq[seq] = i; }
    } else if (ACKS[e.kind]) { target = byCseq[lane + " " + e.consumer_seq]; }
    else if (e.kind === "redeliver") { target = firstBySeq[seq]; }
    link[i] = target === undefined ? -1 : target;
    var name = e.kind.replace(/[^a-z]+/g, "-");
    if (e.kind === "pull.end") { name += " c" + e.code; }
    if (e.kind === "deliver" && e.delivery_count > 1) { name += " again"; }
    if (LIFE[e.kind.split(".")[0]]) { name += " life"; }
    classes[i] = name;
    notable[i] = ERROR[e.kind] || (e.kind === "pull.end" && e.code !== 408 && e.code !== 404) ? 2 :
      WARNING[e.kind] || (e.kind === "deliver" && e.delivery_count > 1) ? 1 : 0;
  }
})();

// -- what the filters leave, and where it goes (on a filter's change) ----------------------------------
var visible = new Int32Array(0), posOf = new Int32Array(count).fill(-1), unit = new Float64Array(0), total = 1;
var laneY = [], laneOrder = [], knotT = [], knotA = [], knotB = [], pulls = [], markers = [], span = 1;
var zoomed = 1, labelOf = laneLabels.map(function (label) { return label.textContent; });

function shown(e) {
  if (MARKERS[e.kind]) { return true; }
  return (!filters.stream || e.stream === filters.stream) && (!filters.consumer || e.consumer === filters.consumer) &&
    (!filters.client || String(e.client) === filters.client);
}
function layout() {
  var chosen = [], used = {};
  posOf.fill(-1);
  for (var i = 0; i < count; i++) {
    if (shown(events[i])) { posOf[i] = chosen.length; chosen.push(i); at[i].forEach(function (l) { used[l] = true; }); }
  }
  visible = Int32Array.from(chosen);
  laneY = []; laneOrder = [];
  laneLabels.forEach(function (label, l) {
    label.hidden = !used[l];
    if (used[l]) { laneY[l] = AXIS + H * laneOrder.length; laneOrder.push(l); }
  });
  var m = visible.length, first = m ? time[visible[0]] : 0;
  span = Math.max(m ? time[visible[m - 1]] - first : 0, 1);
  var gap = Math.min(1 / Math.max(m, 1), 0.05);  // the least step between two events, as a share of the whole
  unit = new Float64Array(m); knotT = []; knotA = []; knotB = [];
  for (var k = 0; k < m; k++) {
    var t = time[visible[k]];
    if (k > 0) { unit[k] = unit[k - 1] + Math.max((t - time[visible[k - 1]]) / span, gap); }
    if (knotT.length && knotT[knotT.length - 1] === t) { knotB[knotB.length - 1] = unit[k]; }
    else { knotT.push(t); knotA.push(unit[k]); knotB.push(unit[k]); }
  }
  total = m > 1 ? unit[m - 1] : 1;
  pulls = []; markers = [];
  visible.forEach(function (i) {
    if (events[i].kind === "pull.request") { pulls.push(i); }
    if (MARKERS[events[i].kind]) { markers.push(i); }
  });
}
function unitAt(t) {  // the position of a time between (or beyond) the events' own
  var lo = 0, hi = knotT.length;
  if (!hi) { return 0; }
  while (lo < hi) { var mid = (lo + hi) >> 1; if (knotT[mid] < t) { lo = mid + 1; } else { hi = mid; } }
  if (lo < knotT.length && knotT[lo] === t) { return knotA[lo]; }
  if (lo === 0) { return knotA[0] - (knotT[0] - t) / span; }
  if (lo === knotT.length) { return knotB[lo - 1] + (t - knotT[lo - 1]) / span; }
  return knotB[lo - 1] + (t - knotT[lo - 1]) / (knotT[lo] - knotT[lo - 1]) * (knotA[lo] - knotB[lo - 1]);
}
function timeAt(u) {  // the inverse: the time at a position
  var lo = 0, hi = knotT.length;
  if (!hi) { return 0; }
  while (lo < hi) { var mid = (lo + hi) >> 1; if (knotB[mid] < u) { lo = mid + 1; } else { hi = mid; } }
  if (lo === knotT.length) { return knotT[lo - 1] + (u - knotB[lo - 1]) * span; }
  if (u >= knotA[lo]) { return knotT[lo]; }
  if (lo === 0) { return knotT[0] - (knotA[0] - u) * span; }
  return knotT[lo - 1] + (u - knotB[lo - 1]) / (knotA[lo] - knotB[lo - 1]) * (knotT[lo] - knotT[lo - 1]);
}
function firstKnotAfter(u) {
  var lo = 0, hi = knotB.length;
  while (lo < hi) { var mid = (lo + hi) >> 1; if (knotB[mid] < u) { lo = mid + 1; } else { hi = mid; } }
  return lo;
}
function firstAtOrAfter(u) {
  var lo = 0, hi = unit.length;
  while (lo < hi) { var mid = (lo + hi) >> 1; if (unit[mid] < u) { lo = mid + 1; } else { hi = mid; } }
  return lo;
}

// -- drawing (on every zoom, scroll and resize) ------------------------------------------------------
var frame = {}, buckets = {}, scheduled = false, hot = null;

function el(name, attrs, parent) {
  var node = document.createElementNS(NS, name);
  for (var key in attrs) { node.setAttribute(key, attrs[key]); }
  parent.appendChild(node);
  return node;
}
function shape(kind, px, py) {
  var r = ACKS[kind] ? 3 : 4;
  if (kind === "deliver") { return "M" + px + " " + (py - r) + "l" + r + " " + r + "l" + -r + " " + r + "l" + -r + " " + -r + "z"; }
  if (STATUS[kind]) { return "M" + (px - r) + " " + (py - r) + "h" + 2 * r + "v" + 2 * r + "h" + -2 * r + "z"; }
  return "M" + (px - r) + " " + py + "a" + r + " " + r + " 0 1 0 " + 2 * r + " 0a" + r + " " + r + " 0 1 0 " + -2 * r + " 0";
}
function duration(ns, step, largest) {  // "+1.5 s", "+250 ms", "+3.2274 s": the unit of the largest, the step's digits
  var size = Math.max(Math.abs(largest === undefined ? ns : largest), step);
  var unitNs = size >= 1e9 ? 1e9 : size >= 1e6 ? 1e6 : size >= 1e3 ? 1e3 : 1;
  var digits = Math.min(9, Math.max(0, -Math.floor(Math.log10(step / unitNs) + 1e-9)));
  return (ns < 0 ? "-" : "+") + (Math.abs(ns) / unitNs).toFixed(digits) + " " + {1: "ns", 1e3: "µs", 1e6: "ms", 1e9: "s"}[unitNs];
}
function niceStep(raw) {
  var p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1))));
  return raw <= p ? p : raw <= 2 * p ? 2 * p : raw <= 5 * p ? 5 * p : 10 * p;
}
function rowOf(i, lane) {  // y within the view of an event's mark on a lane (a pull's own row on its consumer's)
  var y = laneY[lane] - frame.top + 10, p = events[i].kind === "pull.request" ? i : pullOf[i];
  if (lane === at[i][0] && p >= 0) { y += 6 + 5 * (slot[p] % 4); }
  return y;
}
function xOf(i) { return PAD + unit[posOf[i]] * frame.scale - frame.left; }

function draw() {
  scheduled = false;
  var started = performance.now(), width = view.clientWidth, height = view.clientHeight;
  var room = Math.max(width - 2 * PAD, 100), whole = AXIS + H * laneOrder.length;
  frame.scale = room / total * zoomed;
  extent.style.width = Math.ceil(2 * PAD + total * frame.scale) + "px";
  extent.style.height = whole + "px";
  frame.left = view.scrollLeft; frame.top = view.scrollTop; frame.width = width;
  lanesBox.scrollTop = frame.top;
  var shownHeight = Math.min(height, whole);
  svg.setAttribute("width", width); svg.setAttribute("height", shownHeight);
  svg.textContent = "";
  var under = el("g", {}, svg), density = el("g", {}, svg), lines = el("g", {}, svg), marks = el("g", {}, svg);
  var top = el("g", {}, svg);
  laneOrder.forEach(function (l, k) {
    el("rect", {"class": "band" + (k % 2 ? " odd" : ""), x: 0, y: laneY[l] - frame.top, width: width, height: H,
      "data-lane": l}, under);
  });
  if (!visible.length) {
    el("text", {"class": "empty", x: PAD, y: AXIS + 20}, top).textContent = "No events to show.";
  }
  drawAxis(under, top, shownHeight);
  var lo = firstAtOrAfter((frame.left - PAD - BUCKET * (ROOM_FOR_LABEL + 1)) / frame.scale);
  var hi = firstAtOrAfter((frame.left + width + BUCKET) / frame.scale);
  buckets = {};
  for (var k = lo; k < hi && k < visible.length; k++) {  // what falls in each lane's BUCKET-wide columns
    var i = visible[k], b = Math.floor((PAD + unit[k] * frame.scale) / BUCKET);
    if (MARKERS[events[i].kind]) { continue; }
    for (var j = 0; j < at[i].length; j++) {
      var key = at[i][j] + ":" + b, found = buckets[key];
      if (!found) { found = buckets[key] = {lane: at[i][j], b: b, count: 0, first: k, last: k, notable: [0, 0, 0]}; }
      found.count++; found.last = k; found.notable[notable[i]]++;
    }
  }
  var drawn = {}, most = 1, links = [], ties = [];
  Object.keys(buckets).forEach(function (key) { most = Math.max(most, buckets[key].count); });
  Object.keys(buckets).forEach(function (key) {
    var bucket = buckets[key], i = visible[bucket.first];
    if (bucket.count === 1) { drawMark(i, bucket.lane, marks, drawn, links, ties); return; }
    // a column as tall as the events are many, topped by a share in amber and red for the ones worth seeing
    var tall = Math.max(3, Math.round((H - 8) * Math.sqrt(bucket.count / most)));
    var x = bucket.b * BUCKET - frame.left, y = laneY[bucket.lane] - frame.top + H - 3 - tall;
    el("rect", {"class": "density", x: x, y: y, width: BUCKET - 1, height: tall, "data-bucket": key, tabindex: 0}, density);
    [[2, "error"], [1, "warning"]].forEach(function (level) {
      var some = bucket.notable[level[0]];
      if (!some) { return; }
      var part = Math.max(2, Math.round(tall * some / bucket.count));
      el("rect", {"class": "density " + level[1], x: x, y: y, width: BUCKET - 1, height: part, "data-bucket": key}, density);
      y += part;
    });
  });
  ties.forEach(function (tie) {  // an event drawn on two lanes (a publish: its stream's, its client's)
    var i = tie[0], px = xOf(i);
    if (drawn[i]) { el("path", {d: "M" + px + " " + rowOf(i, tie[1]) + "V" + rowOf(i, at[i][0]), "class": "tie " + classes[i]}, lines); }
  });
  // the links of redeliveries; the others where few are in view and near (hovering an event shows its own)
  links.forEach(function (i) {
    var near = Math.abs(xOf(link[i]) - xOf(i)) < frame.width;
    if (notable[i] || (near && links.length <= MAX_LINKS)) { drawLink(i, lines, ""); }
  });
  hot = el("g", {}, svg);
  drawBars(lines);
  drawMarkers(top, shownHeight);
  zoomText.textContent = zoomed === 1 ? "" : "× " + (zoomed < 10 ? zoomed.toFixed(1) : Math.round(zoomed));
  window.fakejsTimeline.draws++;
  window.fakejsTimeline.zoom = zoomed;
  window.fakejsTimeline.timings.lastDraw = performance.now() - started;
}
function drawMark(i, lane, marks, drawn, links, ties) {
  var e = events[i], px = xOf(i), py = rowOf(i, lane);
  el("path", {d: shape(e.kind, px, py), "class": "mark " + classes[i], "data-i": i, "data-lane": lane, tabindex: 0}, marks);
  if (lane !== at[i][0]) { ties.push([i, lane]); return; }
  drawn[i] = true;
  if (link[i] >= 0 && posOf[link[i]] >= 0) { links.push(i); }
  var text = e.kind === "publish" ? "#" + e.seq : e.kind === "pull.end" ? String(e.code) : "";
  if (text && roomAfter(lane, Math.floor((px + frame.left) / BUCKET), px + 5 + 6 * text.length)) {  // where it fits
    el("text", {"class": "label", x: px + 5, y: py - 5}, marks).textContent = text;
  }
}
function drawLink(i, group, extra) {  // on its own lane, an arc over what lies between
  var to = link[i], px = xOf(i), py = rowOf(i, at[i][0]), tx = xOf(to), ty = rowOf(to, at[to][0]);
  var bow = Math.min(8, Math.abs(px - tx) / 4 + 2);
  var d = at[to][0] === at[i][0] ? "Q" + (px + tx) / 2 + " " + (Math.min(py, ty) - bow) + " " : "L";
  el("path", {d: "M" + px + " " + py + d + tx + " " + ty, "class": "link " + classes[i] + extra, "data-i": i, "data-to": to}, group);
}
function highlight(i) {  // the links of a hovered event: to what it follows, from what follows it
  if (!hot) { return; }
  hot.textContent = "";
  if (link[i] >= 0 && posOf[link[i]] >= 0) { drawLink(i, hot, " hot"); }
  for (var k = 0; k < visible.length; k++) {
    if (link[visible[k]] === i) { drawLink(visible[k], hot, " hot"); }
  }
}
function roomAfter(lane, b, end) {  // whether the lane's next mark is to the right of `end`
  for (var n = 1; n <= ROOM_FOR_LABEL; n++) {
    var next = buckets[lane + ":" + (b + n)];
    if (next) { return xOf(visible[next.first]) - 4 >= end; }
  }
  return true;
}
function drawBars(lines) {  // each pull's bar, from its request to what ended it, where there is room for them
  var bars = [];
  for (var n = 0; n < pulls.length && bars.length <= MAX_BARS; n++) {
    var i = pulls[n], e = events[i], start = xOf(i), end = endOf[i];
    var stop = end >= 0 && posOf[end] >= 0 ? xOf(end) : PAD + unitAt(Math.min(time[i] + (e.expires || 0), knotT[knotT.length - 1])) * frame.scale - frame.left;
    if (stop < 0 || start > frame.width || stop - start < 3) { continue; }
    bars.push("M" + Math.max(start + 4, -1) + " " + rowOf(i, at[i][0]) + "H" + Math.min(stop, frame.width + 1));
  }
  if (bars.length <= MAX_BARS && bars.length) { el("path", {d: bars.join(""), "class": "bar pull-request"}, lines); }
}
function drawMarkers(top, shownHeight) {  // faults and clock advances: across every lane, one per column
  var seen = {};
  markers.forEach(function (i) {
    var px = xOf(i), b = Math.floor((px + frame.left) / BUCKET);
    if (px < -4 || px > frame.width + 4 || seen[b]) { return; }
    seen[b] = true;
    el("path", {d: "M" + px + " " + AXIS + "V" + shownHeight + "M" + (px - 4) + " " + (AXIS - 7) + "h8l-4 7z",
      "class": "mark marker " + classes[i], "data-i": i, tabindex: 0}, top);
  });
}
function drawAxis(under, top, shownHeight) {  // ticks at round times, labelled in the unit their step needs
  el("rect", {"class": "axis", x: 0, y: 0, width: frame.width, height: AXIS}, top);
  if (!visible.length) { return; }
  var from = timeAt((frame.left - PAD) / frame.scale), to = timeAt((frame.left + frame.width - PAD) / frame.scale);
  var step = niceStep(Math.max(to - from, 1) / Math.max(frame.width / 110, 1)), last = -Infinity;
  var knot = Math.max(0, firstKnotAfter((frame.left - PAD) / frame.scale) - 1);
  for (; knot < knotT.length && PAD + knotA[knot] * frame.scale - frame.left < frame.width; knot++) {
    var a = PAD + knotA[knot] * frame.scale - frame.left, b = PAD + knotB[knot] * frame.scale - frame.left;
    if (b - a > 12) { el("path", {"class": "instant", d: "M" + a + " " + (AXIS - 2) + "H" + b}, top); }  // one instant
  }
  for (var t = Math.ceil(from / step) * step, n = 0; t <= to && n < 400; t += step, n++) {
    var px = PAD + unitAt(t) * frame.scale - frame.left, text = duration(t, step, to);
    if (px < last) { continue; }
    last = px + 6.5 * text.length + 12;  // where the next label may start
    el("path", {"class": "tick", d: "M" + px + " " + (AXIS - 4) + "V" + shownHeight}, under);
    el("text", {"class": "ticktext", x: px + 2, y: 14}, top).textContent = text;
  }
}
function schedule() {
  if (!scheduled) { scheduled = true; requestAnimationFrame(draw); }
}

// -- zoom, scroll, filters and details -----------------------------------------------------------------
function zoomTo(factor, around) {  // keep what is under `around` (px from the view's left) where it is
  var room = Math.max(view.clientWidth - 2 * PAD, 100), before = zoomed;
  zoomed = Math.min(Math.max(zoomed * factor, 1), Math.max(WIDEST / room, 1));
  var left = (view.scrollLeft + around - PAD) * zoomed / before + PAD - around;
  extent.style.width = Math.ceil(2 * PAD + room * zoomed) + "px";
  view.scrollLeft = Math.max(left, 0);
  draw();
}
function fieldText(key, value) {
  if (key === "headers") {  // one line per header value
    var cell = document.createElement("div");
    if (!value) { cell.className = "none"; cell.textContent = "(none)"; return cell; }
    Object.keys(value).forEach(function (name) {
      value[name].forEach(function (one) {
        var line = document.createElement("div");
        line.className = "header-line"; line.textContent = name + ": " + one;
        cell.appendChild(line);
      });
    });
    return cell;
  }
  return document.createTextNode(typeof value === "string" ? value : JSON.stringify(value));
}
function table(rows) {
  var box = document.createElement("table");
  rows.forEach(function (pair) {
    var row = box.insertRow();
    row.insertCell().textContent = pair[0];
    var cell = row.insertCell();
    if (pair[1] instanceof Node) { cell.appendChild(pair[1]); } else { cell.textContent = pair[1]; }
  });
  return box;
}
function showEvent(i) {
  var e = events[i], rows = [["time", "+" + (time[i] / 1e6).toFixed(6) + " ms"]];
  Object.keys(e).forEach(function (key) {
    var value = key === "time_ns" ? String(BigInt(data.origin) + BigInt(time[i])) : e[key];
    rows.push([key, fieldText(key, value)]);
  });
  if (link[i] >= 0) { rows.push(["links to", "event " + events[link[i]].index + " (" + events[link[i]].kind + ")"]); }
  details.textContent = "";
  var heading = document.createElement("h2");
  heading.textContent = e.kind;
  details.appendChild(heading);
  details.appendChild(table(rows));
}
function showBucket(key) {
  var bucket = buckets[key];
  if (!bucket) { return; }
  var kinds = {}, n = 0, first = null, last = null;
  for (var k = bucket.first; k <= bucket.last; k++) {
    var i = visible[k];
    if (at[i].indexOf(bucket.lane) < 0) { continue; }
    kinds[events[i].kind] = (kinds[events[i].kind] || 0) + 1; n++;
    if (first === null) { first = i; }
    last = i;
  }
  var heading = document.createElement("h2"), spread = Math.max(time[last] - time[first], 1);
  heading.textContent = n + " events on " + labelOf[bucket.lane];
  var rows = [["from", duration(time[first], spread)], ["to", duration(time[last], spread)]];
  Object.keys(kinds).sort(function (a, b) { return kinds[b] - kinds[a]; }).forEach(function (kind) {
    rows.push([kind, String(kinds[kind])]);
  });
  var hint = document.createElement("p");
  hint.className = "hint"; hint.textContent = "Click (or ctrl + wheel) to zoom in and see each event.";
  details.textContent = "";
  details.appendChild(heading); details.appendChild(table(rows)); details.appendChild(hint);
}
function show(target) {
  if (!target || !target.getAttribute) { return; }
  var i = target.getAttribute("data-i"), key = target.getAttribute("data-bucket");
  if (i !== null) { showEvent(Number(i)); highlight(Number(i)); } else if (key !== null) { showBucket(key); }
}
function legend() {  // the marks' shapes and colours, drawn as the chart draws them
  var box = document.getElementById("legend");
  [["publish", "publish"], ["deliver", "delivery"], ["deliver again", "delivered again"], ["redeliver", "due again"],
   ["pull-request", "pull (its bar: until it ended)"], ["pull-end c408", "408"], ["pull-end", "other status"],
   ["ack", "ack"], ["nak", "nak"], ["density", "many events"], ["density warning", "of them: redelivered, nak'd"],
   ["density error", "terms, errors"], ["instant", "at one instant"]].forEach(function (entry) {
    var item = document.createElement("span"), icon = document.createElementNS(NS, "svg");
    icon.setAttribute("width", 10); icon.setAttribute("height", 10);
    var kind = entry[0].split(" ")[0].replace("-", ".");
    if (kind === "instant") { el("path", {"class": "instant", d: "M0 8H10"}, icon); }
    else if (kind === "density") { el("rect", {"class": entry[0], x: 2, y: 0, width: 7, height: 10}, icon); }
    else { el("path", {d: shape(kind, 5, 5), "class": entry[0]}, icon); }
    item.appendChild(icon); item.appendChild(document.createTextNode(entry[1]));
    box.appendChild(item);
  });
}
svg.addEventListener("mouseover", function (ev) { show(ev.target); });
svg.addEventListener("focusin", function (ev) { show(ev.target); });
svg.addEventListener("click", function (ev) {
  var key = ev.target.getAttribute && ev.target.getAttribute("data-bucket");
  if (key !== null && key !== undefined) { zoomTo(4, ev.clientX - view.getBoundingClientRect().left); }
});
view.addEventListener("wheel", function (ev) {
  if (!ev.ctrlKey) { return; }
  ev.preventDefault();
  zoomTo(Math.exp(-Math.max(-300, Math.min(300, ev.deltaY)) * 0.003), ev.clientX - view.getBoundingClientRect().left);
}, {passive: false});
view.addEventListener("scroll", schedule);
window.addEventListener("resize", schedule);
document.getElementById("controls").addEventListener("click", function (ev) {
  var how = ev.target.getAttribute && ev.target.getAttribute("data-zoom");
  if (how === "fit") { zoomed = 1; view.scrollLeft = 0; draw(); }
  else if (how) { zoomTo(how === "in" ? 1.5 : 1 / 1.5, view.clientWidth / 2); }
});
document.getElementById("controls").addEventListener("change", function (ev) {
  filters[ev.target.getAttribute("data-filter")] = ev.target.value;
  layout(); zoomed = 1; view.scrollLeft = 0; draw();
});
window.fakejsTimeline = {timings: {parse: parsed - started}, draws: 0};
legend();
var before = performance.now();
layout();
window.fakejsTimeline.timings.layout = performance.now() - before;
draw();
window.fakejsTimeline.timings.script = performance.now() - started;
window.fakejsTimeline.timings.sinceOpened = performance.now();  // from the page's navigation to its first draw
})();
