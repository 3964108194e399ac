"""Every control request is read against its declaration, over HTTP and over NATS.

For each request (and for a fault's ``args`` per action and per event change,
and its ``match`` per hook point) the cases are made from the declaration
itself: a field it does not list, each field with a value of another type,
each required field left out.  Each gets HTTP 400, and over NATS the same
``{"error": ...}``, naming the field and what it expects; nothing runs and
nothing is logged.  Valid requests are still served.
"""

from __future__ import annotations

import asyncio
import difflib
import inspect
import json
import logging
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import nats
import pytest

from fakejs import ManualClock, Server
from fakejs.core.hooks import HOOK_POINTS
from fakejs.jetstream.errors import API_FAILURES
from fakejs.testkit.arguments import ACTION_ARGUMENTS, API_ERROR, CHANGE_ARGUMENTS, match_keys
from fakejs.testkit.control import ACTIONS
from fakejs.testkit.control_reference import with_reference
from fakejs.testkit.control_routes import ROUTES, find_route
from fakejs.testkit.schema import (
    BOOLEAN,
    INTEGER,
    NUMBER,
    OBJECT,
    STRING,
    STRING_OR_INTEGER,
    Field,
    Kind,
    Request,
    SchemaError,
)

PAGE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "control-api.md"
UNKNOWN = "no_such_field"
# A value each type takes, and one it does not (booleans are not numbers; a float is not an integer).
GOOD: dict[Kind, Any] = {NUMBER: 1, INTEGER: 1, STRING: "x", BOOLEAN: False, STRING_OR_INTEGER: "x", OBJECT: {}}
WRONG: dict[Kind, Any] = {NUMBER: True, INTEGER: 1.5, STRING: 7, BOOLEAN: "yes", STRING_OR_INTEGER: [1], OBJECT: "x"}


def good(spec: Field) -> Any:
    return spec.choices[0] if spec.choices else GOOD[spec.kind]


def minimal(request: Request) -> dict[str, Any]:
    """The smallest body the declaration accepts: its required fields, and the first of its one-of group."""
    body = {spec.name: good(spec) for spec in request.fields if spec.required}
    if request.one_of:
        body[request.one_of[0]] = good(request.field(request.one_of[0]))
    return body


def refusals(request: Request, where: str) -> list[tuple[dict[str, Any], str]]:
    """Bodies the declaration refuses, each with the message naming what is wrong."""
    known = ", ".join(f'"{name}"' for name in sorted(spec.name for spec in request.fields))
    expected = f"expected one of {known}" if known else "it takes no fields"
    cases = [({**minimal(request), UNKNOWN: 1}, f'unknown field "{UNKNOWN}" in {where}: {expected}')]
    for spec in request.fields:
        wrong = WRONG[spec.kind]
        body = {spec.name: wrong} if spec.name in request.one_of else {**minimal(request), spec.name: wrong}
        cases.append((body, f'field "{spec.name}" of {where}: expected {spec.expects}, got {json.dumps(wrong)}'))
        if spec.required:
            body = {key: value for key, value in minimal(request).items() if key != spec.name}
            cases.append((body, f'missing field "{spec.name}" in {where}: expected {spec.expects}'))
    return cases


def fault_with(key: str, inner: dict[str, Any], on: str | None, do: str) -> dict[str, Any]:
    trigger: dict[str, Any] = {"on": on} if on is not None else {"at": 1}
    return {**trigger, "do": do, key: inner}


def nested_refusals(key: str, request: Request, on: str | None, do: str) -> list[tuple[dict[str, Any], str]]:
    label = request.name.rsplit("/", 1)[-1]
    return [
        (fault_with(key, inner, on, do), message) for inner, message in refusals(request, f"faults/add {key} ({label})")
    ]


def first_point(change: str) -> str:
    return next(point for point, (_, changes) in HOOK_POINTS.items() if change in changes)


# Every request's refusals, by what they are about: (path, [(body, message), ...]).
CASES: dict[str, tuple[str, list[tuple[dict[str, Any], str]]]] = {
    route.request.name: (route.request.name, refusals(route.request, route.request.name)) for route in ROUTES
}
for _name, _request in ACTION_ARGUMENTS.items():
    CASES[f"faults/add args ({_name})"] = ("faults/add", nested_refusals("args", _request, None, _name))
for _name, _request in CHANGE_ARGUMENTS.items():
    _point = first_point(_name)
    CASES[f"faults/add args ({_name} at {_point})"] = (
        "faults/add",
        nested_refusals("args", _request, _point, _name),
    )
for _point, (_, _changes) in HOOK_POINTS.items():
    _match = match_keys(_point)
    assert _match is not None
    CASES[f"faults/add match ({_point})"] = ("faults/add", nested_refusals("match", _match, _point, min(_changes)))


async def over_http(server: Server, path: str, body: bytes) -> tuple[int, Any]:
    def call() -> tuple[int, Any]:
        request = urllib.request.Request(
            f"{server.http_url}/fakejs/{path}", data=body, method="POST", headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    return await asyncio.to_thread(call)


async def over_nats(nc: nats.NATS, path: str, body: bytes) -> Any:
    reply = await nc.request("$FAKEJS." + path.replace("/", ".").upper(), body, timeout=5)
    return json.loads(reply.data)


async def both(server: Server, nc: nats.NATS, path: str, body: Any) -> list[tuple[int, Any]]:
    """The HTTP status and reply, and the NATS reply (as status 400 when it is an error, else 200).

    A request the wire does not carry (a page: HTTP only) has its HTTP answer alone.
    """
    data = json.dumps(body).encode() if not isinstance(body, bytes) else body
    status, doc = await over_http(server, path, data)
    if not on_wire(path):
        return [(status, doc)]
    over = await over_nats(nc, path, data)
    return [(status, doc), (400 if "error" in over else 200, over)]


def on_wire(path: str) -> bool:
    route = find_route(path.split("/"))
    return route is None or route.subject is not None


@pytest.mark.parametrize("about", list(CASES))
async def test_what_the_declaration_does_not_allow_is_refused_naming_the_field(
    about: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="fakejs")
    path, cases = CASES[about]
    assert cases
    async with Server(http_port=0, clock=ManualClock()) as server:
        nc = await nats.connect(server.url)
        for body, message in cases:
            assert await both(server, nc, path, body) == [(400, {"error": message})] * (1 + on_wire(path)), body
        await nc.close()
        assert server.faults.installed() == [] and server.clock.monotonic() == 0
        assert server.errors == []
    assert not [record for record in caplog.records if record.exc_info or record.levelno >= logging.WARNING]


def test_every_request_and_every_argument_list_has_cases() -> None:
    assert {route.request.name for route in ROUTES} <= set(CASES)
    assert all(f"faults/add args ({name})" in CASES for name in ACTION_ARGUMENTS)
    assert all(any(about.startswith(f"faults/add match ({point})") for about in CASES) for point in HOOK_POINTS)
    assert {route.request.name for route in ROUTES if route.path[0] == "action"} == {
        f"action/{name}" for name in ACTION_ARGUMENTS
    }


@pytest.mark.parametrize(
    ("body", "text"),
    [
        (b"[1, 2]", "the request body must be a JSON object, not an array"),
        (b'"seconds"', "the request body must be a JSON object, not a string"),
        (b"null", "the request body must be a JSON object, not null"),
        (b"30", "the request body must be a JSON object, not a number"),
        (b"{", "the request body is not JSON"),
    ],
)
async def test_a_body_that_is_not_a_json_object_is_refused(body: bytes, text: str) -> None:
    async with Server(http_port=0, clock=ManualClock()) as server:
        nc = await nats.connect(server.url)
        for status, doc in await both(server, nc, "clock/advance", body):
            assert status == 400 and doc["error"].startswith(text), doc
        await nc.close()


async def test_booleans_are_not_numbers_and_json_integers_are() -> None:
    async with Server(http_port=0, clock=ManualClock()) as server:
        nc = await nats.connect(server.url)
        refused = '{"error": "field \\"seconds\\" of clock/advance: expected a number >= 0, got false"}'
        assert await both(server, nc, "clock/advance", b'{"seconds": false}') == [(400, json.loads(refused))] * 2
        served = await both(server, nc, "clock/advance", {"seconds": 2})
        assert [doc["now"] for _, doc in served] == [2, 4]
        served = await both(server, nc, "clock/advance", {"seconds": 0.5})
        assert [doc["now"] for _, doc in served] == [4.5, 5]
        await nc.close()


async def test_the_examples_of_the_task_read_as_they_should() -> None:
    async with Server(http_port=0, clock=ManualClock()) as server:
        nc = await nats.connect(server.url)
        for body, message in [
            ({"secs": 120}, 'unknown field "secs" in clock/advance: expected one of "seconds"'),
            ({"seconds": "ten"}, 'field "seconds" of clock/advance: expected a number >= 0, got "ten"'),
            ({"seconds": -1}, 'field "seconds" of clock/advance: expected a number >= 0, got -1'),
            ({}, 'missing field "seconds" in clock/advance: expected a number >= 0'),
        ]:
            assert await both(server, nc, "clock/advance", body) == [(400, {"error": message})] * 2
        assert server.clock.monotonic() == 0
        await nc.close()


async def test_a_scenario_sent_as_toml_has_its_steps_read_against_the_same_declarations() -> None:
    toml = '[[steps]]\nat = 5.0\ndo = "delay_deliveries"\nargs = { secs = 1 }\n'
    message = (
        '<request>:4 (steps[0].args): unknown field "secs" in args (delay_deliveries): '
        'expected one of "consumer", "count", "seconds", "stream"'
    )
    async with Server(http_port=0) as server:
        nc = await nats.connect(server.url)
        assert await both(server, nc, "scenario/start", {"toml": toml}) == [(400, {"error": message})] * 2
        await nc.close()
        assert server.faults.installed() == []


async def test_valid_requests_are_served_over_both_transports(tmp_path: Path) -> None:
    async with Server(http_port=0, clock=ManualClock(), conformance=True) as server:
        nc = await nats.connect(server.url, name="worker")
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s.>"], storage="memory")
        await js.add_consumer("S", durable_name="C")
        for path, body, check in [
            ("clock/advance", {"seconds": 1}, lambda doc: doc["fired"] >= 0),
            ("clock", {}, lambda doc: doc["manual"] is True),
            (
                "faults/add",
                {
                    "on": "pull.request",
                    "match": {"stream": "S", "consumer": "C"},
                    "do": "reply_status",
                    "args": {"code": 409, "text": "Leadership Change"},
                    "times": None,
                    "name": "pulls",
                },
                lambda doc: doc["args"] == {"code": 409, "text": "Leadership Change"} and "times" not in doc,
            ),
            (
                "faults/add",
                {"at": 30, "do": "delay_deliveries", "args": {"seconds": 1, "stream": "S", "count": 2}},
                lambda doc: doc["at"] == 30,
            ),
            (
                "faults/add",
                {"on": "client.ping", "match": {"cid": 1}, "do": "ignore"},
                lambda doc: doc["do"] == "ignore",
            ),
            ("faults/remove", {"id": 1}, lambda doc: doc["removed"] in (True, False)),
            ("faults", {}, lambda doc: {fault["do"] for fault in doc["faults"]} >= {"delay_deliveries", "ignore"}),
            ("action/answer_pulls", {"stream": "S", "consumer": "C", "code": 503}, lambda doc: doc["times"] == 1),
            ("action/fail_api", {"error": "insufficient_resources", "count": None}, lambda doc: "times" not in doc),
            ("action/stall", {"client": 12345}, lambda doc: doc["match"] == {"cid": 12345}),
            ("action/disconnect", {"client": "nobody", "abrupt": True}, lambda doc: doc == {"disconnected": []}),
            ("faults/clear", {}, lambda doc: doc == {"cleared": True}),
            ("conformance/expect", {"stream": "S", "consumer": "C", "consume": True}, lambda doc: doc["consume"]),
            ("conformance", {}, lambda doc: doc["watched"] is True),
            ("scenario/start", {"name": "leadership-change"}, lambda doc: doc["scenario"] == "leadership-change"),
            ("scenario/start", {"toml": 'name = "inline"\n'}, lambda doc: doc["scenario"] == "inline"),
            ("state", {}, lambda doc: "streams" in doc),
            ("reset", {"clients": False}, lambda doc: "streams_deleted" in doc),
            ("reset", {}, lambda doc: "streams_deleted" in doc),
        ]:
            for status, doc in await both(server, nc, path, body):
                assert status == 200 and check(doc), (path, body, doc)
        await nc.close()
        assert server.errors == []


async def test_the_python_api_reads_action_arguments_against_the_same_declaration() -> None:
    async with Server() as server:
        with pytest.raises(SchemaError, match='unknown field "nobody" in action/disconnect'):
            server.control.run("disconnect", {"nobody": 1})
        with pytest.raises(SchemaError, match='field "seconds" of action/advance_clock: expected a number'):
            server.control.run("advance_clock", {"seconds": "1"})
        assert server.control.run("disconnect", {"client": "all"}) == {"disconnected": []}


@pytest.mark.parametrize("name", list(ACTIONS))
def test_each_action_is_declared_as_its_method_takes_it(name: str) -> None:
    """Field names in the method's order, required where the method has no default, the same defaults."""
    parameters = list(inspect.signature(ACTIONS[name]).parameters.values())[1:]
    declared = ACTION_ARGUMENTS[name].fields
    assert [spec.name for spec in declared] == [parameter.name for parameter in parameters]
    for spec, parameter in zip(declared, parameters, strict=True):
        assert spec.required == (parameter.default is inspect.Parameter.empty), spec.name
        if not spec.required:
            assert spec.default == parameter.default, spec.name


def test_the_api_error_names_are_the_jetstream_failures() -> None:
    assert API_ERROR.choices == tuple(API_FAILURES)


def test_the_control_api_page_shows_the_declarations() -> None:
    """The page's reference is rendered from the declarations (python -m tests.fakejs.test_control_schema rewrites it)."""
    page = PAGE.read_text()
    expected = with_reference(page)
    diff = "".join(difflib.unified_diff(page.splitlines(True), expected.splitlines(True), "page", "declarations"))
    assert page == expected, diff


if __name__ == "__main__":  # pragma: no cover - rewrites the page's reference from the declarations
    PAGE.write_text(with_reference(PAGE.read_text()))
    sys.exit(0)
